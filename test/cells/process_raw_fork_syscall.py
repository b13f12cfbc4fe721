# fork(2) by number; the child would touch ran_rawfork (after sc)
import os
import time
pid = sc(57)
if pid == 0:
    open('ran_rawfork', 'w').close()
    os._exit(0)
time.sleep(0.2)
