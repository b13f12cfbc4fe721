# os.fork(); the child would touch ran_fork
import os, time
pid = os.fork()
if pid == 0:
    open('ran_fork', 'w').close()
    os._exit(0)
time.sleep(0.2)
