# a SIGINT during a slow host call, then another call
import os, signal, threading
def sigint():
    os.kill(os.getpid(), signal.SIGINT)
threading.Timer(0.1, sigint).start()
try:
    got = slow()
except KeyboardInterrupt:
    got = 'gave up'
got, echo(2)['args']
