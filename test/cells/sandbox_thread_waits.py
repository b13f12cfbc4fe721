# starts sb_t, a daemon thread that waits on the event sb_ev (the next cell sets it and joins)
import threading
sb_ev = threading.Event()
sb_t = threading.Thread(target=sb_ev.wait, daemon=True)
sb_t.start()
