"""Starting, closing, restarting and dead sessions; configuration."""

import base64
import gc
import os
import stat
import tempfile

import pytest

import codeinterp
from codeinterp import STREAM_STDERR, STREAM_STDOUT, ErrorCode, Status, Truncated

from conftest import proc_alive, proc_gone


def test_close_twice_and_use_after_close():
    with codeinterp.Session() as s:
        pid = s.pid
        workspace = s.workspace
        assert isinstance(pid, int) and pid > 0
        assert proc_alive(pid)
        assert os.path.isdir(workspace)
        assert s.run("21 * 2").value == "42"
        assert not s.closed
    assert s.closed
    assert proc_gone(pid)
    assert not os.path.exists(workspace)
    s.close()
    s.close()
    with pytest.raises(codeinterp.SessionClosedError) as ei:
        s.run("1")
    assert "closed" in str(ei.value)
    assert isinstance(ei.value, codeinterp.CodeinterpError)
    assert isinstance(ei.value, ValueError)
    for call in (lambda: s.pid, lambda: s.workspace, lambda: s.sandbox, s.restart,
                 s.interrupt, lambda: s.put_file("a", b""), lambda: s.get_file("a")):
        with pytest.raises(codeinterp.SessionClosedError):
            call()
    assert "closed" in repr(s)


def test_garbage_collected_session_kills_its_worker():
    s = codeinterp.Session()
    pid, workspace = s.pid, s.workspace
    assert proc_alive(pid)
    del s
    gc.collect()
    assert proc_gone(pid)
    assert not os.path.exists(workspace)


@pytest.fixture(scope="module")
def small():
    """A session with small limits, in a workspace root of our own."""
    root = tempfile.mkdtemp(prefix="ci-py-root-")
    os.chmod(root, 0o711)  # the worker (uid 65534 under a root host) must search it
    try:
        with codeinterp.Session(timeout_ms=5000, memory_limit=768 << 20, output_limit=4096,
                                workspace_root=root, grace_ms=1000, figure_dpi=50) as s:
            yield s, root
    finally:
        os.rmdir(root)


def test_config_is_applied(small):
    s, root = small
    assert s.workspace.startswith(root + "/")
    r = s.run("print('y' * 10000)")
    assert r.status is Status.OK
    # A head and a tail of 2048 bytes, and the marker line between them.
    head, marker, tail = r.stdout_bytes.split(b"\n", 2)
    assert head == b"y" * 2048 and tail == b"y" * 2047 + b"\n"
    assert marker.startswith(b"[... 5905 bytes (0 lines) left out: stdout passed the output "
                             b"limit of 4 KiB; the whole output is in .outputs/cell-1.stdout")
    assert r.truncated & codeinterp.Truncated.STDOUT
    assert not r.truncated & codeinterp.Truncated.STDERR
    r = s.run("import matplotlib.pyplot as plt\nplt.plot([1, 2])")
    png = [o for o in r.outputs if o.mime == "image/png"][0]
    width = int.from_bytes(png.data[16:20], "big")
    assert 200 <= width <= 340, width  # 6.4 in at 50 dpi, cropped
    plain = [o for o in r.outputs if o.mime == "text/plain"][0]
    assert plain.data == b"<Figure size 320x240 with 1 Axes>"
    r = s.run("hog = bytearray(1 << 30)")
    assert r.status is Status.MEMORY
    assert r.error.name == "MemoryError"
    assert s.run("'alive'").value == "'alive'"


def test_cut_stream_is_whole_in_its_spill_file(small):
    s, _ = small
    r = s.run("print('y' * 10000)")
    name = ".outputs/cell-%d.stdout" % r.execution_count
    assert r.spill_file(STREAM_STDOUT) == name
    assert r.stdout_bytes.split(b"\n")[1].endswith(
        b"the whole output is in " + name.encode() + b" ...]")
    assert s.get_file(name) == b"y" * 10000 + b"\n"
    assert r.spill_file(STREAM_STDERR) is None     # stderr was not cut
    # Raw bytes, NULs and invalid UTF-8 included, and read by the next cell.
    data = bytes(range(256)) * 40
    r = s.run("import sys\nsys.stdout.buffer.write(bytes(range(256)) * 40)\n"
              "print('err', file=sys.stderr)")
    name = ".outputs/cell-%d.stdout" % r.execution_count
    assert r.truncated == Truncated.STDOUT
    assert r.spill_file(STREAM_STDOUT) == name
    assert s.get_file(name) == data
    assert s.run("open(%r, 'rb').read() == bytes(range(256)) * 40" % name).value == "True"
    assert r.stderr_bytes == b"err\n" and r.spill_file(STREAM_STDERR) is None
    r = s.run("import sys\nprint('z' * 10000, file=sys.stderr)\nprint('short')")
    name = ".outputs/cell-%d.stderr" % r.execution_count
    assert r.truncated == Truncated.STDERR
    assert (r.spill_file(STREAM_STDERR), r.spill_file(STREAM_STDOUT)) == (name, None)
    assert s.get_file(name) == b"z" * 10000 + b"\n"
    r = s.run("print('short')")
    assert r.truncated == 0
    assert (r.spill_file(STREAM_STDOUT), r.spill_file(STREAM_STDERR)) == (None, None)
    with pytest.raises(ValueError, match="STREAM_STDOUT"):
        r.spill_file(3)


def test_spill_limit_is_applied():
    with codeinterp.Session(output_limit=4096, spill_limit=0) as s:
        r = s.run("print('y' * 10000)")
        assert r.truncated == Truncated.STDOUT
        assert r.spill_file(STREAM_STDOUT) is None
        assert r.stdout_bytes.split(b"\n")[1] == (
            b"[... 5905 bytes (0 lines) left out: stdout passed the output limit of 4 KiB; "
            b"the rest was not kept ...]")
        assert not os.path.exists(os.path.join(s.workspace, ".outputs/cell-1.stdout"))
        with pytest.raises(codeinterp.NoSuchFileError):
            s.get_file(".outputs/cell-1.stdout")
    # A spill file of 2 KiB keeps the stream's first 2 KiB.
    with codeinterp.Session(output_limit=4096, spill_limit=2048) as s:
        r = s.run("print('y' * 10000)")
        assert r.spill_file(STREAM_STDOUT) == ".outputs/cell-1.stdout"
        assert r.stdout_bytes.split(b"\n")[1].endswith(
            b"its first 2 KiB are in .outputs/cell-1.stdout ...]")
        assert s.get_file(".outputs/cell-1.stdout") == b"y" * 2048


def test_dead_session_and_restart(small):
    s, _ = small
    s.run("before_restart = 1")
    s.put_file("keep.txt", b"kept")
    old_pid = s.pid
    r = s.run("import os\nos._exit(3)")
    assert r.status is Status.KILLED
    assert r.error.name == "WorkerDied"
    assert "3" in r.error.value
    assert s.pid is None
    assert s.sandbox == 0
    assert proc_gone(old_pid)
    with pytest.raises(codeinterp.DeadSessionError) as ei:
        s.run("1")
    assert ei.value.code == ErrorCode.EDEAD
    assert ei.value.name == "CI_EDEAD"
    assert ei.value.op == "Session.run()"
    assert str(ei.value).startswith("Session.run(): ")
    assert "call Session.restart()" in ei.value.message
    assert "ci_" not in ei.value.message.replace("CI_EDEAD", "")
    # the workspace outlives the worker
    s.put_file("while-dead.txt", b"dead")
    s.restart()
    assert s.pid is not None and s.pid != old_pid and proc_alive(s.pid)
    r = s.run("before_restart")
    assert r.status is Status.ERROR and r.error.name == "NameError"
    assert r.execution_count == 1
    assert s.run("open('keep.txt').read() + open('while-dead.txt').read()").value == "'keptdead'"


def test_rollback_keeps_the_state_before_a_cell_that_killed_the_worker():
    with codeinterp.Session(timeout_ms=2000, grace_ms=300, rollback=True) as s:
        assert s.rollback_active is True
        s.run("x = 41")
        old_pid = s.pid
        r = s.run("import os; os._exit(3)")
        assert r.status is Status.KILLED
        assert r.rolled_back is True
        assert r.error.name == "WorkerDied"
        assert "exited with status 3" in r.error.value
        assert "rolled back" in r.error.value
        assert "rolled_back" in repr(r)
        # the checkpoint took the killed worker's place
        assert s.pid is not None and s.pid != old_pid and proc_alive(s.pid)
        assert proc_gone(old_pid)
        assert s.rollback_active is True
        r = s.run("x")
        assert r.value == "41" and r.rolled_back is False
        assert r.execution_count == 3
        # a cell killed after its grace period: rolled back too, again
        r = s.run("import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                  "x = 0\ntime.sleep(30)")
        assert r.status is Status.KILLED and r.error.name == "TimeoutError"
        assert r.rolled_back is True
        assert s.run("x + 1").value == "42"
        # a branch has its parent's options, rollback among them
        with s.fork() as b:
            assert b.rollback_active is True
            assert b.run("import os; os._exit(1)").rolled_back is True
            assert b.run("x").value == "41"


def test_rollback_off_a_killed_session_is_dead():
    with codeinterp.Session(timeout_ms=5000) as s:
        assert s.rollback_active is False
        s.run("x = 41")
        r = s.run("import os; os._exit(3)")
        assert r.status is Status.KILLED and r.error.name == "WorkerDied"
        assert r.rolled_back is False
        assert "rolled back" not in r.error.value
        assert s.pid is None and s.rollback_active is False
        with pytest.raises(codeinterp.DeadSessionError):
            s.run("x")


def test_rollback_needs_a_worker_forked_from_the_zygote():
    # A worker started by exec has no PID namespace: the session starts
    # without rollback, and a cell that kills the worker leaves it dead.
    with codeinterp.Session(timeout_ms=5000, rollback=True, zygote=False) as s:
        assert s.rollback_active is False
        assert not s.sandbox & codeinterp.Sandbox.PIDNS
        r = s.run("import os; os._exit(3)")
        assert r.status is Status.KILLED and r.rolled_back is False
        with pytest.raises(codeinterp.DeadSessionError):
            s.run("1")
        s.restart()
        assert s.run("6 * 7").value == "42"


def test_restart_live_session(small):
    s, _ = small
    s.run("live_state = 5")
    s.restart()
    assert s.run("'live_state' in globals()").value == "False"


@pytest.mark.parametrize("kwargs", [
    {"timeout_ms": 0},
    {"timeout_ms": -1},
    {"memory_limit": 1 << 20},
    {"output_limit": 10},
    {"spill_limit": 5},
    {"spill_limit": 1023},
    {"spill_limit": (4 << 30) + 1},
    {"spill_limit": -1},
    {"figure_dpi": 5},
    {"grace_ms": 0},
    {"display_limits": (100, 100)},
    {"workspace_root": "relative/dir"},
    {"require_sandbox": 1 << 20},
    {"preload": "numpy, pandas"},
    {"preload": ""},
    {"preload": "numpy,,pandas"},
    {"preload": "numpy,"},
    {"preload": "numpy..linalg"},
    {"preload": "9lives"},
    {"preload": "nump\u00fc"},
    {"preload": "numpy;import os"},
    {"preload": ",".join(["m"] * 600)},   # 1199 bytes
    {"preload": "numpy\0"},
    {"zygote": 2},
    {"zygote": -1},
    {"rollback": 2},
    {"rollback": -1},
    {"manifest": "/m.json"},                                 # no key
    {"manifest": "", "public_key": "/k.pub"},
    {"manifest": "/m.json", "public_key": ""},
    {"manifest": "/" + "m" * 4096, "public_key": "/k.pub"},
    {"manifest": "/m.json\0", "public_key": "/k.pub"},
    {"public_key": "/k.pub\0", "manifest": "/m.json"},
    {"manifest": "/m.json", "public_key_bytes": b"\1" * 31},
    {"manifest": "/m.json", "public_key_bytes": b"\1" * 33},
    {"manifest": "/m.json", "public_key_bytes": b""},
    {"manifest": "", "public_key_bytes": b"\1" * 32},
    {"manifest": "/m.json", "public_key": "/k.pub", "public_key_bytes": b"\1" * 32},
    {"public_key": "/k.pub"},                                # no manifest
    {"public_key_bytes": b"\1" * 32},
    {"wheelhouse": ""},
    {"wheelhouse": "/" + "w" * 4096},
    {"wheelhouse": "/wheels\0"},
    {"task_limit": 15},
    {"task_limit": 65537},
    {"disk_quota": 1024},
    {"inode_quota": 63},
])
def test_bad_config_refused(kwargs):
    with pytest.raises(codeinterp.InvalidArgumentError) as ei:
        codeinterp.Session(**kwargs)
    assert ei.value.code == ErrorCode.EINVAL
    assert list(kwargs)[0] in str(ei.value)
    assert str(ei.value).startswith("Session(): invalid argument: ")


def test_task_limit_is_applied():
    with codeinterp.Session(task_limit=40) as s:
        if not s.sandbox & codeinterp.Sandbox.USERNS:
            assert not s.sandbox & codeinterp.Sandbox.TASK_LIMIT
            pytest.skip("the task limit needs the user namespace, which this machine refuses")
        assert s.sandbox & codeinterp.Sandbox.TASK_LIMIT
        assert s.run("import resource\nresource.getrlimit(resource.RLIMIT_NPROC)").value \
            == "(40, 40)"


def test_disk_quota_is_applied():
    with codeinterp.Session(disk_quota=4 << 20, inode_quota=128) as s:
        if not s.sandbox & codeinterp.Sandbox.DISK_QUOTA:
            assert os.geteuid() != 0
            pytest.skip("the disk quota needs a host that may mount a tmpfs (root)")
        r = s.run("open('big', 'wb').write(bytes(5 << 20))")
        assert r.error is not None and "disk quota of 4 MiB is full" in r.error.value
        with pytest.raises(codeinterp.TooBigError):
            s.put_file("more", bytes(1 << 20))


def test_config_types():
    with pytest.raises(TypeError):
        codeinterp.Session(timeout_ms="100")
    with pytest.raises(TypeError):
        codeinterp.Session(memory_limit=1.5e9)
    with pytest.raises(TypeError):
        codeinterp.Session(spill_limit="64M")
    with pytest.raises(TypeError):
        codeinterp.Session(preload=["numpy", "pandas"])
    with pytest.raises(TypeError):
        codeinterp.Session(preload=b"numpy")
    with pytest.raises(TypeError):
        codeinterp.Session(zygote="no")
    with pytest.raises(TypeError):
        codeinterp.Session(rollback="yes")
    with pytest.raises(TypeError):
        codeinterp.Session(manifest=42, public_key="/k.pub")
    with pytest.raises(TypeError):
        codeinterp.Session(manifest="/m.json", public_key=42)
    with pytest.raises(TypeError):
        codeinterp.Session(manifest="/m.json", public_key_bytes="0" * 32)
    with pytest.raises(TypeError):
        codeinterp.Session(wheelhouse=42)


# Which of these modules a fresh session has imported.
IMPORTED = ("import sys\n[m in sys.modules for m in "
            "('wave', 'sched', 'email.mime.text', 'pandas', 'matplotlib.pyplot')]")
PRELOAD = "wave,sched,email.mime.text"


def test_preload_sets_what_is_imported():
    # The default list: pandas and matplotlib, none of the other three.
    with codeinterp.Session(timeout_ms=20_000) as s:
        assert s.run(IMPORTED).value == "[False, False, False, True, True]"
    # A list of its own, with a zygote of its own: its modules, dotted
    # names included, and matplotlib.pyplot always; pandas no longer.
    for _ in range(2):
        with codeinterp.Session(timeout_ms=20_000, preload=PRELOAD) as s:
            assert s.run(IMPORTED).value == "[True, True, True, False, True]"
            assert s.run("import pandas\n2 * 21").value == "42"
    # The same list without the zygote.
    with codeinterp.Session(timeout_ms=20_000, preload=PRELOAD, zygote=False) as s:
        assert s.run(IMPORTED).value == "[True, True, True, False, True]"


def test_preload_module_that_fails_to_import():
    with pytest.raises(codeinterp.SpawnError) as ei:
        codeinterp.Session(preload="numpy,codeinterp_no_such_module")
    assert ei.value.code == ErrorCode.ESPAWN
    assert "codeinterp_no_such_module" in ei.value.detail


def test_zygote_off_starts_each_worker_by_exec():
    h = "hash('codeinterp')"
    # Forked from one zygote (the default list's), sessions share its hash
    # seed, restarted ones too. $CODEINTERP_WORKER turns the zygote off.
    zygote = "CODEINTERP_WORKER" not in os.environ
    with codeinterp.Session(timeout_ms=20_000, zygote=True) as c, \
            codeinterp.Session(timeout_ms=20_000) as d:
        hc = c.run(h).value
        if zygote:
            assert d.run(h).value == hc
            d.restart()
            assert d.run(h).value == hc
    with codeinterp.Session(timeout_ms=20_000, zygote=False) as a, \
            codeinterp.Session(timeout_ms=20_000, zygote=0) as b:
        assert a.run("1+1").value == "2"
        # the default preload list, as from the zygote
        assert a.run("import sys\n'pandas' in sys.modules").value == "True"
        # each worker started by exec draws a hash seed of its own,
        # restarted ones too
        ha, hb = a.run(h).value, b.run(h).value
        assert len({ha, hb, hc}) == 3
        old = a.pid
        a.restart()
        assert a.pid != old and proc_alive(a.pid)
        assert a.run("1+1").value == "2"
        assert a.run(h).value not in (ha, hc)


def test_missing_sandbox_layer_refused():
    # A worker started by exec never has a PID namespace of its own.
    with pytest.raises(codeinterp.SandboxUnavailableError) as ei:
        codeinterp.Session(require_sandbox=codeinterp.Sandbox.PIDNS, zygote=False)
    assert ei.value.code == ErrorCode.ESANDBOX
    assert ei.value.detail  # the library's message names the layer
    assert ei.value.detail in str(ei.value)


def test_missing_manifest_is_a_manifest_error(tmp_path):
    # A well-formed public key file (the NAME.pub of "codeinterp-manifest
    # keygen NAME"), so that what fails is the manifest, which is missing.
    key = bytes(range(32))
    key_file = tmp_path / "test.pub"
    key_file.write_text("codeinterp-manifest-public-key %s\n"
                        % base64.b64encode(key).decode("ascii"))
    missing = str(tmp_path / "no-such-manifest.json")
    for kwargs in ({"public_key": str(key_file)},
                   {"public_key": key_file},           # os.PathLike
                   {"public_key_bytes": key},
                   {"public_key_bytes": bytearray(key)}):
        with pytest.raises(codeinterp.ManifestError) as ei:
            codeinterp.Session(manifest=missing, **kwargs)
        e = ei.value
        assert isinstance(e, codeinterp.CodeinterpError)
        assert e.code == ErrorCode.EMANIFEST and e.code == -12, kwargs
        assert e.name == "CI_EMANIFEST"
        assert missing in e.detail, (kwargs, e.detail)
        assert missing in str(e)
        assert e.message.startswith("Session(): " + codeinterp.strerror(ErrorCode.EMANIFEST))
    assert codeinterp.strerror(-12) == codeinterp.strerror(ErrorCode.EMANIFEST)
    assert "manifest" in codeinterp.strerror(ErrorCode.EMANIFEST)


def test_wheelhouse_without_manifest_is_a_manifest_error(tmp_path):
    # A real directory, so that what fails is the missing manifest: a
    # wheelhouse's wheels are installable only as a signed manifest lists
    # them.
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for value in (str(wheels), wheels, os.fsencode(str(wheels))):
        with pytest.raises(codeinterp.ManifestError) as ei:
            codeinterp.Session(wheelhouse=value)
        e = ei.value
        assert e.code == ErrorCode.EMANIFEST and e.name == "CI_EMANIFEST", value
        assert str(wheels) in e.detail and "manifest" in e.detail, (value, e.detail)
        assert e.message.startswith("Session(): " + codeinterp.strerror(ErrorCode.EMANIFEST))
    # None, the default, is no wheelhouse: the session starts without a
    # manifest.
    with codeinterp.Session(wheelhouse=None) as s:
        assert s.run("6 * 7").value == "42"


def test_unsearchable_workspace_root_is_a_spawn_error():
    if os.getuid() != 0:
        pytest.skip("only a root host's worker changes uid")
    root = tempfile.mkdtemp(prefix="ci-py-private-")  # mode 0700: uid 65534 cannot search it
    try:
        assert stat.S_IMODE(os.stat(root).st_mode) == 0o700
        with pytest.raises(codeinterp.SpawnError) as ei:
            codeinterp.Session(workspace_root=root)
        assert ei.value.code == ErrorCode.ESPAWN
        assert ei.value.detail
    finally:
        os.rmdir(root)


def test_error_codes_and_messages():
    assert codeinterp.strerror(-4) == "the session's worker is dead; call ci_session_restart"
    assert codeinterp.strerror(-999) == "unknown error"
    e = codeinterp.errors.error_from_code(-8, "detail here")
    assert type(e) is codeinterp.NoSuchFileError
    assert (e.code, e.name, e.detail) == (ErrorCode.ENOENT, "CI_ENOENT", "detail here")
    assert e.message == "no such file in the workspace: detail here"
    unknown = codeinterp.errors.error_from_code(-99)
    assert type(unknown) is codeinterp.CodeinterpError and unknown.code == -99


def test_refused_settings_say_what_the_library_takes():
    with pytest.raises(codeinterp.InvalidArgumentError) as ei:
        codeinterp.Session(figure_dpi=5)
    assert str(ei.value) == ("Session(): invalid argument: figure_dpi=5 refused: "
                             "must be 10 to 600 (CI_EINVAL)")
    assert ei.value.detail == "figure_dpi=5 refused: must be 10 to 600"
    with pytest.raises(codeinterp.InvalidArgumentError) as ei:
        codeinterp.Session(spill_limit=5)
    assert str(ei.value) == ("Session(): invalid argument: spill_limit=5 refused: must be "
                             "0 (no spill files), or 1024 bytes to 4 GiB (4294967296) "
                             "(CI_EINVAL)")
    with pytest.raises(codeinterp.InvalidArgumentError) as ei:
        codeinterp.Session(require_sandbox=1 << 13)
    assert ei.value.detail == (
        "require_sandbox=0x2000 refused: must be made of the layers this library knows: "
        "seccomp|rlimits|no_new_privs|landlock|unprivileged|userns|netns|ipcns|utsns|mntns|pidns|"
        "task_limit|disk_quota")


def test_cell_killed_after_its_timeout_is_a_timeout_error():
    """A cell that ignores the timeout's KeyboardInterrupt is killed after
    the grace period, under the name of a cell that stopped at its timeout."""
    with codeinterp.Session(timeout_ms=300, grace_ms=200) as s:
        r = s.run("import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                  "import time\ntime.sleep(30)")
        assert r.status is Status.KILLED
        assert str(r.status) == "killed"
        assert r.error.name == "TimeoutError"
        assert r.wall_time_us < 10_000_000
        s.restart()
        assert s.run("6 * 7").value == "42"
