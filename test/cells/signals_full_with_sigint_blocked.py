# queue full, SIGINT blocked: says so, waits, tells if SIGINT is pending (after the fill cell)
import signal, time
print('full', flush=True)
time.sleep(1.5)
print(queued(), signal.SIGINT in signal.sigpending())
