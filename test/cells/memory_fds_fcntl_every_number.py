# fcntl(F_GETFL) of every descriptor number below 1024: which are open
import fcntl
found = []
for fd in range(1024):
    try:
        fcntl.fcntl(fd, fcntl.F_GETFL)
        found.append(fd)
    except OSError:
        pass
found
