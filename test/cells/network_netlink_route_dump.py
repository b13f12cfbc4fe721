# an RTM_GETLINK dump asked of NETLINK_ROUTE
import socket, struct
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
s.bind((0, 0))
msg = struct.pack('=LHHLLBxxxiII', 32, 18, 0x301, 1, 0, 0, 0, 0, 0)
s.send(msg)
s.settimeout(2)
len(s.recv(65536)) > 0
