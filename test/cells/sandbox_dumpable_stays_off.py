# PR_SET_DUMPABLE back on is refused
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
rc = libc.prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE
rc, ctypes.get_errno()
