# clone3 with exit_signal SIGCHLD only by number; the child would touch ran_clone3 (after sc)
import ctypes, os
import signal, time
args = (ctypes.c_uint64 * 11)()
args[4] = int(signal.SIGCHLD)
pid = sc(435, ctypes.byref(args), ctypes.sizeof(args))
if pid == 0:
    open('ran_clone3', 'w').close()
    os._exit(0)
time.sleep(0.2)
