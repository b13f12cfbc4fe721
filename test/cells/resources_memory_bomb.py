# 128 MiB numpy arrays until the memory limit
import numpy
hoard = []
def bomb():
    while True:
        hoard.append(numpy.ones(2**24))
try:
    bomb()
finally:
    n = len(hoard)
    hoard.clear()
