# session directory names in the writable mappings: its own found, whether one of CRC-32 NAME_CRC is
import ctypes, os, re, zlib
names = set()
with open('/proc/self/maps') as m:
    for line in m:
        f = line.split()
        kernel = len(f) > 5 and f[5].startswith('[v')
        if not f[1].startswith('rw') or kernel:
            continue
        lo, hi = (int(x, 16) for x in f[0].split('-'))
        data = ctypes.string_at(lo, hi - lo)
        names.update(re.findall(rb'codeinterp-[A-Za-z0-9]{6}', data))
own = os.path.basename(os.path.dirname(os.getcwd())).encode()
(own in names, [n for n in names if zlib.crc32(n) == NAME_CRC])
