# A cell that makes itself the worker's main loop: it forges the RESULT
# of its cell on descriptor 3, reads the next RUN, which arms the host for
# that cell's checkpoint, and forks from the main thread as the checkpoint
# would. The host refuses the fork (the worker still has a child, this
# cell's checkpoint), and at the forged RESULT finds that child alive
# past its cell: the session ends, every process with it.
import ctypes
import os
import struct
import time

libc_loop = ctypes.CDLL(None, use_errno=True)


def answer(count, value):
    fields = struct.pack("=III", 7, 4, count) + struct.pack("=III", 1, 4, 0)
    fields += struct.pack("=II", 2, len(value)) + value
    os.write(3, struct.pack("=II", 3, len(fields)) + fields)


def read_exact(n):
    data = b""
    while len(data) < n:
        chunk = os.read(3, n - len(data))
        if not chunk:
            os._exit(9)
        data += chunk
    return data


answer(globals()["forge_count"], b"'forged'")
kind, length = struct.unpack("=II", read_exact(8))
count = struct.unpack("=II", read_exact(length)[:8])[0]
child = libc_loop.fork()
if child == 0:
    libc_loop.pause()
answer(count, repr(child).encode())
time.sleep(30)  # this cell goes on, and so does its checkpoint
