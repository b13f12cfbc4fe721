# A second and a half of CPU, then a fatal end.
import os
import time

start = time.process_time()
while time.process_time() - start < 1.5:
    pass
os._exit(1)
