#!/usr/bin/python3
"""Writes fuzz/corpus/frames/: seed inputs for fuzz/fuzz_frames.c.

Each seed is what fuzz_frames.c reads (see its header comment): a mode
byte, a read schedule, then the bytes a worker writes on the channel in
proto.h's frame format (host byte order). Run from anywhere:

    /usr/bin/python3 fuzz/make_seeds.py

The output is deterministic; the generated files are checked in.
"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus", "frames")

# proto.h
PROTO_VERSION = 1
READY, RUN, RESULT, VIOLATION, SIGNALED = 1, 2, 3, 4, 5
(F_OUTCOME, F_VALUE, F_ENAME, F_EVALUE, F_TRACEBACK, F_FLAGS, F_COUNT, F_OUTPUTS,
 F_OMITTED) = range(1, 10)
OK, ERROR, MEMORY, INTERRUPT = range(4)
LAYER_ALL = 0x7FF
DISPLAY_DATA, EXECUTE_RESULT = 1, 2

# fuzz_frames.c's mode bits
WITH_READY = 1
RUN_LIMIT_1024 = 2

U32 = struct.Struct("=I")


def u32(v):
    return U32.pack(v)


def frame(ftype, payload, length=None):
    return u32(ftype) + u32(len(payload) if length is None else length) + payload


def field(tag, data):
    if isinstance(data, int):
        data = u32(data)
    if isinstance(data, str):
        data = data.encode("utf-8")
    return u32(tag) + u32(len(data)) + data


def output(otype, message, mime, data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    mime = mime.encode("ascii")
    return u32(otype) + u32(message) + u32(len(mime)) + u32(len(data)) + mime + data


def result(count=1, outcome=OK, *fields):
    return frame(RESULT, field(F_COUNT, count) + field(F_OUTCOME, outcome) + b"".join(fields))


def ready(version=PROTO_VERSION, layers=0x7F):
    return frame(READY, u32(version) + u32(layers))


def violation(nr, name):
    return frame(VIOLATION, u32(nr) + name.encode("ascii"))


def signaled(sig, length=None):
    return frame(SIGNALED, u32(sig), length)


def seed(mode, stream, schedule=b""):
    return bytes([mode, len(schedule)]) + schedule + stream


# A PNG's start: binary, with NUL bytes.
PNG = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x07\x00\x00\x00\x05"
       b"\x08\x02\x00\x00\x00\x8f\x9c\xa3\x10\x00\x00\x00\x00IEND\xaeB`\x82")
HTML = "<table><tr><th>q</th><td>\u00e9t\u00e9 \u2014 \U0001f4c8</td></tr></table>"
TRACEBACK = ('Traceback (most recent call last):\n  File "<cell 1>", line 1, in <module>\n'
             "ZeroDivisionError: division by zero\n")

OUTPUTS = (output(DISPLAY_DATA, 0, "image/png", PNG) +
           output(DISPLAY_DATA, 0, "text/plain", "<Figure size 640x480 with 1 Axes>") +
           output(DISPLAY_DATA, 1, "text/html", HTML) +
           output(DISPLAY_DATA, 2, "application/json", '{"a": [1, 2.5, null]}') +
           output(DISPLAY_DATA, 2, "image/svg+xml", "<svg xmlns='http://www.w3.org/2000/svg'/>") +
           output(DISPLAY_DATA, 3, "application/vnd.dataresource+json", '{"data": []}') +
           output(EXECUTE_RESULT, 4, "text/plain", "42"))

EVERY_FIELD = result(1, ERROR,
                     field(F_VALUE, "[1, 2, 3]"),
                     field(F_ENAME, "ZeroDivisionError"),
                     field(F_EVALUE, "division by zero"),
                     field(F_TRACEBACK, TRACEBACK),
                     field(F_FLAGS, 1),
                     field(F_OUTPUTS, OUTPUTS),
                     field(F_OMITTED, 2))

SEEDS = {
    # Well formed.
    "ready": seed(WITH_READY, ready()),
    "ready-all-layers": seed(WITH_READY, ready(layers=LAYER_ALL)),
    "ready-result-ok": seed(WITH_READY, ready() + result(1, OK, field(F_VALUE, "2"))),
    "result-every-field": seed(0, EVERY_FIELD),
    "result-every-field-split": seed(0, EVERY_FIELD, bytes([0x81, 1, 3, 0xC5, 7, 0x80, 2, 0])),
    "result-outputs": seed(0, result(1, OK, field(F_OUTPUTS, OUTPUTS))),
    "result-outputs-bytewise": seed(WITH_READY, ready() + result(1, OK, field(F_OUTPUTS, OUTPUTS)),
                                    bytes([1])),
    "result-memory": seed(0, result(1, MEMORY, field(F_ENAME, "MemoryError"))),
    "result-interrupt": seed(0, result(1, INTERRUPT, field(F_ENAME, "KeyboardInterrupt"),
                                       field(F_TRACEBACK, TRACEBACK))),
    "result-fields-reordered": seed(0, frame(RESULT, field(F_OMITTED, 0) + field(F_FLAGS, 0) +
                                             field(F_OUTCOME, OK) + field(F_COUNT, 1))),
    "result-at-limits": seed(0, result(1, OK,
                                       field(F_VALUE, "\u00e9" * 512),
                                       field(F_OUTPUTS, b"".join(
                                           output(DISPLAY_DATA, i, "application/octet-stream",
                                                  bytes([i]) * 1024) for i in range(4))))),
    "result-at-limits-1024": seed(RUN_LIMIT_1024, result(1, OK, field(F_OUTPUTS, output(
        DISPLAY_DATA, 0, "text/plain", "\U0001f600" * 256)))),
    "three-runs": seed(WITH_READY, ready() + result(1) + result(2, OK, field(F_VALUE, "'b'")) +
                       result(3, ERROR, field(F_ENAME, "NameError"))),
    "violation": seed(WITH_READY, ready() + violation(41, "socket")),
    # The longest name, then bytes that a one-byte-longer frame would take
    # in as a 33rd character.
    "violation-name-32": seed(0, violation(511, "abcdefghijklmnopqrstuvwxyz_01234") + b"z" * 8),
    "violation-then-eof-in-frame": seed(0, violation(57, "fork") + frame(RESULT, b"", 100)),
    "signaled": seed(WITH_READY, ready() + signaled(9)),
    "signaled-64": seed(0, signaled(64)),
    "empty-outputs": seed(0, result(1, OK, field(F_OUTPUTS, b""))),
    # Malformed: each is refused, the worker killed.
    "bad-ready-version": seed(WITH_READY, ready(version=2) + result(1)),
    "bad-ready-layers": seed(WITH_READY, ready(layers=0x800)),
    "bad-ready-length": seed(WITH_READY, frame(READY, u32(1) + u32(1) + b"\0")),
    "bad-ready-over-cap": seed(WITH_READY, frame(READY, b"", 65)),
    "bad-frame-over-cap": seed(0, frame(RESULT, b"", 0xFFFFFFFF)),
    "bad-frame-type": seed(0, frame(9, b"xyz")),
    "bad-truncated-header": seed(0, b"\x03\x00\x00\x00\x10"),
    "bad-repeated-field": seed(0, result(1, OK, field(F_VALUE, "1"), field(F_VALUE, "2"))),
    "bad-unknown-field": seed(0, result(1, OK, field(10, b""))),
    "bad-no-count": seed(0, frame(RESULT, field(F_OUTCOME, OK))),
    "bad-wrong-count": seed(0, result(7)),
    "bad-error-without-name": seed(0, result(1, ERROR)),
    "bad-outcome": seed(0, result(1, 4, field(F_ENAME, "X"))),
    "bad-flags": seed(0, result(1, OK, field(F_FLAGS, 2))),
    "bad-int-size": seed(0, frame(RESULT, field(F_COUNT, b"\1\0\0\0\0") + field(F_OUTCOME, OK))),
    "bad-text-nul": seed(0, result(1, OK, field(F_VALUE, b"a\0b"))),
    "bad-text-surrogate": seed(0, result(1, OK, field(F_VALUE, b"\xed\xa0\x80"))),
    "bad-text-overlong": seed(0, result(1, OK, field(F_VALUE, b"\xc0\xaf"))),
    "bad-text-over-limit": seed(0, result(1, OK, field(F_VALUE, "x" * 1025))),
    "bad-field-past-frame": seed(0, frame(RESULT, u32(F_VALUE) + u32(100) + b"abc")),
    "bad-output-mime-case": seed(0, result(1, OK, field(F_OUTPUTS, output(
        DISPLAY_DATA, 0, "Image/PNG", PNG)))),
    "bad-output-mime-no-slash": seed(0, result(1, OK, field(F_OUTPUTS, output(
        DISPLAY_DATA, 0, "textplain", "x")))),
    "bad-output-type": seed(0, result(1, OK, field(F_OUTPUTS, output(3, 0, "text/plain", "x")))),
    "bad-output-message-skips": seed(0, result(1, OK, field(F_OUTPUTS, output(
        DISPLAY_DATA, 0, "text/plain", "x") + output(DISPLAY_DATA, 2, "text/plain", "y")))),
    "bad-output-text-latin1": seed(0, result(1, OK, field(F_OUTPUTS, output(
        DISPLAY_DATA, 0, "text/html", b"caf\xe9")))),
    "bad-output-over-limit": seed(0, result(1, OK, field(F_OUTPUTS, output(
        DISPLAY_DATA, 0, "image/png", b"\0" * 1025)))),
    "bad-outputs-over-run-limit": seed(RUN_LIMIT_1024, result(1, OK, field(F_OUTPUTS, output(
        DISPLAY_DATA, 0, "image/png", b"\0" * 1000) + output(DISPLAY_DATA, 1, "image/png",
                                                            b"\0" * 100)))),
    "bad-output-truncated": seed(0, result(1, OK, field(F_OUTPUTS, output(
        DISPLAY_DATA, 0, "text/plain", "hello")[:-2]))),
    "bad-violation-name": seed(0, violation(41, "Socket")),
    "bad-violation-nr": seed(0, violation(512, "x")),
    "bad-violation-twice": seed(0, violation(41, "socket") + violation(42, "connect")),
    "bad-result-after-violation": seed(0, violation(41, "socket") + result(1)),
    "bad-signaled-zero": seed(0, signaled(0)),
    "bad-signaled-65": seed(0, signaled(65)),
    "bad-signaled-length": seed(0, frame(SIGNALED, b"\x09\x00")),
    "bad-signaled-twice": seed(0, signaled(15) + signaled(9)),
    "bad-result-after-signaled": seed(0, signaled(6) + result(1)),
    "bad-ready-in-run": seed(WITH_READY, ready() + ready()),
}


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, data in sorted(SEEDS.items()):
        assert len(data) <= 65536, name
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    print(f"wrote {len(SEEDS)} seeds to {os.path.relpath(OUT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
