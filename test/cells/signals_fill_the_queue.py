# fills the queue of signals with blocked real-time ones sent to itself; defines queued(), its SigQ
import os, signal
rt = set(range(signal.SIGRTMIN, signal.SIGRTMAX + 1))
signal.pthread_sigmask(signal.SIG_BLOCK, rt)
for i in range(100000):
    os.kill(os.getpid(), signal.SIGRTMIN + i % len(rt))
def queued():
    return [l.split()[1] for l in open('/proc/self/status')
            if l.startswith('SigQ')][0]
