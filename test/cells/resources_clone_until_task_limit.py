# raw clone(2) threads (SYS_CLONE) that sleep, until the task limit: how many, and the errno
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
FLAGS = 0x100 | 0x200 | 0x400 | 0x800 | 0x10000 | 0x40000
stacks = (ctypes.c_uint64 * (4096 * 64))()
sleep = ctypes.cast(libc.sleep, ctypes.c_void_p).value
n, err = 0, None
while n < 4096 and err is None:
    top = (ctypes.addressof(stacks) + n * 512 + 448) & ~15
    ctypes.c_uint64.from_address(top).value = sleep
    if libc.syscall(ctypes.c_long(SYS_CLONE), ctypes.c_long(FLAGS), ctypes.c_void_p(top),
                    None, None, None) < 0:
        err = ctypes.get_errno()
    else:
        n += 1
n, err
