# eight threads calling echo 50 times each: the replies that came back wrong
import threading
bad = []
def worker(t):
    for i in range(50):
        r = echo(t, i, pad='x' * (t * 100))
        if r['args'] != [t, i] or len(r['kwargs']['pad']) != t * 100:
            bad.append((t, i, r))
ts = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
for t in ts: t.start()
for t in ts: t.join()
bad
