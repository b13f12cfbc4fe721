# local and remote iovecs of 64 bytes: buf here, the host's heap secret at HEAP_ADDR there
import ctypes
class iovec(ctypes.Structure):
    _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]
buf = ctypes.create_string_buffer(64)
local = iovec(ctypes.cast(buf, ctypes.c_void_p), 64)
remote = iovec(HEAP_ADDR, 64)
