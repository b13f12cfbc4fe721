# A glibc at-fork handler, registered through ctypes, that forks from the
# worker's main thread inside the checkpoint's fork, while the host
# approves it: the host finds a second process beside the checkpoint and
# ends the session.
import ctypes

libc_hook = ctypes.CDLL("libc.so.6", use_errno=True)
SYS_CLONE = 56
FORK_FLAGS = 0x01000000 | 0x00200000 | 17  # CHILD_SETTID | CHILD_CLEARTID | SIGCHLD


def prepare():
    if libc_hook.syscall(SYS_CLONE, FORK_FLAGS, 0, 0, 0, 0) == 0:
        libc_hook.pause()  # a process of the cell's own, if it got one


prepare_handler = ctypes.CFUNCTYPE(None)(prepare)
registered = libc_hook.__register_atfork(prepare_handler, None, None, None)  # pthread_atfork's
