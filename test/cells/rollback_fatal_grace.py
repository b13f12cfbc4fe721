# A fatal cell: SIGINT blocked, so the host's interrupt at the timeout
# never lands and the grace period runs out.
import signal
import time

signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])
time.sleep(60)
