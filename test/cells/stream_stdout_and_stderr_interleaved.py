# stdout and stderr written in turn, flushed and by os.write
import os, sys
sys.stdout.write('o1'); sys.stdout.flush()
sys.stderr.write('e1'); sys.stderr.flush()
os.write(1, b'\xff\x00o2')
os.write(2, b'e2\n')
print('o3')
7
