# readable mappings read by /proc/self/mem, searched for PAIRS (after has, readable_regions)
import os
pairs = PAIRS
ca, cb = pairs[3]
planted = ca + cb
found = [False] * len(pairs)
scanned = 0
regions = readable_regions()
try:
    fd = os.open('/proc/self/mem', os.O_RDONLY)
except PermissionError:
    fd = None
for lo, hi in regions if fd is not None else []:
    pos = lo
    while pos < hi:
        n = min(hi - pos, 1 << 22)
        try:
            chunk = os.pread(fd, min(n + 64, hi - pos), pos)
        except OSError:
            break
        scanned += len(chunk)
        for i, pr in enumerate(pairs):
            found[i] = found[i] or has(chunk, pr)
        del chunk
        pos += n
if fd is not None:
    os.close(fd)
(found, scanned > 50 * 2**20) if fd is not None else 'unreadable'
