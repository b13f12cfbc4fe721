#!/usr/bin/python3
"""A fake codeinterp-worker that sends the rich outputs a cell spells out.

For the bindings' tests of what a host makes of outputs (the MCP server's
folding of display updates and clears, a binding's accessors), apart from
what the real worker's runner does. Named by $CODEINTERP_WORKER, it says
READY on descriptor 3 and answers each RUN with a RESULT (lib/proto.h)
whose OUTPUTS field is the cell's source read as JSON: a list of
[type, message, wait, display_id, mime, data], type a ci_output_type
number, display_id a string or null, data a string sent as UTF-8. A cell
that is not such a list gets a RESULT without outputs. It checks nothing:
the host's decoder is what refuses a bad list.
"""
import json
import os
import struct
import sys

# lib/proto.h
PROTO_VERSION = 7
READY, RUN, RESULT = 1, 2, 3
F_OUTCOME, F_COUNT, F_OUTPUTS = 1, 7, 8
FLAG_WAIT = 1
LAYER_ALL = 0x7FF
CHANNEL = 3
NO_LISTENER = 0xFFFFFFFF  # READY: no seccomp listener (no rollback)


def send(ftype, payload):
    data = struct.pack("=II", ftype, len(payload)) + payload
    while data:
        data = data[os.write(CHANNEL, data):]


def read_exact(n):
    data = b""
    while len(data) < n:
        chunk = os.read(CHANNEL, n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def field(tag, data):
    return struct.pack("=II", tag, len(data)) + data


def output(otype, message, wait, display_id, mime, data):
    ident = (display_id or "").encode("utf-8")
    mime = mime.encode("ascii")
    data = data.encode("utf-8")
    return (struct.pack("=6I", otype, message, FLAG_WAIT if wait else 0, len(ident), len(mime),
                        len(data)) + mime + data + ident)


def outputs_of(code):
    try:
        return b"".join(output(*o) for o in json.loads(code))
    except (ValueError, TypeError):
        return b""


def main():
    send(READY, struct.pack("=III", PROTO_VERSION, LAYER_ALL, NO_LISTENER))
    while True:
        header = read_exact(8)
        if header is None:
            return 0
        ftype, length = struct.unpack("=II", header)
        payload = read_exact(length)
        # A RUN: u32 count, u32 flags, the source.
        if ftype != RUN or payload is None or length < 8:
            return 1
        send(RESULT, field(F_COUNT, payload[:4]) + field(F_OUTCOME, struct.pack("=I", 0)) +
             field(F_OUTPUTS, outputs_of(payload[8:].decode("utf-8", "replace"))))


if __name__ == "__main__":
    sys.exit(main())
