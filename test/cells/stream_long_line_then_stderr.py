# 10000 bytes of stdout without a newline, then stderr
import sys
sys.stdout.write('x' * 10000)
sys.stdout.flush()
sys.stderr.write('e')
