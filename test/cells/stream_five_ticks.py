# five ticks printed and flushed, a pause after each
import sys, time
for i in range(5):
    print('tick', i)
    sys.stdout.flush()
    time.sleep(0.3)
