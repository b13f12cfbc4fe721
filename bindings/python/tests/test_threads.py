"""Streaming output, interrupting from another thread, concurrent use."""

import threading
import time

import pytest

import codeinterp
from codeinterp import STREAM_STDERR, STREAM_STDOUT, Status


def test_streaming_callback_receives_chunks_as_they_come(session):
    chunks = []
    start = time.monotonic()

    def on_output(stream, data):
        assert isinstance(data, bytes)
        chunks.append((time.monotonic() - start, stream, data))

    r = session.run("import sys, time\n"
                    "print('first', flush=True)\n"
                    "time.sleep(0.5)\n"
                    "print('oops', file=sys.stderr, flush=True)\n"
                    "print('second', flush=True)",
                    on_output=on_output)
    elapsed = time.monotonic() - start
    assert r.status is Status.OK
    out = b"".join(d for _, s, d in chunks if s == STREAM_STDOUT)
    err = b"".join(d for _, s, d in chunks if s == STREAM_STDERR)
    assert out == r.stdout_bytes == b"first\nsecond\n"
    assert err == r.stderr_bytes == b"oops\n"
    assert {s for _, s, _ in chunks} == {STREAM_STDOUT, STREAM_STDERR}
    # 'first' arrived while the cell was still sleeping, not at the end
    first_at = min(t for t, s, d in chunks if s == STREAM_STDOUT)
    assert elapsed - first_at >= 0.3


def test_callback_gets_whole_lines(session):
    chunks = []
    # Each whole line in one write: print()'s text and its "\n" are two,
    # which a loaded machine can part by more than the 5 ms a partial
    # line waits for its end.
    r = session.run("import sys, time\nsys.stdout.write('a\\n')\n"
                    "print('progress', end='', flush=True)\n"
                    "time.sleep(0.3)\nsys.stdout.write(' done\\n')\nprint('x' + '\u00e9' * 20000)\n"
                    "print('b')",
                    on_output=lambda stream, data: chunks.append(data))
    assert r.status is Status.OK
    assert b"".join(chunks) == r.stdout_bytes
    long_line = b"x" + "\u00e9".encode() * 20000 + b"\n"
    # A partial line left waiting is given on its own; a line of 16 KiB or
    # more comes in pieces, each cut on a UTF-8 character boundary.
    assert chunks[:3] == [b"a\n", b"progress", b" done\n"]
    # Then the 40002-byte line, in pieces of at least 16 KiB less a
    # character as it is read, each cut after a whole é, and b.
    rest = chunks[3:]
    assert b"".join(rest) == long_line + b"b\n"
    for p in rest:
        p.decode("utf-8")  # whole characters only
        assert p.endswith(b"\n") or len(p) >= 16381


def test_callback_gets_one_note_past_the_limit():
    chunks = []
    with codeinterp.Session(output_limit=4096) as s:
        r = s.run("for i in range(2000):\n    print(i)",
                  on_output=lambda stream, data: chunks.append((stream, data)))
    assert {stream for stream, _ in chunks} == {STREAM_STDOUT}
    streamed = b"".join(data for _, data in chunks)
    whole = b"".join(b"%d\n" % i for i in range(2000))
    # The first 4 KiB, then one line that says where the rest goes.
    assert streamed[:4096] == whole[:4096]
    note = streamed[4096:]
    assert note.startswith(b"\n[... stdout passed the output limit of 4 KiB")
    assert note.endswith(b"the whole output goes to .outputs/cell-1.stdout ...]\n")
    assert note.count(b"\n") == 2
    assert r.spill_file(STREAM_STDOUT) == ".outputs/cell-1.stdout"


def test_callback_exception_is_reraised_after_the_run(session):
    calls = []

    def on_output(stream, data):
        calls.append(data)
        raise RuntimeError("sink closed")

    with pytest.raises(RuntimeError, match="sink closed"):
        session.run("import time\nfor i in range(3):\n    print(i, flush=True)\n"
                    "time.sleep(0.3)\ncb_done = True",
                    on_output=on_output)
    assert len(calls) == 1  # not called again after it raised
    # the cell was not interrupted: it ran to its end, and the session is usable
    r = session.run("cb_done")
    assert r.status is Status.OK and r.value == "True"


def test_keyboard_interrupt_in_callback_stops_the_cell(session):
    # Ctrl-C in the host surfaces inside the callback, the only Python code
    # that runs during a run: it interrupts the cell and propagates.
    def on_output(stream, data):
        raise KeyboardInterrupt

    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        session.run("import time\nprint('x', flush=True)\ntime.sleep(30)\nki_reached = 1",
                    on_output=on_output)
    assert time.monotonic() - t0 < 5
    assert session.run("'ki_reached' in globals()").value == "False"


def test_callback_must_be_callable(session):
    with pytest.raises(TypeError):
        session.run("1", on_output="not callable")


def _run_in_thread(session, code, **kw):
    box = {}

    def target():
        try:
            box["result"] = session.run(code, **kw)
        except BaseException as e:  # reported by the test
            box["error"] = e

    t = threading.Thread(target=target)
    t.start()
    return t, box


def test_interrupt_from_another_thread(session):
    assert session.interrupt() is False  # nothing running
    started = threading.Event()
    seen = []

    def on_output(stream, data):
        seen.append(data)
        if b"".join(seen) == b"started\n":  # print() writes the text, then the newline
            started.set()

    t, box = _run_in_thread(
        session, "import time\nprint('started', flush=True)\ntime.sleep(30)\nnot_reached = 1",
        on_output=on_output)
    assert started.wait(10), "the cell did not start"
    t0 = time.monotonic()
    assert session.interrupt() is True
    t.join(10)
    assert not t.is_alive()
    assert time.monotonic() - t0 < 5
    assert "error" not in box, box.get("error")
    r = box["result"]
    assert r.status is Status.INTERRUPTED
    assert r.error.name == "KeyboardInterrupt"
    assert r.stdout == "started\n"
    assert session.run("'not_reached' in globals()").value == "False"
    assert session.interrupt() is False


def test_interrupt_from_the_callback(session):
    def on_output(stream, data):
        assert session.interrupt() is True

    r = session.run("import time\nprint('go', flush=True)\ntime.sleep(30)", on_output=on_output)
    assert r.status is Status.INTERRUPTED
    assert r.wall_time_us < 5_000_000


def test_calls_during_a_run_are_refused(session):
    pid = session.pid
    started = threading.Event()
    t, box = _run_in_thread(session, "import time\nprint('busy', flush=True)\ntime.sleep(30)",
                            on_output=lambda stream, data: started.set())
    try:
        assert started.wait(10)
        with pytest.raises(codeinterp.BusyError) as ei:
            session.run("1")
        assert ei.value.code == codeinterp.ErrorCode.EBUSY
        with pytest.raises(codeinterp.BusyError):
            session.put_file("x.txt", b"x")
        with pytest.raises(codeinterp.BusyError):
            session.restart()
        with pytest.raises(codeinterp.BusyError):
            session.close()
        assert not session.closed
        assert session.pid == pid  # cached while the run holds the session
    finally:
        session.interrupt()
        t.join(10)
    assert box["result"].status is Status.INTERRUPTED
    assert session.run("'free again'").value == "'free again'"


def test_sessions_in_parallel_threads():
    results = {}

    def work(n):
        with codeinterp.Session() as s:
            results[n] = s.run("import time\ntime.sleep(0.3)\n%d * 10" % n).value

    threads = [threading.Thread(target=work, args=(n,)) for n in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert results == {1: "10", 2: "20"}
