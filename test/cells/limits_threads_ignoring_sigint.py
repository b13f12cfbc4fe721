# SIGINT ignored, threads writing output past the interrupt
import os, signal, threading, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
open('blob', 'wb').write(b'y' * (1 << 20))
def flood(fd):
    src = os.open('blob', os.O_RDONLY)
    while True:
        os.sendfile(fd, src, 0, 1 << 20)
for i in range(16):
    threading.Thread(target=flood, args=(1 + i % 2,), daemon=True).start()
time.sleep(1000)
