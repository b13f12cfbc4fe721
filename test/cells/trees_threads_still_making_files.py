# threads left running that make, lock and remove directories in HOME and TMPDIR
import os, threading, time
def churn(base):
    os.makedirs(base, exist_ok=True)
    os.open(base, os.O_RDONLY)
    i = 0
    while True:
        try:
            os.makedirs(f'{base}/d{i}/e/f')
            for j in range(20):
                open(f'{base}/d{i}/e/{j}', 'w').close()
            if i % 3 == 0:
                os.chmod(f'{base}/d{i}', 0)
        except OSError:
            pass
        i += 1
for k in range(4):
    for d in (os.environ['HOME'], os.environ['TMPDIR']):
        threading.Thread(target=churn, args=(f'{d}/c{k}',), daemon=True).start()
time.sleep(0.2)
'made'
