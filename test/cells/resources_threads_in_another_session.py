# 100 threads started and joined
import threading
ts = [threading.Thread(target=int) for i in range(100)]
for t in ts:
    t.start()
for t in ts:
    t.join()
len(ts)
