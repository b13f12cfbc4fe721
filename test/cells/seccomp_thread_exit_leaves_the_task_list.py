# a thread started and joined: whether it leaves /proc/self/task within 5 s
import os, threading, time
before = len(os.listdir('/proc/self/task'))
t = threading.Thread(target=lambda: None)
t.start()
t.join()
deadline = time.monotonic() + 5
while len(os.listdir('/proc/self/task')) > before and time.monotonic() < deadline:
    time.sleep(0.01)
len(os.listdir('/proc/self/task')) == before
