# connections to what localhost resolves to, port PORT (after the resolver guard)
import socket
for fam, typ, proto, _, addr in socket.getaddrinfo('localhost', PORT,
                                                    type=socket.SOCK_STREAM):
    s = socket.socket(fam, typ, proto)
    s.settimeout(2)
    s.connect(addr)
    s.sendall(b'exfiltrated')
