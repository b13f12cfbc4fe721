"""Cells on one shared session: state, values, errors, timeouts, outputs."""

import json
import os
import re
import struct

import pytest

import codeinterp
from codeinterp import Status


def test_library_version():
    assert codeinterp.version() == "0.1.0"
    assert codeinterp.library_path.endswith("libcodeinterp.so.0")


def test_state_is_kept_across_cells(session):
    r1 = session.run("state_x = 6 * 7\nprint('set', state_x)")
    assert r1.status is Status.OK and r1.ok
    assert r1.stdout == "set 42\n"
    assert r1.value is None
    assert r1.error is None
    r2 = session.run("state_x + 1")
    assert r2.status is Status.OK
    assert r2.value == "43"
    assert r2.execution_count == r1.execution_count + 1


def test_status_is_an_enum_mirroring_ci_status():
    import enum
    assert issubclass(Status, enum.Enum)
    assert repr(Status.TIMEOUT) == "<Status.TIMEOUT: 2>"
    assert [(s.name, s.value) for s in Status] == [
        ("OK", 0), ("ERROR", 1), ("TIMEOUT", 2), ("MEMORY", 3), ("KILLED", 4),
        ("INTERRUPTED", 5)]


def test_status_prints_as_ci_status_name():
    names = {Status.OK: "ok", Status.ERROR: "error", Status.TIMEOUT: "timeout",
             Status.MEMORY: "memory", Status.KILLED: "killed",
             Status.INTERRUPTED: "interrupted"}
    assert set(names) == set(Status)
    for status, name in names.items():
        assert str(status) == name
        assert "%s" % status == name and f"{status}" == name
        assert codeinterp._lib.lib.ci_status_name(status.value) == name.encode()
    assert codeinterp._lib.lib.ci_status_name(6) == b"unknown"


def test_result_repr_uses_the_status_name(session):
    assert repr(session.run("1")).startswith("<codeinterp.Result status=ok ")


def test_value_semicolon_and_none(session):
    assert session.run("'a' + 'b'").value == "'ab'"
    assert session.run("1 + 1;").value is None
    assert session.run("None").value is None


def test_exception(session):
    r = session.run("def f(d):\n    return 1 / d\nf(0)")
    assert r.status is Status.ERROR
    assert not r.ok
    assert r.value is None
    assert r.error.name == "ZeroDivisionError"
    assert r.error.value == "division by zero"
    tb = r.error.traceback
    assert tb.startswith("Traceback (most recent call last):")
    assert 'File "<cell %d>", line 3, in <module>' % r.execution_count in tb
    assert "in f" in tb
    assert tb.rstrip().endswith("ZeroDivisionError: division by zero")
    assert r.error.traceback_full == tb  # only the cell's frames: nothing folded
    # the session goes on
    assert session.run("2 * 21").value == "42"


def test_library_frames_are_folded(session):
    r = session.run("import pandas as pd\npd.DataFrame({'a':[1]})['b']")
    assert r.status is Status.ERROR
    assert (r.error.name, r.error.value) == ("KeyError", "'b'")
    tb, full = r.error.traceback, r.error.traceback_full
    fold = re.compile(r"^    \.\.\. \d+ frames? in \S", re.M)
    assert "frames in" in tb or "frame in" in tb
    assert fold.search(tb)
    assert 'File "<cell %d>", line 2, in <module>' % r.execution_count in tb
    assert "pandas/core/frame.py" in tb and 'core/frame.py", line' not in tb
    assert len(full) > len(tb)
    assert not fold.search(full)
    assert 'File "<cell %d>", line 2, in <module>' % r.execution_count in full
    assert 'pandas/core/frame.py", line' in full
    assert tb.rstrip().endswith("KeyError: 'b'") and full.rstrip().endswith("KeyError: 'b'")
    assert session.run("1").error is None


def test_syntax_error(session):
    r = session.run("def (")
    assert r.status is Status.ERROR
    assert r.error.name == "SyntaxError"


def test_timeout_keeps_the_session(session):
    session.run("timeout_marker = 'kept'")
    r = session.run("while True: pass", timeout_ms=300)
    assert r.status is Status.TIMEOUT
    assert r.error.name == "TimeoutError"
    assert 300_000 <= r.wall_time_us < 2_000_000
    after = session.run("timeout_marker")
    assert after.status is Status.OK
    assert after.value == "'kept'"


def test_run_timeout_validated(session):
    with pytest.raises(codeinterp.InvalidArgumentError):
        session.run("1", timeout_ms=0)
    with pytest.raises(codeinterp.InvalidArgumentError) as ei:
        session.run("1", timeout_ms=86_400_001)
    assert ei.value.code == codeinterp.ErrorCode.EINVAL
    assert ei.value.message == ("Session.run(): invalid argument: timeout_ms=86400001 refused: "
                                "must be 1 to 86400000 (24 h), or None for the session's")
    with pytest.raises(TypeError):
        session.run("1", timeout_ms=0.5)


def test_stdout_stderr_bytes_and_decoding(session):
    r = session.run("import sys\n"
                    "sys.stdout.buffer.write(b'ok \\xff\\n'); sys.stdout.flush()\n"
                    "print('warn', file=sys.stderr)")
    assert r.stdout_bytes == b"ok \xff\n"
    assert r.stdout == "ok \ufffd\n"
    assert r.stderr == "warn\n"
    assert r.stderr_bytes == b"warn\n"
    assert r.truncated == 0


def test_figure_output(session):
    r = session.run("import matplotlib.pyplot as plt\n"
                    "fig, ax = plt.subplots()\n"
                    "ax.plot([1, 2, 3], [3, 1, 2])")
    assert r.status is Status.OK
    pngs = [o for o in r.outputs if o.mime == "image/png"]
    assert len(pngs) == 1
    png = pngs[0]
    assert png.type == "display_data"
    assert png.data[:8] == b"\x89PNG\r\n\x1a\n"
    # 6.4 x 4.8 in at the default 100 dpi, cropped to what is drawn as
    # IPython's inline backend does
    width, height = struct.unpack(">II", png.data[16:24])
    assert 400 <= width <= 660 and 300 <= height <= 500, (width, height)
    plain = [o for o in r.outputs if o.mime == "text/plain"]
    assert plain[0].data == b"<Figure size 640x480 with 1 Axes>"
    # the figure was closed: the next cell has none
    assert session.run("len(plt.get_fignums())").value == "0"


def test_dataframe_is_an_execute_result(session):
    r = session.run("import pandas as pd\npd.DataFrame({'col_a': [1, 2]})")
    assert r.value is not None and "col_a" in r.value
    html = [o for o in r.outputs if o.mime == "text/html"]
    assert len(html) == 1
    assert html[0].type == "execute_result"
    assert html[0].message == 0
    assert "<table" in html[0].text and "col_a" in html[0].text


def test_display_messages_are_numbered(session):
    r = session.run("display('first')\ndisplay('second')")
    assert [(o.mime, o.type, o.message, o.data) for o in r.outputs] == [
        ("text/plain", "display_data", 0, b"'first'"),
        ("text/plain", "display_data", 1, b"'second'"),
    ]


# Needs the worker that sends update_display_data and clear_output
# (lib/worker/runner.py, proto.h version 2).
def test_display_update_and_clear(session):
    r = session.run("from IPython.display import display, clear_output\n"
                    "h = display('a', display_id=True)\n"
                    "h.update('b')\n"
                    "clear_output(wait=True)")
    assert r.status is Status.OK, r.error
    shown, update, clear = r.outputs
    assert shown[:4] == ("text/plain", b"'a'", "display_data", 0)
    assert shown.display_id and not shown.wait
    assert update[:4] == ("text/plain", b"'b'", "update_display_data", 1)
    assert update.display_id == shown.display_id and not update.wait
    assert clear == ("", b"", "clear_output", 2, None, True)


FAKE_WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           "..", "..", "..", "test", "fake_worker.py")


def test_display_ids_and_wait_come_through(monkeypatch):
    """What a worker sends, through the accessors: test/fake_worker.py
    sends the outputs the cell lists."""
    monkeypatch.setenv("CODEINTERP_WORKER", FAKE_WORKER)
    with codeinterp.Session(timeout_ms=5000) as s:
        r = s.run(json.dumps([[1, 0, False, "d\u00e9", "text/plain", "'a'"],
                              [3, 1, False, "d\u00e9", "text/plain", "'b'"],
                              [4, 2, True, None, "", ""],
                              [4, 3, False, None, "", ""],
                              [2, 4, False, None, "text/html", "<b>v</b>"]]))
    assert r.status is Status.OK, r.error
    assert r.outputs == [
        ("text/plain", b"'a'", "display_data", 0, "d\u00e9", False),
        ("text/plain", b"'b'", "update_display_data", 1, "d\u00e9", False),
        ("", b"", "clear_output", 2, None, True),
        ("", b"", "clear_output", 3, None, False),
        ("text/html", b"<b>v</b>", "execute_result", 4, None, False),
    ]


def test_resources(session):
    r = session.run("import time\n"
                    "t = time.process_time()\n"
                    "while time.process_time() - t < 0.2: pass\n"
                    "big = b'x' * (200 << 20)\n"
                    "del big")
    assert r.status is Status.OK
    assert r.cpu_time_us >= 150_000
    assert r.wall_time_us >= r.cpu_time_us * 0.5
    assert r.peak_memory >= 200 << 20


def test_cell_too_big(session):
    with pytest.raises(codeinterp.TooBigError) as ei:
        session.run("#" * (codeinterp.MAX_CELL_BYTES + 1))
    assert ei.value.code == codeinterp.ErrorCode.ETOOBIG
    assert ei.value.name == "CI_ETOOBIG"
    assert str(ei.value) == ("Session.run(): size over the limit: code of 16777217 bytes is "
                             "over the limit of a cell, 16 MiB (16777216 bytes) (CI_ETOOBIG)")
    assert session.run("'still fine'").value == "'still fine'"


def test_nul_in_cell_refused(session):
    with pytest.raises(codeinterp.InvalidArgumentError):
        session.run("x = 1\0\nx = 2")
    with pytest.raises(TypeError):
        session.run(42)


def test_bytes_code_accepted(session):
    assert session.run("'é' * 2".encode()).value == "'éé'"


def test_sandbox_mask(session):
    required = (codeinterp.Sandbox.SECCOMP | codeinterp.Sandbox.RLIMITS
                | codeinterp.Sandbox.NO_NEW_PRIVS | codeinterp.Sandbox.UNPRIVILEGED)
    mask = session.sandbox
    assert isinstance(mask, int)
    assert mask & required == required
    assert str(mask).startswith("seccomp|rlimits|no_new_privs|")


def test_sandbox_and_truncated_print_by_name():
    S = codeinterp.Sandbox
    every = S(0)
    for layer in S:
        every |= layer
    assert str(every) == ("seccomp|rlimits|no_new_privs|landlock|unprivileged|userns|netns|"
                          "ipcns|utsns|mntns|pidns|task_limit|disk_quota")
    assert "%s" % (S.SECCOMP | S.USERNS) == "seccomp|userns"
    assert f"{S.MNTNS}" == "mntns"
    assert str(S(0)) == "none"
    assert str(S.PIDNS | S(0x2000)) == "pidns|0x2000"
    T = codeinterp.Truncated
    assert str(T.STDOUT | T.FILES) == "stdout|files"
    assert str(T(0)) == "none"


def pidns_allowed():
    """Whether the kernel lets the zygote make a PID namespace: a child that
    leaves root as the zygote does (uid and gid 65534, no groups), then asks
    for the pair the zygote clones with, a user namespace and a PID
    namespace. Refusals are the errnos the library skips the layer for."""
    import ctypes
    import errno
    libc = ctypes.CDLL(None, use_errno=True)
    refused = {errno.EPERM, errno.EINVAL, errno.ENOSPC, errno.EUSERS,
               errno.EACCES, errno.ENOSYS}
    pid = os.fork()
    if pid == 0:
        code = 3
        try:
            if 0 in os.getresuid():
                os.setgroups([])
                os.setresgid(65534, 65534, 65534)
                os.setresuid(65534, 65534, 65534)
            if libc.unshare(0x10000000 | 0x20000000) == 0:  # CLONE_NEWUSER|NEWPID
                code = 0
            else:
                code = 1 if ctypes.get_errno() in refused else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    assert code in (0, 1), "the probe failed: %d" % code
    return code == 0


def test_pid_namespace(session):
    """PIDNS: workers forked from the zygote only, wherever the kernel
    allows it; a worker started by exec never has one."""
    PIDNS = codeinterp.Sandbox.PIDNS
    has = bool(session.sandbox & PIDNS)
    # pid 1 of a namespace of its own, whose parent is outside it
    ids = session.run("import os\n(os.getpid(), os.getppid())").value
    assert (ids == "(1, 0)") == has, (ids, session.sandbox)
    if "CODEINTERP_WORKER" in os.environ:  # the zygote is off
        assert not has
    else:
        assert has == pidns_allowed()
    with codeinterp.Session(timeout_ms=20_000, zygote=False) as s:
        assert not s.sandbox & PIDNS
        assert s.run("import os\nos.getpid()").value != "1"


def test_on_input_answers_input_and_getpass(session):
    asked = []

    def on_input(prompt, password):
        asked.append((prompt, password))
        return "s3cret" if password else "42"

    r = session.run("import getpass\nn = int(input('n? '))\nn * 2, getpass.getpass()",
                    on_input=on_input)
    assert r.status is Status.OK, r.error
    assert r.value == "(84, 's3cret')"
    assert asked == [("n? ", False), ("Password: ", True)]
    assert r.stdout == ""  # neither the prompt nor the answer is echoed


def test_input_without_an_answer_raises_in_the_cell(session):
    r = session.run("input('n? ')")
    assert r.status is Status.ERROR
    assert r.error.name == "StdinNotImplementedError"
    assert "cannot read from a keyboard" in r.error.value
    assert "put the value in the code" in r.error.value
    r = session.run("input()", on_input=lambda prompt, password: None)
    assert r.error.name == "StdinNotImplementedError"
    assert "the host did not answer input()" in r.error.value
    r = session.run("input()", on_input=lambda prompt, password: "x" * ((1 << 20) + 1))
    assert "at most 1048576 bytes" in r.error.value


def test_on_input_that_raises_is_raised_by_run(session):
    def on_input(prompt, password):
        raise RuntimeError("no answer here")

    with pytest.raises(RuntimeError, match="no answer here"):
        session.run("input()", on_input=on_input)
    with pytest.raises(TypeError, match="a str or None"):
        session.run("input()", on_input=lambda prompt, password: b"bytes")
    with pytest.raises(TypeError, match="callable"):
        session.run("1", on_input="not callable")
    assert session.run("'still here'").value == "'still here'"
