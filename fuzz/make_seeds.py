#!/usr/bin/python3
"""Writes fuzz/corpus/frames/: seed inputs for fuzz/fuzz_frames.c.

Each seed is what fuzz_frames.c reads (see its header comment): a mode
byte, a read schedule, then the bytes a worker writes on the channel in
proto.h's frame format (host byte order). Run from anywhere:

    /usr/bin/python3 fuzz/make_seeds.py

The output is deterministic; the generated files are checked in.
"""
import hashlib
import os
import pickle
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus", "frames")

# proto.h
PROTO_VERSION = 7
(READY, RUN, RESULT, VIOLATION, SIGNALED, INPUT_REQUEST, INPUT_REPLY, FUNCTIONS, CALL,
 CALL_REPLY, NETWORK, FETCH, FETCH_REPLY, INSTALL, INSTALL_REPLY, ROLLED_BACK,
 ENDED) = range(1, 18)
READY_NO_LISTENER = 0xFFFFFFFF
INSTALL_LIST, INSTALL_WHEEL = 1, 2
INPUT_FLAG_PASSWORD = 1
INPUT_PROMPT_MAX = 4096
(F_OUTCOME, F_VALUE, F_ENAME, F_EVALUE, F_TRACEBACK, F_FLAGS, F_COUNT, F_OUTPUTS,
 F_OMITTED, F_TRACEBACK_FULL, F_REFUSALS, F_STATE, F_PACKAGES, F_LEFT_OUT) = range(1, 15)
RUN_COUNT_INTERNAL = 0x80000000
PACKAGES_MAX = 1048576
REFUSAL_NETWORK, REFUSAL_PATH, REFUSAL_MODE = 1, 5, 6
REFUSALS_MAX = 32
OK, ERROR, MEMORY, INTERRUPT = range(4)
LAYER_ALL = 0x1FFF
DISPLAY_DATA, EXECUTE_RESULT, UPDATE_DISPLAY_DATA, CLEAR_OUTPUT = 1, 2, 3, 4
FLAG_WAIT = 1
DISPLAY_ID_MAX = 255

# fuzz_frames.c's mode bits
WITH_READY = 1
RUN_LIMIT_1024 = 2
WITH_INPUT = 4
WITH_FUNCTIONS = 8  # the host functions "echo" and "f"; call limits of 1024 bytes
CALL_LIMIT = 1024
WITH_URLS = 16  # the URLs under http://127.0.0.1:9/v1/; a request limit of 1024 bytes
URL_REQUEST_LIMIT = 1024
SNAPSHOT_RUNS = 32  # SNAPSHOT runs, counted from RUN_COUNT_INTERNAL | 1; a state cap of 4096
SNAP_STATE_CAP = 4096
SNAPSHOT_BYTES = 64  # the rest is a snapshot's bytes (docs/snapshot-format.md)

# docs/snapshot-format.md: little-endian, whatever the machine.
SNAP_MAGIC = b"\x89CISNAP\n"
S_PACKAGES, S_COUNT, S_STATE, S_LEFT_OUT, S_DIR, S_FILE = range(1, 7)

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


def output(otype, message, mime, data, display_id=b"", flags=0):
    """One output: the header of six u32, then MIME type, data, display id."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    if isinstance(display_id, str):
        display_id = display_id.encode("utf-8")
    mime = mime.encode("ascii")
    return (u32(otype) + u32(message) + u32(flags) + u32(len(display_id)) + u32(len(mime)) +
            u32(len(data)) + mime + data + display_id)


def refusals(left_out, *entries):
    """A REFUSALS field's payload: the count left out, then (kind, times,
    detail) entries."""
    out = u32(left_out)
    for kind, times, detail in entries:
        if isinstance(detail, str):
            detail = detail.encode("utf-8")
        out += u32(kind) + u32(times) + u32(len(detail)) + detail
    return out


def clear(message, wait=False):
    return output(CLEAR_OUTPUT, message, "", b"", flags=FLAG_WAIT if wait else 0)


def result(count=1, outcome=OK, *fields):
    return frame(RESULT, field(F_COUNT, count) + field(F_OUTCOME, outcome) + b"".join(fields))


def ready(version=PROTO_VERSION, layers=0x7F, listener=READY_NO_LISTENER):
    return frame(READY, u32(version) + u32(layers) + u32(listener))


def violation(nr, name):
    return frame(VIOLATION, u32(nr) + name.encode("ascii"))


def signaled(sig, length=None):
    return frame(SIGNALED, u32(sig), length)


def input_request(flags, prompt):
    if isinstance(prompt, str):
        prompt = prompt.encode("utf-8")
    return frame(INPUT_REQUEST, u32(flags) + prompt)


def call(name, args):
    if isinstance(name, str):
        name = name.encode("utf-8")
    if isinstance(args, str):
        args = args.encode("utf-8")
    return frame(CALL, u32(len(name)) + name + args)


def fetch(method, url, head=b"", body=b"", lengths=None):
    method, url = method.encode(), url.encode()
    ml, ul, hl = lengths or (len(method), len(url), len(head))
    return frame(FETCH, u32(ml) + u32(ul) + u32(hl) + method + url + head + body)


def seed(mode, stream, schedule=b""):
    return bytes([mode, len(schedule)]) + schedule + stream


def snap_result(run=1, outcome=OK, *fields):
    """The RESULT of the SNAPSHOT run @run (its count has RUN_COUNT_INTERNAL)."""
    return result(RUN_COUNT_INTERNAL | run, outcome, *fields)


def le32(v):
    return struct.pack("<I", v)


def section(stype, data, length=None, reserved=0):
    """A snapshot's section: u32 type, u32 0, u64 length, the contents."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return le32(stype) + le32(reserved) + struct.pack("<Q", len(data) if length is None
                                                      else length) + data


def snap_dir(path, mode=0o700):
    if isinstance(path, str):
        path = path.encode("utf-8")
    return section(S_DIR, le32(mode) + path)


def snap_file(path, data=b"", mode=0o600, path_len=None):
    if isinstance(path, str):
        path = path.encode("utf-8")
    if isinstance(data, str):
        data = data.encode("utf-8")
    return section(S_FILE, le32(mode) + le32(len(path) if path_len is None else path_len) +
                   path + data)


def snapshot(*sections, version=1, flags=0, good_hash=True):
    """The magic, version and flags, the sections, and the SHA-256 of all
    that (or 32 zero bytes)."""
    body = SNAP_MAGIC + le32(version) + le32(flags) + b"".join(sections)
    return body + (hashlib.sha256(body).digest() if good_hash else bytes(32))


# A PNG's start: binary, with NUL bytes.
PNG = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x07\x00\x00\x00\x05"
       b"\x08\x02\x00\x00\x00\x8f\x9c\xa3\x10\x00\x00\x00\x00IEND\xaeB`\x82")
HTML = "<table><tr><th>q</th><td>\u00e9t\u00e9 \u2014 \U0001f4c8</td></tr></table>"
TRACEBACK = ('Traceback (most recent call last):\n  File "<cell 1>", line 1, in <module>\n'
             "ZeroDivisionError: division by zero\n")
# A traceback whose library frames were folded, and the whole one.
FOLDED = ('Traceback (most recent call last):\n  File "<cell 2>", line 1, in <module>\n'
          "    ... 2 frames in json/__init__.py, json/decoder.py ...\n"
          '  File "/usr/lib/python3.11/json/decoder.py", line 355, in raw_decode\n'
          "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)\n")
WHOLE = FOLDED.replace("    ... 2 frames in json/__init__.py, json/decoder.py ...\n",
                       '  File "/usr/lib/python3.11/json/__init__.py", line 346, in loads\n'
                       '  File "/usr/lib/python3.11/json/decoder.py", line 337, in decode\n')

OUTPUTS = (output(DISPLAY_DATA, 0, "image/png", PNG) +
           output(DISPLAY_DATA, 0, "text/plain", "<Figure size 640x480 with 1 Axes>") +
           output(DISPLAY_DATA, 1, "text/html", HTML) +
           output(DISPLAY_DATA, 2, "application/json", '{"a": [1, 2.5, null]}') +
           output(DISPLAY_DATA, 2, "image/svg+xml", "<svg xmlns='http://www.w3.org/2000/svg'/>") +
           output(DISPLAY_DATA, 3, "application/vnd.dataresource+json", '{"data": []}') +
           output(EXECUTE_RESULT, 4, "text/plain", "42"))

# display(HTML, display_id='bar'); h.update('50%'); clear_output(wait=True);
# display('done') with a made-up id; clear_output(); a DataFrame as the value.
DISPLAYS = (output(DISPLAY_DATA, 0, "text/html", "<progress value=0>", "bar") +
            output(DISPLAY_DATA, 0, "text/plain", "'0%'", "bar") +
            output(UPDATE_DISPLAY_DATA, 1, "text/plain", "'50%'", "bar") +
            clear(2, wait=True) +
            output(DISPLAY_DATA, 3, "text/plain", "'done'", "7f3e2a1b9c0d4e5f\u00e9") +
            clear(4) +
            output(EXECUTE_RESULT, 5, "text/html", HTML))

EVERY_FIELD = result(1, ERROR,
                     field(F_VALUE, "[1, 2, 3]"),
                     field(F_ENAME, "ZeroDivisionError"),
                     field(F_EVALUE, "division by zero"),
                     field(F_TRACEBACK, TRACEBACK),
                     field(F_FLAGS, 1),
                     field(F_OUTPUTS, OUTPUTS),
                     field(F_OMITTED, 2))

# A snapshot's parts as the worker and the host write them.
PACKAGES = ("python 3.11.2 cpython-311 x86_64\nmatplotlib 3.6.3\nnumpy 1.24.2\n"
            "pandas 1.5.3\nscipy 1.10.1\n")
STATE = pickle.dumps({"format": 1, "names": {"x": 42, "name": "caf\u00e9"}, "out": {1: 42},
                      "in": ["", "x = 42"], "count": 7, "generators": {}}, protocol=5)
LEFT_OUT = ("gen: a generator in flight\nf: a file object\nOut[3]: TypeError: cannot pickle "
            "'_thread.lock' object\nlink: a symbolic link\ncaf??.txt: a file with more than "
            "one hard link\n")
HEAD = section(S_PACKAGES, PACKAGES) + section(S_COUNT, le32(7)) + section(S_STATE, STATE)
ENTRIES = (snap_dir("data") + snap_file("data/q1.csv", "dept,amount\nops,12.5\n") +
           snap_dir("data/raw") + snap_file("data/raw/x.bin", PNG) +
           snap_file("run.sh", "#!/bin/sh\necho hi\n", mode=0o700) + snap_file("empty") +
           snap_file(b"caf\xc3\xa9 \xff\x01.txt", "latin, control and invalid UTF-8 bytes") +
           snap_dir(".hidden") + snap_file(".hidden/..x", "dots are fine in a longer name"))
DEEP = "/".join(["d"] * 64)  # the deepest path, and then the longest
LONG = "/".join([c * 255 for c in "abcdefghijklmnop"])
assert len(LONG) == 4095
SNAP_RESULT = snap_result(1, OK, field(F_STATE, STATE), field(F_PACKAGES, PACKAGES),
                          field(F_LEFT_OUT, LEFT_OUT))

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
    "result-traceback-folded": seed(0, result(1, ERROR, field(F_ENAME, "JSONDecodeError"),
                                              field(F_TRACEBACK, FOLDED),
                                              field(F_TRACEBACK_FULL, WHOLE))),
    "result-refusals": seed(0, result(1, OK, field(F_REFUSALS, refusals(
        3, (REFUSAL_PATH, 2, "read /etc/shadow"), (REFUSAL_NETWORK, 1, "socket AF_INET SOCK_STREAM"),
        (REFUSAL_MODE, 1, "os.chmod 'f' mode=0o644"))))),
    "result-refusals-at-limits": seed(0, result(1, OK, field(F_REFUSALS, refusals(
        7, *[(REFUSAL_PATH, 0xFFFFFFFF, "\u00e9" * 256) for _ in range(REFUSALS_MAX)])))),
    "result-refusals-bad": seed(0, result(1, OK, field(F_REFUSALS, refusals(
        0, (REFUSAL_PATH, 1, "read /etc"), (0, 1, "x"), (REFUSAL_PATH, 0, "y"),
        (REFUSAL_PATH, 1, "nul\0"))))),
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
    "result-display-ids": seed(0, result(1, OK, field(F_OUTPUTS, DISPLAYS))),
    "result-display-ids-bytewise": seed(0, result(1, OK, field(F_OUTPUTS, DISPLAYS)), bytes([1])),
    "result-display-id-255": seed(0, result(1, OK, field(F_OUTPUTS, output(
        UPDATE_DISPLAY_DATA, 0, "text/plain", "x", "\u00e9" * 127 + "i")))),
    "result-clear-only": seed(0, result(1, OK, field(F_OUTPUTS, clear(0) + clear(1, wait=True)))),
    "input-request": seed(WITH_INPUT, input_request(0, "n? ") + result(1, OK, field(F_VALUE, "84"))),
    "input-requests-at-limits": seed(WITH_INPUT, input_request(INPUT_FLAG_PASSWORD, "")
                                     + input_request(0, "\u00e9" * (INPUT_PROMPT_MAX // 2))
                                     + result(1)),
    "input-request-bytewise": seed(WITH_READY | WITH_INPUT, ready() + input_request(0, "n? ")
                                   + result(1) + input_request(1, "Password: ") + result(2),
                                   bytes([1])),
    # Malformed: each is refused, the worker killed.
    "bad-ready-version": seed(WITH_READY, ready(version=1) + result(1)),
    "bad-ready-layers": seed(WITH_READY, ready(layers=LAYER_ALL + 1)),
    "bad-ready-length": seed(WITH_READY, frame(READY, u32(1) + u32(1) + b"\0")),
    "bad-ready-over-cap": seed(WITH_READY, frame(READY, b"", 65)),
    "bad-frame-over-cap": seed(0, frame(RESULT, b"", 0xFFFFFFFF)),
    "bad-frame-type": seed(0, frame(9, b"xyz")),
    "bad-truncated-header": seed(0, b"\x03\x00\x00\x00\x10"),
    "bad-repeated-field": seed(0, result(1, OK, field(F_VALUE, "1"), field(F_VALUE, "2"))),
    "bad-unknown-field": seed(0, result(1, OK, field(F_LEFT_OUT + 1, b""))),
    "bad-traceback-full-alone": seed(0, result(1, ERROR, field(F_ENAME, "JSONDecodeError"),
                                              field(F_TRACEBACK_FULL, WHOLE))),
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
    "bad-output-type": seed(0, result(1, OK, field(F_OUTPUTS, output(5, 0, "text/plain", "x")))),
    "bad-output-update-without-id": seed(0, result(1, OK, field(F_OUTPUTS, output(
        UPDATE_DISPLAY_DATA, 0, "text/plain", "x")))),
    "bad-output-id-on-execute-result": seed(0, result(1, OK, field(F_OUTPUTS, output(
        EXECUTE_RESULT, 0, "text/html", "x", "d")))),
    "bad-output-id-on-clear": seed(0, result(1, OK, field(F_OUTPUTS, output(
        CLEAR_OUTPUT, 0, "", "", "d")))),
    "bad-output-id-nul": seed(0, result(1, OK, field(F_OUTPUTS, output(
        DISPLAY_DATA, 0, "text/plain", "x", b"d\0e")))),
    "bad-output-id-surrogate": seed(0, result(1, OK, field(F_OUTPUTS, output(
        UPDATE_DISPLAY_DATA, 0, "text/plain", "x", b"\xed\xa0\x80")))),
    "bad-output-id-256": seed(0, result(1, OK, field(F_OUTPUTS, output(
        UPDATE_DISPLAY_DATA, 0, "text/plain", "x", "i" * (DISPLAY_ID_MAX + 1))))),
    "bad-output-wait-on-display": seed(0, result(1, OK, field(F_OUTPUTS, output(
        DISPLAY_DATA, 0, "text/plain", "x", flags=FLAG_WAIT)))),
    "bad-output-unknown-flag": seed(0, result(1, OK, field(F_OUTPUTS, output(
        CLEAR_OUTPUT, 0, "", "", flags=2)))),
    "bad-output-clear-with-data": seed(0, result(1, OK, field(F_OUTPUTS, output(
        CLEAR_OUTPUT, 0, "", "x", flags=FLAG_WAIT)))),
    "bad-output-clear-with-mime": seed(0, result(1, OK, field(F_OUTPUTS, output(
        CLEAR_OUTPUT, 0, "text/plain", "")))),
    "bad-output-clear-twice-in-a-message": seed(0, result(1, OK, field(F_OUTPUTS,
                                                                      clear(0) + clear(0)))),
    "bad-output-mixed-types": seed(0, result(1, OK, field(F_OUTPUTS, output(
        DISPLAY_DATA, 0, "text/html", "x", "d") + output(UPDATE_DISPLAY_DATA, 0, "text/plain",
                                                         "x", "d")))),
    "bad-output-mixed-ids": seed(0, result(1, OK, field(F_OUTPUTS, output(
        DISPLAY_DATA, 0, "text/html", "x", "d") + output(DISPLAY_DATA, 0, "text/plain", "x",
                                                         "e")))),
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
    "ended-killed": seed(0, frame(ENDED, u32(9) + u32(0) + struct.pack("=Q", 1500))),
    "bad-ended-length": seed(0, frame(ENDED, u32(9) + u32(0))),
    "bad-ended-status": seed(0, frame(ENDED, u32(0x10000) + u32(0) + struct.pack("=Q", 0))),
    "bad-signaled-length": seed(0, frame(SIGNALED, b"\x09\x00")),
    "bad-signaled-twice": seed(0, signaled(15) + signaled(9)),
    "bad-result-after-signaled": seed(0, signaled(6) + result(1)),
    "bad-ready-in-run": seed(WITH_READY, ready() + ready()),
    "bad-input-request-without-flag": seed(0, input_request(0, "n? ") + result(1)),
    "bad-input-request-4097": seed(WITH_INPUT, input_request(0, "p" * (INPUT_PROMPT_MAX + 1))),
    "bad-input-request-short": seed(WITH_INPUT, frame(INPUT_REQUEST, b"\0\0")),
    "bad-input-request-flags": seed(WITH_INPUT, input_request(2, "n? ")),
    "bad-input-request-nul": seed(WITH_INPUT, input_request(0, b"n\0")),
    "bad-input-request-overlong": seed(WITH_INPUT, input_request(0, b"\xc0\xaf")),
    "bad-input-request-after-violation": seed(WITH_INPUT, violation(41, "socket")
                                              + input_request(0, "n? ")),
    "bad-input-reply-from-worker": seed(WITH_INPUT, frame(INPUT_REPLY, u32(0) + b"42")),
    "call-echo": seed(WITH_FUNCTIONS, call("echo", '{"args":[1,"x"],"kwargs":{"region":"EMEA"}}')
                      + result(1, OK, field(F_VALUE, "{'args': [1, 'x']}"))),
    "call-f-every-kind": seed(WITH_FUNCTIONS, call("f", ' { "kwargs" : {"a": [true, false, null,'
                              ' -0.5e-3, 12, "\\u00e9\\ud83d\\ude00\\n"]}, "args": [{}, []] } ')
                              + result(1)),
    "call-bytewise": seed(WITH_READY | WITH_FUNCTIONS, ready() + call("echo", '{"args":[],"kwargs":{}}')
                          + result(1) + call("f", '{"args":["' + "x" * (CALL_LIMIT - 25) + '"],"kwargs":{}}')
                          + result(2), bytes([1, 0x83, 2, 0xC1, 0])),
    "bad-call-without-functions": seed(0, call("echo", '{"args":[],"kwargs":{}}') + result(1)),
    "bad-call-undefined": seed(WITH_FUNCTIONS, call("admin_reset", '{"args":[],"kwargs":{}}')),
    "bad-call-name-length": seed(WITH_FUNCTIONS, frame(CALL, u32(200) + b"echo{}")),
    "bad-call-empty-name": seed(WITH_FUNCTIONS, call("", '{"args":[],"kwargs":{}}')),
    "bad-call-json": seed(WITH_FUNCTIONS, call("echo", '{"args":[1,')),
    "bad-call-shape": seed(WITH_FUNCTIONS, call("echo", '{"args":{},"kwargs":{}}')),
    "bad-call-duplicate-key": seed(WITH_FUNCTIONS, call("echo", '{"args":[],"kwargs":{"a":1,"a":2}}')),
    "bad-call-over-limit": seed(WITH_FUNCTIONS, call("echo", '{"args":["' + "x" * (CALL_LIMIT - 24)
                                                     + '"],"kwargs":{}}')),
    "bad-call-big-int": seed(WITH_FUNCTIONS, call("echo", '{"args":[18446744073709551616],"kwargs":{}}')),
    "bad-call-lone-surrogate": seed(WITH_FUNCTIONS, call("echo", '{"args":["\\ud800"],"kwargs":{}}')),
    "bad-call-after-violation": seed(WITH_FUNCTIONS, violation(41, "socket")
                                     + call("echo", '{"args":[],"kwargs":{}}')),
    "bad-call-reply-from-worker": seed(WITH_FUNCTIONS, frame(CALL_REPLY, u32(0) + b"1")),
    "fetch-get": seed(WITH_URLS, fetch("GET", "http://127.0.0.1:9/v1/rates?x=1",
                                       b"Accept: */*\r\nX-A: b\tc\r\n") + result(1)),
    "fetch-post-refused-url": seed(WITH_URLS, fetch("POST", "http://evil.example/", b"", b"body")
                                   + fetch("GET", "http://u:p@127.0.0.1:9/v1/")
                                   + fetch("GET", "file:///etc/passwd")
                                   + fetch("GET", "http://127.0.0.1:9/v1/../admin") + result(1)),
    "bad-fetch-without-urls": seed(0, fetch("GET", "http://127.0.0.1:9/v1/") + result(1)),
    "bad-fetch-lengths": seed(WITH_URLS, fetch("GET", "http://127.0.0.1:9/v1/",
                                               lengths=(3, 900, 0))),
    "bad-fetch-method": seed(WITH_URLS, fetch("get", "http://127.0.0.1:9/v1/")),
    "bad-fetch-header-crlf": seed(WITH_URLS, fetch("GET", "http://127.0.0.1:9/v1/",
                                                   b"X-A: b\r\nX-B\r\n")),
    "bad-fetch-url-nul": seed(WITH_URLS, fetch("GET", "http://127.0.0.1:9/v1/\0x")),
    "bad-fetch-over-limit": seed(WITH_URLS, fetch("PUT", "http://127.0.0.1:9/v1/", b"",
                                                  b"x" * (URL_REQUEST_LIMIT + 1))),
    "bad-fetch-reply-from-worker": seed(WITH_URLS, frame(FETCH_REPLY, u32(0))),
    "install-list-and-wheel": seed(0, frame(INSTALL, u32(INSTALL_LIST))
                                   + frame(INSTALL, u32(INSTALL_WHEEL) + b"ci_beta-1.0-py3-none-any.whl")
                                   + result(1)),
    "bad-install-op": seed(0, frame(INSTALL, u32(7) + b"x.whl")),
    "bad-install-list-with-arg": seed(0, frame(INSTALL, u32(INSTALL_LIST) + b"x")),
    "bad-install-wheel-nul": seed(0, frame(INSTALL, u32(INSTALL_WHEEL) + b"a\0b.whl")),
    "bad-install-wheel-long": seed(0, frame(INSTALL, u32(INSTALL_WHEEL) + b"w" * 256)),
    "bad-install-short": seed(0, frame(INSTALL, b"\1\0")),
    "bad-install-reply-from-worker": seed(0, frame(INSTALL_REPLY, u32(0))),
    # SNAPSHOT runs: the state, the package set and what was left out.
    "snap-result": seed(SNAPSHOT_RUNS, SNAP_RESULT),
    "snap-result-split": seed(SNAPSHOT_RUNS, SNAP_RESULT, bytes([0x81, 3, 0xC2, 17, 0x80, 1, 0])),
    "snap-result-after-ready": seed(WITH_READY | SNAPSHOT_RUNS, ready() + SNAP_RESULT),
    "snap-result-nothing-left-out": seed(SNAPSHOT_RUNS, snap_result(
        1, OK, field(F_PACKAGES, PACKAGES), field(F_STATE, STATE), field(F_VALUE, "None"))),
    "snap-result-at-limits": seed(SNAPSHOT_RUNS, snap_result(
        1, OK, field(F_STATE, b"\0" * SNAP_STATE_CAP),
        field(F_PACKAGES, "p 1.0\n" * 500 + "\u00e9"), field(F_LEFT_OUT, "\U0001f600" * 1000))),
    "bad-snap-result-empty-state-and-packages": seed(SNAPSHOT_RUNS, snap_result(
        1, OK, field(F_STATE, b""), field(F_PACKAGES, b""))),
    "snap-result-error": seed(SNAPSHOT_RUNS, snap_result(
        1, ERROR, field(F_ENAME, "PicklingError"), field(F_EVALUE, "cannot pickle 'generator'"),
        field(F_PACKAGES, PACKAGES), field(F_LEFT_OUT, "g: a generator in flight\n"))),
    "snap-result-memory": seed(SNAPSHOT_RUNS, snap_result(1, MEMORY, field(F_ENAME, "MemoryError"))),
    "snap-result-two-runs": seed(SNAPSHOT_RUNS, SNAP_RESULT + snap_result(
        2, OK, field(F_STATE, STATE[:10]), field(F_PACKAGES, PACKAGES))),
    "snap-result-with-outputs": seed(SNAPSHOT_RUNS, snap_result(
        1, OK, field(F_STATE, STATE), field(F_PACKAGES, PACKAGES), field(F_OUTPUTS, OUTPUTS),
        field(F_REFUSALS, refusals(0, (REFUSAL_PATH, 1, "read /etc/shadow"))))),
    "bad-snap-state-over-cap": seed(SNAPSHOT_RUNS, snap_result(
        1, OK, field(F_STATE, b"\x80" * (SNAP_STATE_CAP + 1)), field(F_PACKAGES, PACKAGES))),
    "bad-snap-no-state": seed(SNAPSHOT_RUNS, snap_result(1, OK, field(F_PACKAGES, PACKAGES))),
    "bad-snap-no-packages": seed(SNAPSHOT_RUNS, snap_result(1, OK, field(F_STATE, STATE))),
    "bad-snap-nothing": seed(SNAPSHOT_RUNS, snap_result(1, OK)),
    "bad-snap-state-with-error": seed(SNAPSHOT_RUNS, snap_result(
        1, ERROR, field(F_ENAME, "PicklingError"), field(F_STATE, STATE),
        field(F_PACKAGES, PACKAGES))),
    "bad-snap-left-out-empty": seed(SNAPSHOT_RUNS, snap_result(
        1, OK, field(F_STATE, STATE), field(F_PACKAGES, PACKAGES), field(F_LEFT_OUT, b""))),
    "bad-snap-left-out-nul": seed(SNAPSHOT_RUNS, snap_result(
        1, OK, field(F_STATE, STATE), field(F_PACKAGES, PACKAGES), field(F_LEFT_OUT, b"g\0: x"))),
    "bad-snap-packages-latin1": seed(SNAPSHOT_RUNS, snap_result(
        1, OK, field(F_STATE, STATE), field(F_PACKAGES, b"caf\xe9 1.0\n"))),
    "bad-snap-packages-surrogate": seed(SNAPSHOT_RUNS, snap_result(
        1, OK, field(F_STATE, STATE), field(F_PACKAGES, b"\xed\xa0\x80"))),
    "bad-snap-repeated-state": seed(SNAPSHOT_RUNS, snap_result(
        1, OK, field(F_STATE, STATE), field(F_PACKAGES, PACKAGES), field(F_STATE, STATE))),
    "bad-snap-count-of-a-cell": seed(SNAPSHOT_RUNS, result(
        1, OK, field(F_STATE, STATE), field(F_PACKAGES, PACKAGES))),
    "bad-snap-frame-over-cap": seed(SNAPSHOT_RUNS, frame(RESULT, b"", 0xFFFFFFFF)),
    "bad-snap-fields-in-a-cell": seed(0, result(1, OK, field(F_STATE, STATE),
                                                field(F_PACKAGES, PACKAGES))),
    "bad-snap-packages-in-a-cell": seed(0, result(1, OK, field(F_PACKAGES, PACKAGES))),
    "bad-snap-left-out-in-a-cell": seed(0, result(1, ERROR, field(F_ENAME, "X"),
                                                  field(F_LEFT_OUT, LEFT_OUT))),
    # Snapshots' bytes. Each is also fuzzed with its hash made right, so the
    # malformed ones have a good hash and fail on what they name.
    "snapshot": seed(SNAPSHOT_BYTES, snapshot(HEAD, ENTRIES, section(S_LEFT_OUT, LEFT_OUT))),
    "snapshot-minimal": seed(SNAPSHOT_BYTES, snapshot(
        section(S_PACKAGES, "python 3.11.2 cpython-311 x86_64"), section(S_COUNT, le32(0)),
        section(S_STATE, b"N."))),
    "snapshot-no-left-out": seed(SNAPSHOT_BYTES, snapshot(HEAD, ENTRIES)),
    "snapshot-only-left-out": seed(SNAPSHOT_BYTES, snapshot(HEAD, section(S_LEFT_OUT, LEFT_OUT))),
    "snapshot-path-limits": seed(SNAPSHOT_BYTES, snapshot(
        HEAD, *[snap_dir("/".join(["d"] * k)) for k in range(1, 65)], snap_file(DEEP + "x", "x"),
        snap_file(LONG, mode=0o700), snap_file("a" * 255, "x"))),
    "snapshot-count-max": seed(SNAPSHOT_BYTES, snapshot(
        section(S_PACKAGES, PACKAGES), section(S_COUNT, le32(RUN_COUNT_INTERNAL - 1)),
        section(S_STATE, STATE), snap_file("f", "\0" * 300))),
    "snapshot-hash-wrong": seed(SNAPSHOT_BYTES, snapshot(HEAD, ENTRIES, good_hash=False)),
    "snapshot-cut": seed(SNAPSHOT_BYTES, snapshot(HEAD, ENTRIES)[:-40]),
    "snapshot-short": seed(SNAPSHOT_BYTES, SNAP_MAGIC + le32(1)),
    "bad-snapshot-magic": seed(SNAPSHOT_BYTES, b"\x88" + snapshot(HEAD)[1:]),
    "bad-snapshot-version": seed(SNAPSHOT_BYTES, snapshot(HEAD, version=2)),
    "bad-snapshot-flags": seed(SNAPSHOT_BYTES, snapshot(HEAD, flags=1)),
    "bad-snapshot-empty": seed(SNAPSHOT_BYTES, snapshot()),
    "bad-snapshot-no-state": seed(SNAPSHOT_BYTES, snapshot(
        section(S_PACKAGES, PACKAGES), section(S_COUNT, le32(7)))),
    "bad-snapshot-order-count-first": seed(SNAPSHOT_BYTES, snapshot(
        section(S_COUNT, le32(7)), section(S_PACKAGES, PACKAGES), section(S_STATE, STATE))),
    "bad-snapshot-order-state-second": seed(SNAPSHOT_BYTES, snapshot(
        section(S_PACKAGES, PACKAGES), section(S_STATE, STATE), section(S_COUNT, le32(7)))),
    "bad-snapshot-order-dir-first": seed(SNAPSHOT_BYTES, snapshot(snap_dir("d"), HEAD)),
    "bad-snapshot-order-file-in-head": seed(SNAPSHOT_BYTES, snapshot(
        section(S_PACKAGES, PACKAGES), section(S_COUNT, le32(7)), snap_file("f", "x"),
        section(S_STATE, STATE))),
    "bad-snapshot-order-after-left-out": seed(SNAPSHOT_BYTES, snapshot(
        HEAD, section(S_LEFT_OUT, LEFT_OUT), snap_file("f", "x"))),
    "bad-snapshot-two-left-outs": seed(SNAPSHOT_BYTES, snapshot(
        HEAD, section(S_LEFT_OUT, "a: b\n"), section(S_LEFT_OUT, "c: d\n"))),
    "bad-snapshot-repeated-packages": seed(SNAPSHOT_BYTES, snapshot(
        HEAD, section(S_PACKAGES, PACKAGES))),
    "bad-snapshot-repeated-state": seed(SNAPSHOT_BYTES, snapshot(HEAD, section(S_STATE, STATE))),
    "bad-snapshot-unknown-section": seed(SNAPSHOT_BYTES, snapshot(HEAD, section(7, b"x"))),
    "bad-snapshot-reserved": seed(SNAPSHOT_BYTES, snapshot(
        HEAD, section(S_DIR, le32(0o700) + b"d", reserved=1))),
    "bad-snapshot-packages-empty": seed(SNAPSHOT_BYTES, snapshot(
        section(S_PACKAGES, b""), section(S_COUNT, le32(7)), section(S_STATE, STATE))),
    "bad-snapshot-packages-nul": seed(SNAPSHOT_BYTES, snapshot(
        section(S_PACKAGES, b"numpy\x001.24"), section(S_COUNT, le32(7)),
        section(S_STATE, STATE))),
    "bad-snapshot-packages-latin1": seed(SNAPSHOT_BYTES, snapshot(
        section(S_PACKAGES, b"caf\xe9 1.0"), section(S_COUNT, le32(7)),
        section(S_STATE, STATE))),
    "bad-snapshot-count-2-31": seed(SNAPSHOT_BYTES, snapshot(
        section(S_PACKAGES, PACKAGES), section(S_COUNT, le32(RUN_COUNT_INTERNAL)),
        section(S_STATE, STATE))),
    "bad-snapshot-count-u64": seed(SNAPSHOT_BYTES, snapshot(
        section(S_PACKAGES, PACKAGES), section(S_COUNT, le32(7) + le32(0)),
        section(S_STATE, STATE))),
    "bad-snapshot-state-empty": seed(SNAPSHOT_BYTES, snapshot(
        section(S_PACKAGES, PACKAGES), section(S_COUNT, le32(7)), section(S_STATE, b""))),
    "bad-snapshot-left-out-empty": seed(SNAPSHOT_BYTES, snapshot(HEAD, section(S_LEFT_OUT, b""))),
    "bad-snapshot-left-out-nul": seed(SNAPSHOT_BYTES, snapshot(
        HEAD, section(S_LEFT_OUT, b"a\0: b\n"))),
    "bad-snapshot-path-dotdot": seed(SNAPSHOT_BYTES, snapshot(HEAD, snap_file("../x", "x"))),
    "bad-snapshot-path-inner-dotdot": seed(SNAPSHOT_BYTES, snapshot(
        HEAD, snap_dir("a"), snap_file("a/../../x", "x"))),
    "bad-snapshot-path-dot": seed(SNAPSHOT_BYTES, snapshot(HEAD, snap_dir("./a"))),
    "bad-snapshot-path-absolute": seed(SNAPSHOT_BYTES, snapshot(HEAD, snap_file("/etc/passwd"))),
    "bad-snapshot-path-double-slash": seed(SNAPSHOT_BYTES, snapshot(
        HEAD, snap_dir("a"), snap_file("a//b"))),
    "bad-snapshot-path-trailing-slash": seed(SNAPSHOT_BYTES, snapshot(HEAD, snap_dir("a/"))),
    "bad-snapshot-path-empty": seed(SNAPSHOT_BYTES, snapshot(HEAD, snap_dir(""))),
    "bad-snapshot-path-nul": seed(SNAPSHOT_BYTES, snapshot(HEAD, snap_file(b"a\0b", "x"))),
    "bad-snapshot-path-256": seed(SNAPSHOT_BYTES, snapshot(HEAD, snap_file("a" * 256, "x"))),
    "bad-snapshot-path-4096": seed(SNAPSHOT_BYTES, snapshot(HEAD, snap_file(LONG + "q", "x"))),
    "bad-snapshot-path-65-deep": seed(SNAPSHOT_BYTES, snapshot(HEAD, snap_dir(DEEP + "/d"))),
    "bad-snapshot-dir-mode": seed(SNAPSHOT_BYTES, snapshot(HEAD, snap_dir("d", mode=0o755))),
    "bad-snapshot-file-mode": seed(SNAPSHOT_BYTES, snapshot(HEAD, snap_file("f", mode=0o644))),
    "bad-snapshot-file-setuid": seed(SNAPSHOT_BYTES, snapshot(
        HEAD, snap_file("f", mode=0o4700))),
    "bad-snapshot-file-path-past-section": seed(SNAPSHOT_BYTES, snapshot(
        HEAD, snap_file("f", "xyz", path_len=5), snap_file("g"))),
    "bad-snapshot-file-cut": seed(SNAPSHOT_BYTES, snapshot(HEAD, section(S_FILE, le32(0o600)))),
    "bad-snapshot-dir-cut": seed(SNAPSHOT_BYTES, snapshot(HEAD, section(S_DIR, b"\xc0\x01"))),
    "bad-snapshot-section-past-end": seed(SNAPSHOT_BYTES, snapshot(
        HEAD, section(S_FILE, le32(0o600) + le32(1) + b"f", length=100))),
    "bad-snapshot-section-length-2-64": seed(SNAPSHOT_BYTES, snapshot(
        HEAD, section(S_FILE, le32(0o600) + le32(1) + b"f", length=(1 << 64) - 1))),
    "bad-snapshot-header-cut": seed(SNAPSHOT_BYTES, snapshot(HEAD, section(S_DIR, b"")[:12])),
    "bad-snapshot-state-cut": seed(SNAPSHOT_BYTES, snapshot(HEAD[:-5])),
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
