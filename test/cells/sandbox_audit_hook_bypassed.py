# by libc past the audit hook: sockets, fork, kill of HOST_PID and, with LANDLOCK, a write to /tmp
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
def err(rc):
    return errno.errorcode.get(ctypes.get_errno(), rc) if rc == -1 else rc
res = [err(libc.socket(2, 1, 0)),  # AF_INET, SOCK_STREAM
       err(libc.socket(1, 1, 0)),  # AF_UNIX
       err(libc.syscall(57)),  # fork
       err(libc.kill(HOST_PID, 0))]  # the host
if LANDLOCK:
    res += [err(libc.open(b'/tmp/hook_bypass', os.O_WRONLY | os.O_CREAT, 0o600)),
            os.path.exists('/tmp/hook_bypass')]
res
