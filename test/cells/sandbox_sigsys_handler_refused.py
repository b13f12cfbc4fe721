# replacing the SIGSYS handler, by signal and by rt_sigaction, is refused
import ctypes, errno, signal
libc = ctypes.CDLL(None, use_errno=True)
try:
    signal.signal(signal.SIGSYS, lambda *a: None)
    r = 'replaced'
except OSError as e:
    r = errno.errorcode[e.errno]
act = (ctypes.c_char * 152)()
rc = libc.syscall(13, ctypes.c_long(31 | 1 << 32), act, None, 8)
r, rc, errno.errorcode[ctypes.get_errno()], signal.getsignal(signal.SIGSYS)
