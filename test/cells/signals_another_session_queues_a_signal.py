# a real-time signal queued to itself, blocked: its count in SigQ
import signal, threading
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGRTMIN})
signal.pthread_kill(threading.get_ident(), signal.SIGRTMIN)
n = [l.split()[1] for l in open('/proc/self/status') if l.startswith('SigQ')]
signal.sigwait({signal.SIGRTMIN})
n[0]
