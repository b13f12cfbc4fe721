# signal 0 to the host (HOST_PID), pid 1, the process group and everyone, then to itself
import os
res = []
for pid in (HOST_PID, 1, 0, -1):
    try:
        os.kill(pid, 0)
        res.append('sent')
    except OSError as e:
        res.append(type(e).__name__)
os.kill(os.getpid(), 0)
res
