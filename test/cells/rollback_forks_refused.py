# Every way a cell can ask for a process in a session with rollback, from
# the main thread and from another: glibc's fork(), and clone(2) itself
# with fork()'s flags and with SIGCHLD alone. The host lets the
# checkpoint's fork through and nothing else: each gets EPERM.
import ctypes
import errno
import os
import threading

libc = ctypes.CDLL(None, use_errno=True)
SYS_CLONE = 56
FORK_FLAGS = 0x01000000 | 0x00200000 | 17  # CHILD_SETTID | CHILD_CLEARTID | SIGCHLD
ways = {
    "fork": lambda: libc.fork(),
    "clone_fork_flags": lambda: libc.syscall(SYS_CLONE, FORK_FLAGS, 0, 0, 0, 0),
    "clone_sigchld": lambda: libc.syscall(SYS_CLONE, 17, 0, 0, 0, 0),
}
outcomes = {}


def attempt(where):
    for name, way in ways.items():
        pid = way()
        if pid == 0:
            os._exit(0)  # a child: it must never exist
        outcomes[(where, name)] = (pid, ctypes.get_errno())


attempt("main")
helper = threading.Thread(target=attempt, args=("thread",))
helper.start()
helper.join()
sorted(set(outcomes.values())) == [(-1, errno.EPERM)], len(outcomes)
