# a forbidden call with the signal stack taken away: the worker still dies
import ctypes
libc = ctypes.CDLL(None)
libc.sigaltstack((ctypes.c_long * 3)(0x1000, 0, 65536), None)
libc.syscall(101, 0, 0, 0, 0)
'survived'
