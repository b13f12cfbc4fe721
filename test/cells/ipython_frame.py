# defines fr(t, p), a frame of type t written to fd 3, fld(tag, b), u32(x), and n, the execution count
import os, struct
n = get_ipython().execution_count
def fr(t, p): os.write(3, struct.pack('=II', t, len(p)) + p)
def fld(tag, b): return struct.pack('=II', tag, len(b)) + b
def u32(x): return struct.pack('=I', x)
