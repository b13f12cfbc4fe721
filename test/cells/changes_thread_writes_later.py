# starts a thread that writes a file 0.3 s later
import threading, time
def late():
    time.sleep(0.3)
    open('late.txt', 'w').write('late')
threading.Thread(target=late, daemon=True).start()
