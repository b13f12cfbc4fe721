"""Not a cell: test_manifest's wheel maker, run on the host as

    /usr/bin/python3 test/cells/manifest_make_wheel.py KIND OUTDIR

KIND "good" writes OUTDIR/ci_tiny-1.2.3-py3-none-any.whl, whose METADATA
has Requires-Dist entries of every kind create must sort out: one with
old-style parentheses, one plain, one true marker, one false
(sys_platform == "win32") and one for an extra. KIND "nometa" writes
OUTDIR/ci_nometa-1.0-py3-none-any.whl, a zip without any .dist-info.
Prints the file name.
"""
import os
import sys
import zipfile

METADATA = """Metadata-Version: 2.1
Name: ci-tiny
Version: 1.2.3
Summary: a wheel for test_manifest
Requires-Dist: ci-beta (>=1.0,<3)
Requires-Dist: numpy
Requires-Dist: ci-gamma>=0.5; python_version >= "3"
Requires-Dist: pywin32; sys_platform == "win32"
Requires-Dist: pytest; extra == "x"
Provides-Extra: x

"""


def main(kind, outdir):
    if kind == "good":
        name = "ci_tiny-1.2.3-py3-none-any.whl"
        entries = [("ci_tiny/__init__.py", "VALUE = 7\n"),
                   ("ci_tiny-1.2.3.dist-info/METADATA", METADATA),
                   ("ci_tiny-1.2.3.dist-info/WHEEL",
                    "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
                   ("ci_tiny-1.2.3.dist-info/RECORD", "")]
    elif kind == "nometa":
        name = "ci_nometa-1.0-py3-none-any.whl"
        entries = [("ci_nometa/__init__.py", "")]
    else:
        sys.exit("manifest_make_wheel.py: KIND is good or nometa")
    with zipfile.ZipFile(os.path.join(outdir, name), "w") as z:
        for path, text in entries:
            z.writestr(zipfile.ZipInfo(path, (1980, 1, 1, 0, 0, 0)), text)
    print(name)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
