# one thread started and joined
import threading
t = threading.Thread(target=int)
t.start()
t.join()
1
