# 200 writes of 1 MiB to stdout
import sys
chunk = 'y' * (1 << 20)
for _ in range(200):
    sys.stdout.write(chunk)
sys.stdout.flush()
'done'
