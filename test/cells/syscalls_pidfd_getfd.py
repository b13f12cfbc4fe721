# pidfd_open(HOST_PID) then pidfd_getfd of its descriptor CANARY_FD, read (after sc)
import os
pidfd = sc(434, HOST_PID, 0)
fd = sc(438, pidfd, CANARY_FD, 0)
os.pread(fd, 100, 0)[:0]
