# input() while a thread runs worker of functions_threads_call_at_once, calling echo
import threading
t = threading.Thread(target=worker, args=(3,))
t.start()
try:
    input()
except Exception as e:
    got = type(e).__name__
t.join()
got, bad
