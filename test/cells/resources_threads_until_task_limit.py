# small-stack threads until the task limit, counted
import threading, time
threading.stack_size(32768)
n = 0
try:
    while True:
        threading.Thread(target=time.sleep, args=(3600,),
                         daemon=True).start()
        n += 1
except RuntimeError as e:
    print(e)
n
