# a DNS query for example.com sent to 127.0.0.1:PORT, its answer read
import socket, struct
q = struct.pack('>HHHHHH', 0x1234, 0x0100, 1, 0, 0, 0)
q += b''.join(bytes([len(p)]) + p for p in (b'example', b'com')) + b'\0'
q += struct.pack('>HH', 1, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
s.sendto(q, ('127.0.0.1', PORT))
s.recv(512)
