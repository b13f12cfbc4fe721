# a pipe whose owner (F_SETOWN) is HOST_PID, written with O_ASYNC: SIGIO to the host
import fcntl, os
r, w = os.pipe()
fcntl.fcntl(r, fcntl.F_SETOWN, HOST_PID)
fcntl.fcntl(r, fcntl.F_SETFL, fcntl.fcntl(r, fcntl.F_GETFL) | os.O_ASYNC)
os.write(w, b'x')
