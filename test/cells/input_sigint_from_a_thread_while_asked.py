# input() interrupted by a SIGINT the cell sends itself from a thread
import os, signal, threading
def sigint():
    os.kill(os.getpid(), signal.SIGINT)
threading.Timer(0.1, sigint).start()
try:
    got = input('1')
except KeyboardInterrupt:
    got = 'gave up'
got, input('2')
