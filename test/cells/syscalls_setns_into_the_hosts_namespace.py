# setns into the host's mount namespace if it opens, else the worker's own UTS one (after sc)
import os
try:
    fd = os.open(f'/proc/{HOST_PID}/ns/mnt', os.O_RDONLY)
except OSError:
    fd = os.open('/proc/self/ns/uts', os.O_RDONLY)
sc(308, fd, 0)
