# SIGINT ignored, then a loop without end
import signal
signal.signal(signal.SIGINT, signal.SIG_IGN)
while True:
    pass
