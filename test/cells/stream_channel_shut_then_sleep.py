# the protocol's socket shut down by the cell, then a sleep
import socket, time
channel = socket.socket(fileno=3)
channel.shutdown(socket.SHUT_WR)
time.sleep(1000)
