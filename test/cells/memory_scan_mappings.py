# readable mappings copied out by memmove, searched for PAIRS (after has, readable_regions)
import ctypes, gc, os
pairs = PAIRS
ca, cb = pairs[3]
planted = ca + cb  # the control, in memory
found = [False] * len(pairs)
scanned = 0
libc = ctypes.CDLL(None, use_errno=True)
CH = 1 << 20
buf = bytearray(CH + 64)
dst = ctypes.addressof((ctypes.c_char * len(buf)).from_buffer(buf))
r, w = os.pipe()
regions = readable_regions()
gc.disable()
for lo, hi in regions:
    pos = lo
    while pos < hi:
        n = min(hi - pos, CH + 64)
        if libc.write(w, ctypes.c_void_p(pos + n - 1), 1) != 1:
            break
        os.read(r, 1)
        ctypes.memmove(dst, pos, n)
        for i, pr in enumerate(pairs):
            found[i] = found[i] or has(buf, pr)
        scanned += n
        pos += CH
gc.enable()
os.close(r)
os.close(w)
found, scanned > 50 * 2**20
