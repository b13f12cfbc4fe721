# 40 writes of 64 KiB to stderr and stdout in turn
import os
b = b'o' * 65536
c = b'e' * 65536
for _ in range(40):
    os.write(2, c)
    os.write(1, b)
'ok'
