#!/usr/bin/python3
"""Builds the wheels test_wheelhouse installs into OUTDIR, offline.

    /usr/bin/python3 test/wheels/build.py OUTDIR

The packages beside this file are built with Debian's setuptools and
wheel (setup.py bdist_wheel, which needs no index and no network, four
times faster than pip wheel; each from a copy in a temporary directory,
so the source tree stays clean, all at once): ci_beta 1.0 and
2.0 (pure), ci_alpha 1.0 (needs ci-beta>=2.0), ci_gamma 1.0 (the test
adds it after signing), ci_fast 1.0 (a C extension, compiled by gcc
against Debian's Python headers) and ci_numpy_shadow 1.0 (its top-level
package is numpy). Three hostile wheels are written with zipfile: each a
well-formed wheel (METADATA, WHEEL, RECORD with the hashes) but for one
entry: "../escape.py" (ci_escape), a symbolic link ci_symlink/up -> ../..
with ci_symlink/up/escape.py after it (ci_symlink), and the absolute
path /tmp/ci_abspath_escape.py (ci_abspath). Two more, of the attack
review: ci_bomb, whose ci_bomb/zeros.bin inflates to 64 MiB of zeros
(a 64 KiB wheel) though both its zip headers, local and central, say
100 bytes; and ci_unicode, a well-formed wheel but for its module's
UTF-8 name ci_unicode/d\u00e1t\u00e1.py (zipfile sets the zip's UTF-8 flag).

The same sources give the same bytes: SOURCE_DATE_EPOCH fixes the zip
times, the extension is compiled without debug information (no temporary
path in it), and the hostile wheels are written with fixed times and
modes. Prints each wheel's file name, one a line.
"""
import base64
import hashlib
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = "/usr/bin/python3"
# (source directory, version it is built as; None: the one in its setup.py)
SOURCES = [("ci_beta", "1.0"), ("ci_beta", "2.0"), ("ci_alpha", None), ("ci_gamma", None),
           ("ci_fast", None), ("ci_numpy_shadow", None)]
EPOCH = 315532800  # 1980-01-01, the oldest time a zip entry holds


def copy_source(name, version, into):
    """A copy of the package @name under @into, with @version put for
    each @VERSION@ of its files."""
    dest = os.path.join(into, name if version is None else "%s-%s" % (name, version))
    shutil.copytree(os.path.join(HERE, name), dest,
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    if version is not None:
        for root, _, files in os.walk(dest):
            for f in files:
                path = os.path.join(root, f)
                with open(path, encoding="utf-8") as fh:
                    text = fh.read()
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(text.replace("@VERSION@", version))
    return dest


def build_sources(outdir, tmp):
    """bdist_wheel of every source, at once; exits saying why if one fails."""
    env = {"PATH": "/usr/bin:/bin", "HOME": tmp, "LC_ALL": "C.UTF-8",
           "SOURCE_DATE_EPOCH": str(EPOCH), "PYTHONDONTWRITEBYTECODE": "1", "CFLAGS": "-g0 -O2", "CC": "gcc"}
    jobs = []
    for name, version in SOURCES:
        src = copy_source(name, version, tmp)
        cmd = [PYTHON, "setup.py", "-q", "bdist_wheel", "--dist-dir", outdir]
        jobs.append((src, subprocess.Popen(cmd, env=env, cwd=src, stdout=subprocess.PIPE,
                                           stderr=subprocess.STDOUT)))
    failed = []
    for src, job in jobs:
        out = job.communicate()[0].decode(errors="replace")
        if job.returncode != 0:
            failed.append("%s (exit %d):\n%s" % (os.path.basename(src), job.returncode, out))
    if failed:
        raise SystemExit("build.py: setup.py bdist_wheel failed for " + "\n".join(failed))


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d\n" % (name, digest, len(data))


def entry(name, mode=0o100644):
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.external_attr = mode << 16
    info.create_system = 3  # Unix: the mode bits are read as such
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def hostile_wheel(outdir, dist, entries):
    """A wheel of @dist 1.0 with @entries (name, bytes, mode), then its
    dist-info, as a real one lists itself; returns its file name."""
    info = "%s-1.0.dist-info" % dist
    meta = [
        (info + "/METADATA", ("Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n"
                              "Summary: a hostile wheel of codeinterp's tests\n"
                              % dist.replace("_", "-")).encode(), 0o100644),
        (info + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: codeinterp test/wheels/build.py\n"
                          b"Root-Is-Purelib: true\nTag: py3-none-any\n", 0o100644),
        (info + "/top_level.txt", (dist + "\n").encode(), 0o100644),
    ]
    record = "".join(record_line(n, d) for n, d, _ in entries + meta) + info + "/RECORD,,\n"
    file = "%s-1.0-py3-none-any.whl" % dist
    with zipfile.ZipFile(os.path.join(outdir, file), "w") as z:
        for name, data, mode in entries + meta + [(info + "/RECORD", record.encode(), 0o100644)]:
            z.writestr(entry(name, mode), data)
    return file


BOMB_ENTRY = "ci_bomb/zeros.bin"
BOMB_SIZE = 64 << 20   # what it inflates to
BOMB_DECLARED = 100    # what its zip headers say


def understate(path, name, size):
    """Writes @size as the uncompressed size of the entry @name of the
    zip @path, in its local header and its central directory entry (the
    one libarchive reads of a seekable zip: it checks the local header's
    against it)."""
    with zipfile.ZipFile(path) as z:
        info = z.getinfo(name)
        local = info.header_offset
        with open(path, "rb") as fh:
            data = bytearray(fh.read())
        central = z.start_dir  # where the central directory starts
    encoded = name.encode()
    # The central directory entry of @name: signature, 42 bytes, its name.
    at = central
    while data[at:at + 4] == b"PK\x01\x02":
        n, m, k = struct.unpack_from("<HHH", data, at + 28)
        if data[at + 46:at + 46 + n] == encoded:
            break
        at += 46 + n + m + k
    else:
        raise SystemExit("build.py: no central directory entry %s in %s" % (name, path))
    if data[local:local + 4] != b"PK\x03\x04" or data[local + 30:local + 30 + len(encoded)] != encoded:
        raise SystemExit("build.py: no local header %s in %s" % (name, path))
    struct.pack_into("<I", data, local + 22, size)  # local header: uncompressed size
    struct.pack_into("<I", data, at + 24, size)     # central directory: uncompressed size
    with open(path, "wb") as fh:
        fh.write(data)
    with zipfile.ZipFile(path) as z:
        if z.getinfo(name).file_size != size:
            raise SystemExit("build.py: %s of %s still says %d bytes" % (name, path, z.getinfo(name).file_size))


def build_hostile(outdir):
    init = b"VERSION = '1.0'\n"
    hostile_wheel(outdir, "ci_escape", [
        ("ci_escape/__init__.py", init, 0o100644),
        ("../escape.py", b"ESCAPED = True\n", 0o100644)])
    hostile_wheel(outdir, "ci_symlink", [
        ("ci_symlink/__init__.py", init, 0o100644),
        ("ci_symlink/up", b"../..", 0o120777),
        ("ci_symlink/up/escape.py", b"ESCAPED = True\n", 0o100644)])
    hostile_wheel(outdir, "ci_abspath", [
        ("ci_abspath/__init__.py", init, 0o100644),
        ("/tmp/ci_abspath_escape.py", b"ESCAPED = True\n", 0o100644)])
    bomb = hostile_wheel(outdir, "ci_bomb", [
        ("ci_bomb/__init__.py", init, 0o100644),
        (BOMB_ENTRY, bytes(BOMB_SIZE), 0o100644)])
    understate(os.path.join(outdir, bomb), BOMB_ENTRY, BOMB_DECLARED)
    hostile_wheel(outdir, "ci_unicode", [
        ("ci_unicode/__init__.py", init, 0o100644),
        ("ci_unicode/d\u00e1t\u00e1.py", "NAME = 'd\u00e1t\u00e1'\n".encode(), 0o100644)])


def main(argv):
    if len(argv) != 2:
        raise SystemExit("usage: /usr/bin/python3 build.py OUTDIR")
    outdir = os.path.abspath(argv[1])
    os.makedirs(outdir, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ci-wheels-") as tmp:
        build_sources(outdir, tmp)
    build_hostile(outdir)
    for f in sorted(os.listdir(outdir)):
        if f.endswith(".whl"):
            print(f)


if __name__ == "__main__":
    main(sys.argv)
