# a thread that spins 0.3 s of its own CPU time
import threading, time
def spin():
    t = time.thread_time()
    while time.thread_time() - t < 0.3: pass
th = threading.Thread(target=spin)
th.start(); th.join()
