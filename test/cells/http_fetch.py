# fetch(): the frame _codeinterp.host_fetch takes, from a method, a URL, header lines and a body
import struct
def fetch(m, u, h=b'', b=b''):
    m, u = m.encode(), u.encode()
    return struct.pack('=III', len(m), len(u), len(h)) + m + u + h + b
