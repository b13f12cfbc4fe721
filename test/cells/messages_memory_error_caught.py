# a 3 GiB bytearray past the memory limit, its MemoryError caught
try:
    big = bytearray(3 * 1024**3)
except MemoryError as e:
    caught = (type(e).__name__, str(e))
caught
