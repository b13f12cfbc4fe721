# SIGINT unblocked a cell after the one it came in: not interrupted
import signal, time
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
time.sleep(0.3)
'not interrupted'
