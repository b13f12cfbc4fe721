# perf_event_open of a software counter (type PERF_TYPE_SOFTWARE, size 128) on HOST_PID (after sc)
import ctypes
attr = (ctypes.c_uint32 * 32)()
attr[0] = 1
attr[1] = 128
sc(298, ctypes.byref(attr), HOST_PID, -1, -1, 0)
