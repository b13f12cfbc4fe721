#!/bin/sh
# Tests codeinterp-mcp with a real MCP client: the official TypeScript SDK
# (@modelcontextprotocol/sdk, pinned in bindings/mcp/test/package-lock.json)
# under Node's built-in test runner. Run from the top of the tree after
# make deps && make:   BUILD=build sh bindings/mcp/check.sh [test files]
# Needs Node.js 18 or later (Debian 12's nodejs will do) and the packages
# that make deps installs with npm ci into bindings/mcp/test/node_modules;
# no network. The servers' workspaces go under $BUILD/mcp-test.
set -eu

fail() { echo "bindings/mcp/check.sh: $*" >&2; exit 1; }

BUILD=${BUILD:-build}
TOP=$(pwd)
[ -f "$TOP/include/codeinterp.h" ] && [ -d "$TOP/bindings/mcp/test" ] ||
    fail "run me from the top of the tree (sh bindings/mcp/check.sh)"
case $BUILD in /*) ;; *) BUILD=$TOP/$BUILD ;; esac
TESTDIR=$TOP/bindings/mcp/test

command -v node >/dev/null 2>&1 ||
    fail "'node' not found: install Node.js 18 or later (make deps, or apt-get install -y nodejs npm)"
# 18.15 is the first 18.x whose test runner takes --test-reporter; Debian
# 12 has 18.19 or later.
node -e 'const [a, b] = process.versions.node.split(".").map(Number);
         process.exit(a > 18 || (a === 18 && b >= 15) ? 0 : 1)' 2>/dev/null ||
    fail "Node.js $(node --version 2>/dev/null) is too old: the tests need 18.15 or later"
[ -f "$TESTDIR/node_modules/@modelcontextprotocol/sdk/package.json" ] ||
    fail "the MCP SDK is not installed in $TESTDIR/node_modules: run make deps"
[ -x "$BUILD/codeinterp-mcp" ] ||
    fail "$BUILD/codeinterp-mcp missing: run make first"
[ -x "$BUILD/codeinterp-worker" ] ||
    fail "$BUILD/codeinterp-worker missing: run make first"

# The workspace roots. A root host's workers run as uid 65534, which must
# be able to search every directory down to them; where the tree's own
# directories do not allow that, use one under /tmp instead.
searchable() {
    d=$1
    while [ "$d" != / ] && [ -n "$d" ]; do
        [ -d "$d" ] || { d=$(dirname "$d"); continue; }
        case $(stat -c %A "$d") in ?????????[xt]) ;; *) return 1 ;; esac
        d=$(dirname "$d")
    done
}
TMPBASE=$BUILD/mcp-test
CLEANUP=
if [ "$(id -u)" = 0 ] && ! searchable "$BUILD"; then
    TMPBASE=$(mktemp -d "${TMPDIR:-/tmp}/codeinterp-mcp-test.XXXXXX")
    CLEANUP=$TMPBASE
else
    rm -rf "$TMPBASE"
fi
mkdir -p "$TMPBASE"
chmod 755 "$TMPBASE"
trap '[ -z "$CLEANUP" ] || rm -rf "$CLEANUP"' EXIT

CODEINTERP_MCP=$BUILD/codeinterp-mcp
CODEINTERP_MCP_TMP=$TMPBASE
export CODEINTERP_MCP CODEINTERP_MCP_TMP

echo "mcp server: $CODEINTERP_MCP, node $(node --version)," \
     "SDK $(node -p "require('$TESTDIR/node_modules/@modelcontextprotocol/sdk/package.json').version")"
cd "$TESTDIR"
[ $# -gt 0 ] || set -- server.test.mjs protocol.test.mjs snapshot.test.mjs
# One test file at a time, each in a node --test of its own (each test
# starts its own server; Node 18's runner has no --test-concurrency), and
# within a file one test after another, as node:test runs them. A hang
# fails that file instead of stalling the run.
failed=
for f in "$@"; do
    status=0
    timeout -k 5 "${TEST_TIMEOUT:-600}" node --test --test-reporter=spec "$f" || status=$?
    if [ "$status" -eq 124 ]; then
        echo "bindings/mcp/check.sh: $f did not finish within ${TEST_TIMEOUT:-600} s" >&2
        failed="$failed $f"
    elif [ "$status" -ne 0 ]; then
        echo "bindings/mcp/check.sh: $f failed (exit $status)" >&2
        failed="$failed $f"
    fi
done
[ -z "$failed" ] || fail "the MCP tests failed:$failed"
echo "mcp server: all checks passed"
