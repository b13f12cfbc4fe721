# A fatal cell: ptrace(2), which the seccomp filter traps.
import ctypes

ctypes.CDLL(None).syscall(101, 0, 0, 0, 0)
