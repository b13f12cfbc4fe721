# clone(CLONE_VM | CLONE_VFORK | SIGCHLD) by number; the child would make ran_clonevm (after sc)
import os
import signal, time
pid = sc(56, 0x100 | 0x4000 | int(signal.SIGCHLD), 0, 0, 0, 0)
if pid == 0:
    os.close(os.open('ran_clonevm', os.O_CREAT | os.O_WRONLY, 0o644))
    os._exit(0)
time.sleep(0.2)
