"""Snapshots: Session.snapshot(), Session.restore(), snapshot_left_out()."""

import pytest

import codeinterp
from codeinterp import ErrorCode, Status


def test_a_restored_session_has_the_variables_and_files(session):
    r = session.run("import numpy as np\n"
                    "square = lambda v: v * v\n"
                    "class Box:\n"
                    "    def __init__(self, v): self.v = v\n"
                    "box = Box(6)\n"
                    "total = int(np.arange(10).sum())\n"
                    "open('kept.txt', 'w').write('kept');")
    assert r.status is Status.OK, r.error
    count = session.run("None").execution_count
    data = session.snapshot()
    assert isinstance(data, bytes) and data[:8] == b"\x89CISNAP\n"
    with codeinterp.Session.restore(data, timeout_ms=20_000) as t:
        r = t.run("square(box.v), total, open('kept.txt').read()")
        assert r.status is Status.OK, r.error
        assert r.value == "(36, 45, 'kept')"
        assert r.execution_count == count + 1
        assert t.sandbox == session.sandbox
        t.run("total = -1")
    assert session.run("total").value == "45"


def test_what_is_left_out_is_named(session):
    session.run("gen = (i for i in range(3))")
    data = session.snapshot()
    assert "gen: a generator in flight" in codeinterp.snapshot_left_out(data)
    session.run("del gen")
    assert "gen: a generator in flight" not in codeinterp.snapshot_left_out(session.snapshot())


def test_cut_bytes_are_refused(session):
    data = session.snapshot()
    for bad in (data[:len(data) // 2], data[:-1], b"", b"not a snapshot"):
        with pytest.raises(codeinterp.InvalidArgumentError) as e:
            codeinterp.Session.restore(bad)
        assert e.value.code is ErrorCode.EINVAL
        assert "the snapshot is refused" in str(e.value)
        with pytest.raises(codeinterp.InvalidArgumentError):
            codeinterp.snapshot_left_out(bad)


def test_restore_takes_the_session_options(session):
    data = session.snapshot()
    with pytest.raises(codeinterp.InvalidArgumentError):
        codeinterp.Session.restore(data, timeout_ms=0)
    with codeinterp.Session.restore(data, timeout_ms=1000) as t:
        r = t.run("import time; time.sleep(5)")
        assert r.status is Status.TIMEOUT


def test_a_closed_session_has_no_snapshot():
    s = codeinterp.Session()
    s.close()
    with pytest.raises(codeinterp.SessionClosedError):
        s.snapshot()


def test_a_fork_is_a_branch_with_the_same_options(session):
    session.run("branch_me = [1, 2]\nsquares = (i * i for i in range(3))")
    with session.fork() as b:
        assert b.run("branch_me.append(3); branch_me").value == "[1, 2, 3]"
        assert "squares: a generator in flight" in b.left_out
        assert b.sandbox == session.sandbox
    assert session.run("branch_me").value == "[1, 2]"
    assert session.left_out == []
    session.run("del squares")


def test_a_fork_keeps_host_functions_of_its_own():
    calls = []

    def lookup(key):
        calls.append(key)
        return key.upper()

    with codeinterp.Session(functions={"lookup": lookup}) as s:
        s.run("x = 'a'")
        with s.fork() as b:
            s.close()
            r = b.run("lookup(x)")
            assert r.status is Status.OK, r.error
            assert r.value == "'A'"
    assert calls == ["a"]
