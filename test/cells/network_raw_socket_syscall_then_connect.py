# socket(2) and connect(2) by number to 127.0.0.1:PORT, then a write (after sc)
import ctypes, os
import socket, struct
fd = sc(41, socket.AF_INET, socket.SOCK_STREAM, 0)
addr = struct.pack('<HH4s8x', socket.AF_INET, socket.htons(PORT), socket.inet_aton('127.0.0.1'))
sc(42, fd, ctypes.c_char_p(addr), len(addr))
os.write(fd, b'exfiltrated')
