# os.fork is refused: the OSError it raises
import os
try:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    r = 'forked'
except OSError as e:
    r = type(e).__name__
r, 0
