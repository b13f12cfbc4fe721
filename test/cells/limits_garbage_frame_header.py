# a frame header of garbage written to the protocol's socket
import os
os.write(3, b'garbage!garbage!')
import time
time.sleep(0.2)
