# A fatal cell: C code that writes where a malloc over the memory limit
# returned NULL.
import ctypes

libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
ctypes.memset(libc.malloc(1 << 40), 0, 1)
