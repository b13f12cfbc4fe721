# defines call(name, args): the CALL frame of lib/proto.h, as a cell can build it
import struct
def call(name, args):
    p = struct.pack('=I', len(name)) + name + args
    return struct.pack('=II', 9, len(p)) + p
