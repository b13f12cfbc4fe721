# __import__ from the outermost frame's builtins, then fork
import sys
f = sys._getframe()
while f.f_back is not None:
    f = f.f_back
posix = f.f_builtins['__import__']('posix')
pid = posix.fork()
if pid == 0:
    open('ran_frames', 'w').close()
    posix._exit(0)
