# a TCP socket is refused: the OSError it raises
import socket
try:
    socket.socket()
    r = 'made'
except OSError as e:
    r = type(e).__name__
r, 1
