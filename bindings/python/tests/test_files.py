"""Files in and out of the workspace."""

import csv
import io
import os

import pytest

import codeinterp
from codeinterp import ErrorCode, Status

CSV = b"city,a,b\nOslo,1,10\nLima,2,20\nPune,3,30\n"


def test_put_compute_get(session):
    session.put_file("cities.csv", CSV)
    r = session.run("import os, pandas as pd\n"
                    "df = pd.read_csv('cities.csv')\n"
                    "df['total'] = df.a * df.b\n"
                    "os.makedirs('out', exist_ok=True)\n"
                    "df.to_csv('out/totals.csv', index=False)\n"
                    "int(df.total.sum())")
    assert r.status is Status.OK, r.error
    assert r.value == "140"
    # the cell's file is listed, the one put_file wrote is not
    assert r.files == ["out/totals.csv"]
    rows = list(csv.DictReader(io.StringIO(session.get_file("out/totals.csv").decode())))
    assert [(row["city"], row["total"]) for row in rows] == [
        ("Oslo", "10"), ("Lima", "40"), ("Pune", "90")]
    assert session.get_file("cities.csv") == CSV
    assert os.path.isfile(os.path.join(session.workspace, "out", "totals.csv"))


def test_unchanged_files_not_listed_again(session):
    session.run("open('once.txt', 'w').write('1')")
    assert session.run("1").files == []


def test_binary_and_bytes_like(session):
    blob = bytes(range(256)) * 4
    session.put_file("blob.bin", bytearray(blob))
    assert session.run("d = open('blob.bin', 'rb').read()\n(len(d), d[255], d[256])").value \
        == "(1024, 255, 0)"
    session.put_file(b"view.bin", memoryview(blob)[::2])  # not contiguous: copied
    assert session.get_file("view.bin") == blob[::2]
    session.put_file("empty.bin", b"")
    assert session.get_file("empty.bin") == b""


def test_file_errors(session):
    with pytest.raises(codeinterp.NoSuchFileError) as ei:
        session.get_file("no-such-file.txt")
    assert ei.value.code == ErrorCode.ENOENT
    assert ei.value.name == "CI_ENOENT"
    assert "no-such-file.txt" in str(ei.value)
    for bad in ("../escape.txt", "/etc/passwd", "", "a/../b"):
        with pytest.raises(codeinterp.InvalidArgumentError):
            session.put_file(bad, b"x")
    with pytest.raises(codeinterp.InvalidArgumentError):
        session.get_file("../../etc/passwd")
    with pytest.raises(codeinterp.NoSuchFileError):
        session.put_file("missing-dir/f.txt", b"x")
    with pytest.raises(codeinterp.InvalidArgumentError):
        session.get_file("nul\0name")
    with pytest.raises(TypeError):
        session.put_file("text.txt", "not bytes")


RULE = 'a name is a path relative to the workspace, without empty, "." or ".." components'


@pytest.mark.parametrize("call, name, problem", [
    ("get_file", "../x", 'has a ".." component'),
    ("put_file", "/etc/passwd", "is absolute"),
    ("put_file", "", "is empty"),
    ("put_file", "a//b", 'has an empty component ("//" or a trailing "/")'),
    ("get_file", "d/", 'has an empty component ("//" or a trailing "/")'),
    ("put_file", "a/./b", 'has a "." component'),
])
def test_refused_name_names_the_method_and_the_rule(session, call, name, problem):
    with pytest.raises(codeinterp.InvalidArgumentError) as ei:
        if call == "get_file":
            session.get_file(name)
        else:
            session.put_file(name, b"x")
    detail = "name %r %s: %s" % (name, problem, RULE)
    assert ei.value.detail == detail
    assert ei.value.op == "Session.%s()" % call
    assert str(ei.value) == "Session.%s(): invalid argument: %s (CI_EINVAL)" % (call, detail)


def test_library_messages_lose_their_c_names(session):
    with pytest.raises(codeinterp.NoSuchFileError) as ei:
        session.get_file("no-such-file.txt")
    assert ei.value.message.startswith("Session.get_file(): no such file in the workspace: ")
    assert "ci_" not in ei.value.message
    names = codeinterp.errors.python_names
    assert names("ci_session_get_file: invalid name") == "invalid name"
    assert names("the worker is dead; call ci_session_restart or ci_run_ex") == \
        "the worker is dead; call Session.restart() or Session.run()"


def test_unsafe_file_refused(session):
    session.run("import os\nopen('orig.txt', 'w').write('x')\n"
                "try:\n    os.link('orig.txt', 'hard.txt')\nexcept OSError as e:\n    print(e)")
    if os.path.exists(os.path.join(session.workspace, "hard.txt")):
        with pytest.raises(codeinterp.UnsafeFileError) as ei:
            session.get_file("hard.txt")
        assert ei.value.code == ErrorCode.EUNSAFE
    else:  # the sandbox refused the link: a directory is still not a file
        session.run("os.makedirs('adir', exist_ok=True)")
        with pytest.raises(codeinterp.UnsafeFileError):
            session.get_file("adir")
