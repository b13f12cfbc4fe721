# vfork(2) by number; the child would make ran_vfork (after sc)
import os
import time
pid = sc(58)
if pid == 0:
    os.close(os.open('ran_vfork', os.O_CREAT | os.O_WRONLY, 0o644))
    os._exit(0)
time.sleep(0.2)
