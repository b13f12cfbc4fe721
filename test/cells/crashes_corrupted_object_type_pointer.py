# a fresh object's ob_type set to NULL, then the object used
import ctypes
x = object()
ctypes.c_void_p.from_address(id(x) + ctypes.sizeof(ctypes.c_ssize_t)).value = None
repr(x)
