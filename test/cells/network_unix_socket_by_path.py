# a connection to the host's unix socket at SOCK_PATH, and a write
import socket
s = socket.socket(socket.AF_UNIX)
s.settimeout(2)
s.connect(SOCK_PATH)
s.sendall(b'exfiltrated')
