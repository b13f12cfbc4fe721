# daemon threads started until one is refused, counted
import threading, time
n = 0
try:
    while True:
        threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
        n += 1
except RuntimeError:
    pass
30 <= n < 40
