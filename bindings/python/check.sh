#!/bin/sh
# Runs the Python binding's tests against a build tree's library.
# From the top of the tree:   BUILD=build sh bindings/python/check.sh
# BUILD (default "build") may be absolute or relative to the current
# directory. Extra arguments go to pytest. Exits nonzero on any failure,
# and when pytest is missing.
set -eu

PYTHON=/usr/bin/python3          # Debian's interpreter, whatever is first on PATH
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-build}
case $build in
/*) ;;
*) build=$(pwd)/$build ;;
esac
lib=$build/libcodeinterp.so.0

if [ ! -e "$lib" ]; then
    echo "check.sh: $lib not found; run make first" >&2
    exit 1
fi
if [ ! -x "$PYTHON" ]; then
    echo "check.sh: $PYTHON not found; apt-get install -y python3" >&2
    exit 1
fi
if ! "$PYTHON" -c 'import pytest' 2>/dev/null; then
    echo "check.sh: pytest is not installed for $PYTHON; apt-get install -y python3-pytest" >&2
    exit 1
fi

CODEINTERP_LIBRARY=$lib
PYTHONPATH=$here${PYTHONPATH:+:$PYTHONPATH}
# Leave no __pycache__ or .pytest_cache in the source tree.
PYTHONDONTWRITEBYTECODE=1
export CODEINTERP_LIBRARY PYTHONPATH PYTHONDONTWRITEBYTECODE

# A hang fails the suite instead of stalling it.
exec timeout -k 5 "${TEST_TIMEOUT:-300}" \
    "$PYTHON" -m pytest -q -p no:cacheprovider -c "$here/pytest.ini" --rootdir "$here" "$@" "$here/tests"
