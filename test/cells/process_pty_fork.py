# pty.fork(); the child would touch ran_ptyfork
import os, pty, time
pid, fd = pty.fork()
if pid == 0:
    open('ran_ptyfork', 'w').close()
    os._exit(0)
time.sleep(0.2)
