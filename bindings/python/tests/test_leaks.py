"""Nothing leaks: descriptors, C results, Python objects."""

import gc
import tracemalloc

import codeinterp

from conftest import open_fds


def _rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def test_runs_leak_no_descriptors_or_memory(session):
    for _ in range(5):  # warm up allocator and caches
        session.run("print('w' * 100_000)\nw = 1")
    gc.collect()
    fds_before = open_fds()
    rss_before = _rss()
    for i in range(200):
        # 200 KB of output each: 200 leaked results would be 40 MB
        r = session.run("print('x' * 200_000)\n%d" % i, on_output=lambda s, d: None)
        assert r.value == str(i)
        assert len(r.stdout_bytes) == 200_001
    del r
    gc.collect()
    assert open_fds() == fds_before
    assert _rss() - rss_before < 16 << 20


def test_python_objects_do_not_accumulate(session):
    for _ in range(5):
        session.run("1", on_output=lambda s, d: None)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for _ in range(200):
            session.run("print('y')\n[1, 2]", on_output=lambda s, d: None)
            session.put_file("leak.txt", b"z" * 1000)
            session.get_file("leak.txt")
        gc.collect()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    growth = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    assert growth < 64 * 1024, growth


def test_sessions_leak_no_descriptors(session):
    # session (the fixture) has already started the library's spawner thread
    fds_before = open_fds()
    with codeinterp.Session() as s:
        assert s.run("1").value == "1"
    gc.collect()
    assert open_fds() == fds_before


def test_get_file_frees_the_library_buffer(session):
    data = b"f" * (1 << 20)
    session.put_file("big.bin", data)
    assert session.get_file("big.bin") == data
    gc.collect()
    rss_before = _rss()
    for _ in range(100):  # 100 MB if the buffers were not given back with ci_free
        assert len(session.get_file("big.bin")) == 1 << 20
    gc.collect()
    assert _rss() - rss_before < 16 << 20
