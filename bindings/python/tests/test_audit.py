"""The audit trail: the log file's events and chain, the callback, and
failing closed."""

import hashlib
import json

import pytest

import codeinterp
from codeinterp import ErrorCode, Status


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def read_log(path):
    text = path.read_bytes()
    assert text.endswith(b"\n")
    return text[:-1].split(b"\n")


def test_a_session_logs_cells_and_files_in_one_chain(tmp_path):
    log = tmp_path / "audit.log"
    code = "open('out.txt', 'w').write('hi')"
    with codeinterp.Session(timeout_ms=20_000, audit_log=log) as s:
        assert s.run(code).status is Status.OK
        s.put_file("in.txt", b"abc")
        assert s.get_file("out.txt") == b"hi"
    lines = read_log(log)
    events = [json.loads(line) for line in lines]
    assert [e["event"] for e in events] == [
        "session_start", "cell_start", "cell", "file_put", "file_get", "session_end"]
    prev = "0" * 64
    for i, (line, e) in enumerate(zip(lines, events)):
        assert e["seq"] == i + 1
        assert e["prev"] == prev
        assert e["session"] == events[0]["session"]
        prev = sha256(line)
    assert "seccomp" in events[0]["sandbox"]
    assert events[0]["limits"]["timeout_ms"] == 20_000
    cell = events[2]
    assert (cell["sha256"], cell["bytes"], cell["status"], cell["files"]) == (
        sha256(code.encode()), len(code), "ok", ["out.txt"])
    assert (events[3]["name"], events[3]["bytes"], events[3]["sha256"]) == (
        "in.txt", 3, sha256(b"abc"))
    assert (events[4]["name"], events[4]["sha256"]) == ("out.txt", sha256(b"hi"))


def test_on_event_gets_the_lines_the_file_gets(tmp_path):
    log = tmp_path / "audit.log"
    seen = []
    with codeinterp.Session(audit_log=log, on_event=seen.append) as s:
        s.run("1 + 1")
    assert [line.encode() for line in seen] == read_log(log)
    assert json.loads(seen[2])["status"] == "ok"


def test_an_event_the_callback_refuses_stops_runs_until_a_restart():
    refuse = [False]
    count = [0]

    def on_event(line):
        if refuse[0]:
            raise RuntimeError("the collector is down")
        count[0] += 1

    with codeinterp.Session(on_event=on_event) as s:
        refuse[0] = True
        with pytest.raises(codeinterp.WorkspaceIOError) as e:
            s.run("print('never')")
        assert e.value.code == ErrorCode.EIO
        assert "audit event" in str(e.value)
        refuse[0] = False
        with pytest.raises(codeinterp.WorkspaceIOError):
            s.put_file("x.txt", b"1")  # the failure stays until a restart is recorded
        s.restart()
        assert s.run("6 * 7").value == "42"
    assert count[0] == 1 + 1 + 2 + 1  # start, restart, a cell, the end


def test_an_audit_log_that_cannot_be_opened_fails_the_start(tmp_path):
    path = tmp_path / "no-such-dir" / "audit.log"
    with pytest.raises(codeinterp.WorkspaceIOError) as e:
        codeinterp.Session(audit_log=path)
    assert e.value.code == ErrorCode.EIO
    assert str(path) in str(e.value)


def test_on_event_must_be_callable():
    with pytest.raises(TypeError, match="on_event"):
        codeinterp.Session(on_event="not a function")
