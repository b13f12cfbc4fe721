#!/bin/sh
# Checks the Python binding against a build tree's library: mypy on its
# annotations, its tests, then the package as a user installs it (pip,
# offline, into a venv) loading the library by its soname.
# From the top of the tree:   BUILD=build sh bindings/python/check.sh
# BUILD (default "build") may be absolute or relative to the current
# directory. Extra arguments go to pytest. Exits nonzero on any failure,
# and when a Debian package it needs is missing.
set -eu

PYTHON=/usr/bin/python3          # Debian's interpreter, whatever is first on PATH
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-build}
case $build in
/*) ;;
*) build=$(pwd)/$build ;;
esac
lib=$build/libcodeinterp.so.0
fail() { echo "check.sh: $*" >&2; exit 1; }

[ -e "$lib" ] || fail "$lib not found; run make first"
[ -x "$PYTHON" ] || fail "$PYTHON not found; apt-get install -y python3"
for module in pytest mypy pip setuptools wheel venv; do
    "$PYTHON" -c "import $module" 2>/dev/null ||
        fail "$module is not installed for $PYTHON; apt-get install -y python3-pytest" \
             "python3-mypy python3-pip python3-setuptools python3-wheel python3-venv"
done

# Leave no __pycache__ or .pytest_cache in the source tree.
PYTHONDONTWRITEBYTECODE=1
export PYTHONDONTWRITEBYTECODE

# The annotations, as a user's type checker reads them (pyproject.toml's
# [tool.mypy]: strict, Python 3.9).
(cd "$here" && "$PYTHON" -m mypy --no-incremental --cache-dir=/dev/null codeinterp)

# The tests, on the source tree with the build tree's library. A hang
# fails the suite instead of stalling it.
CODEINTERP_LIBRARY=$lib PYTHONPATH=$here${PYTHONPATH:+:$PYTHONPATH} \
    timeout -k 5 "${TEST_TIMEOUT:-300}" \
    "$PYTHON" -m pytest -q -p no:cacheprovider -c "$here/pytest.ini" --rootdir "$here" "$@" "$here/tests"

# The package as a user installs it: pip, offline (--no-index, and
# --no-build-isolation so that Debian's setuptools builds it), into a venv
# that sees Debian's packages, from a copy of bindings/python (setuptools
# writes build/ and *.egg-info next to pyproject.toml).
pkg=$build/python-package
rm -rf "$pkg"
mkdir -p "$pkg/src"
(cd "$here" && tar --exclude=./build --exclude='*.egg-info' --exclude=__pycache__ -cf - .) |
    (cd "$pkg/src" && tar -xf -)
"$PYTHON" -m venv --without-pip --system-site-packages "$pkg/venv"
py=$pkg/venv/bin/python
"$py" -m pip install -q --no-build-isolation --no-deps --no-index --disable-pip-version-check \
    "$pkg/src" > "$pkg/pip.log" 2>&1 || { cat "$pkg/pip.log" >&2; fail "pip install failed"; }
site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
for f in __init__.py _lib.py errors.py session.py py.typed; do
    [ -f "$site/codeinterp/$f" ] || fail "the installed package has no codeinterp/$f"
done
version=$(sed -n 's/^#define CI_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' \
          "$here/../../include/codeinterp.h" | paste -sd. -)

# Outside the tree, without CODEINTERP_LIBRARY: the library is found by its
# soname, here through LD_LIBRARY_PATH as an installed one is through
# ldconfig's cache, and the one loaded is the build tree's.
cd "$pkg"
env -u CODEINTERP_LIBRARY -u PYTHONPATH LD_LIBRARY_PATH="$build" "$py" -c '
import asyncio, os, sys
import codeinterp
build, version = sys.argv[1], sys.argv[2]
assert codeinterp.__file__.startswith(sys.prefix), codeinterp.__file__
assert codeinterp.library_path == "libcodeinterp.so.0", codeinterp.library_path
assert os.path.join(build, "libcodeinterp.so.") in open("/proc/self/maps").read(), \
    "the build tree library is not the one loaded"
assert codeinterp.__version__ == version == codeinterp.version(), (codeinterp.__version__, version)
with codeinterp.Session() as s:
    assert s.run("6 * 7").value == "42"
    assert asyncio.run(s.run_async("\"async\"")).value == "\x27async\x27"
' "$build" "$version" || fail "the installed package did not load libcodeinterp.so.0 and run cells"

# CODEINTERP_LIBRARY, a path, overrides the soname.
env -u PYTHONPATH -u LD_LIBRARY_PATH CODEINTERP_LIBRARY="$lib" "$py" -c '
import sys, codeinterp
assert codeinterp.library_path == sys.argv[1], codeinterp.library_path
with codeinterp.Session() as s:
    assert s.run("1 + 1").value == "2"
' "$lib" || fail "CODEINTERP_LIBRARY=$lib did not override the soname"

# Neither, and no library where the loader looks: the ImportError says
# what to do.
if ! /sbin/ldconfig -p | grep -q 'libcodeinterp\.so\.0 '; then
    if env -u PYTHONPATH -u LD_LIBRARY_PATH -u CODEINTERP_LIBRARY "$py" -c 'import codeinterp' \
        2> "$pkg/import.err"; then
        fail "import codeinterp found a library where there is none"
    fi
    grep -q 'make install' "$pkg/import.err" && grep -q CODEINTERP_LIBRARY "$pkg/import.err" ||
        { cat "$pkg/import.err" >&2; fail "the ImportError does not say what to do"; }
fi

# A user's code type-checks against the installed package (py.typed).
printf '%s\n' 'import codeinterp' '' '' \
    'async def answer(s: codeinterp.Session) -> str:' \
    '    r: codeinterp.Result = await s.run_async("6 * 7")' \
    '    return r.value or ""' > "$pkg/user.py"
"$py" -m mypy --no-incremental --cache-dir=/dev/null --strict user.py ||
    fail "a typed user of the installed package does not pass mypy --strict"
echo "python package: pip-installed offline in a venv; typed; found by soname, CODEINTERP_LIBRARY overrides"
