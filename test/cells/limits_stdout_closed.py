# writes, then closes stdout, then writes to stderr
import os, sys
os.write(1, b'last words')
os.close(1)
sys.stderr.write('err still open')
'closed'
