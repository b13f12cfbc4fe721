# prints go, flushes, loops without end
import sys
print('go')
sys.stdout.flush()
while True: pass
