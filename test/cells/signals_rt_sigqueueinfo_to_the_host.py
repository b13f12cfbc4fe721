# rt_sigqueueinfo of SIGTERM to HOST_PID, by number (after sc)
import ctypes
import signal
info = (ctypes.c_int * 32)(int(signal.SIGTERM), 0, -1)
sc(129, HOST_PID, int(signal.SIGTERM), ctypes.byref(info))
