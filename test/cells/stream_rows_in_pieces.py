# rows written in pieces, a pause between
import os, time
os.write(1, b'row 0\nrow 1')
time.sleep(0.3)
os.write(1, b' rest\nrow 2\n')
