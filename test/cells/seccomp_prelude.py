# defines p(nr, *args), a raw system call's "ok" or errno name, p_reset(nr), and the probes' values
import ctypes, errno, os, signal, threading
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def p(nr, *args):
    try:
        ctypes.set_errno(0)
        rc = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    except Exception as e:
        return 'python:' + type(e).__name__
    if rc != -1:
        return 'ok'
    e = ctypes.get_errno()
    return errno.errorcode.get(e, str(e))
# restart_syscall runs the calling thread's restart block: the last poll,
# nanosleep or clock_nanosleep that a stop signal interrupted, kept after
# the call resumed and returned, and copied into every thread that thread
# starts. The host stops the worker between cells (lib/cpu.c), so the
# main thread's block may be the poll(-1) it waited for this cell in, over
# a pollfd its stack has reused since: on an open descriptor with no
# events that poll waits until the cell's timeout. A handled signal's
# return (rt_sigreturn) resets the block, so after one the call answers
# EINTR at once, and only the filter can make it anything else.
def p_reset(nr):
    old = signal.signal(signal.SIGWINCH, lambda *a: None)
    try:
        signal.raise_signal(signal.SIGWINCH)
        return p(nr)
    finally:
        signal.signal(signal.SIGWINCH, old)
# The host by its own pid: os.getppid() is 0 in a PID namespace of the
# worker's own.
me, parent, tid = os.getpid(), HOST_PID, threading.get_native_id()
NOPID = 0x3fffffff  # above PID_MAX_LIMIT: no such process
BADSIG = 999  # past _NSIG: EINVAL before any permission check
HIGH = 1 << 32  # a bit the kernel drops from an int argument
um = os.umask(0o77)
os.umask(um)
