# an AF_PACKET raw socket, made
import socket
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.settimeout(1)
'packet socket made'
