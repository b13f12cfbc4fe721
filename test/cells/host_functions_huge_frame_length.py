# a frame header whose length would have the host allocate 4 GiB
import os, struct, time
os.write(3, struct.pack('=II', 9, 0xFFFFFFF0))
time.sleep(5)
