# AF_UNIX, UDP and IPv6 sockets are refused: the OSError each raises
import socket
res = []
for fam, typ in [(socket.AF_UNIX, socket.SOCK_STREAM),
                 (socket.AF_INET, socket.SOCK_DGRAM),
                 (socket.AF_INET6, socket.SOCK_STREAM)]:
    try:
        socket.socket(fam, typ)
        res.append('made')
    except OSError as e:
        res.append(type(e).__name__)
res[0], res[1:] == res[:1] * 2
