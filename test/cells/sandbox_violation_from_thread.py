# ptrace from a thread the cell started
import ctypes, threading
t = threading.Thread(target=ctypes.CDLL(None).syscall,
                     args=(101, 0, 0, 0, 0))
t.start()
t.join()
