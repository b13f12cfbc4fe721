import os

import pytest

import codeinterp


@pytest.fixture(scope="session")
def session():
    """One session shared by the tests that leave it usable (~0.6 s each to start)."""
    with codeinterp.Session(timeout_ms=20_000) as s:
        yield s


def proc_alive(pid):
    return pid is not None and os.path.exists("/proc/%d" % pid)


def open_fds():
    return sorted(os.listdir("/proc/self/fd"))
