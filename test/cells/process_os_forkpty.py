# os.forkpty(); the child would touch ran_forkpty
import os, time
pid, fd = os.forkpty()
if pid == 0:
    open('ran_forkpty', 'w').close()
    os._exit(0)
time.sleep(0.2)
