# the host's secrets ENV_PAIR, NAME_PAIR, ARG_PAIR in each form of environ and argv (after has)
import ctypes, os, sys
env = ctypes.POINTER(ctypes.c_char_p).in_dll(ctypes.CDLL(None), 'environ')
c_env, i = [], 0
while env[i] is not None:
    c_env.append(env[i])
    i += 1
# Unreadable to a worker that is not dumpable and not root.
def own_environ():
    try:
        return open('/proc/self/environ', 'rb').read()
    except PermissionError:
        return b''
forms = [b'\0'.join(c_env),
         b'\0'.join(k + b'=' + v for k, v in os.environb.items()),
         own_environ(),
         open('/proc/self/cmdline', 'rb').read(),
         '\0'.join(sys.argv + sys.orig_argv).encode()]
[has(f, p) for f in forms for p in (ENV_PAIR, NAME_PAIR, ARG_PAIR)]
