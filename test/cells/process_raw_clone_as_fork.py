# clone(SIGCHLD) by number; the child would touch ran_clone (after sc)
import os
import signal, time
pid = sc(56, int(signal.SIGCHLD), 0, 0, 0, 0)
if pid == 0:
    open('ran_clone', 'w').close()
    os._exit(0)
time.sleep(0.2)
