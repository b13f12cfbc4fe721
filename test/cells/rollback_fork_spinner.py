# A thread that asks for a process over and over, left running into the
# next cells, whose checkpoints are forked meanwhile: it must never get
# one (the host approves the main thread's fork alone). It pauses a
# millisecond between tries: glibc runs one fork at a time, and a thread
# that forks without pause keeps the checkpoint's from ever starting.
import ctypes
import os
import threading
import time

libc_spin = ctypes.CDLL(None, use_errno=True)
spin_forks = {"tries": 0, "children": 0}
spin_stop = threading.Event()


def spin():
    while not spin_stop.is_set():
        pid = libc_spin.fork()
        if pid == 0:
            os._exit(0)
        spin_forks["tries"] += 1
        if pid > 0:
            spin_forks["children"] += 1
        time.sleep(0.001)


threading.Thread(target=spin, daemon=True).start()
