# TIOCSTI and F_SETOWN, which the filter refuses
import fcntl, os, termios
res = []
for f in (lambda: fcntl.ioctl(0, termios.TIOCSTI, b'x'),
          lambda: fcntl.fcntl(1, fcntl.F_SETOWN, os.getpid())):
    try:
        f()
        res.append('done')
    except OSError as e:
        res.append(type(e).__name__)
res
