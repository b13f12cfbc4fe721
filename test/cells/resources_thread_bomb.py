# threads that never end, until no more can start
import threading, time
while True:
    threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
