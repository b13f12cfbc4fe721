import os
import time

import pytest

import codeinterp


@pytest.fixture(scope="session")
def session():
    """One session shared by the tests that leave it usable (~0.6 s each to start)."""
    with codeinterp.Session(timeout_ms=20_000) as s:
        yield s


def proc_alive(pid):
    return pid is not None and os.path.exists("/proc/%d" % pid)


def proc_gone(pid, seconds=10.0):
    """True once @pid is gone, waiting up to @seconds: a killed worker the
    kernel is slow to tear down (a loaded machine) is reaped a little later
    by the library's reaper thread."""
    end = time.monotonic() + seconds
    while proc_alive(pid):
        if time.monotonic() >= end:
            return False
        time.sleep(0.01)
    return True


def open_fds():
    return sorted(os.listdir("/proc/self/fd"))
