#!/bin/sh
# make install and make uninstall, as a user of the installed library sees
# them: staged under DESTDIR, then installed into a fresh PREFIX, where
# examples/pkgconfig/consumer is built out of the tree with pkg-config
# alone and runs a cell with the installed library and worker, and the
# installed codeinterp-mcp answers --help and an initialize request;
# uninstall then leaves nothing but empty directories. Then, as root, the
# default prefix /usr/local: found by pkg-config with no PKG_CONFIG_PATH,
# linked with no rpath, and uninstalled (see the end).
#   MAKE=make TREE_WORKER=/abs/build/codeinterp-worker test/install.sh
set -eu
cd "$(dirname "$0")/.."
MAKE=${MAKE:-make}
TREE_WORKER=${TREE_WORKER:-$(pwd)/build/codeinterp-worker}
version=$(for part in MAJOR MINOR PATCH; do
    sed -n "s/^#define CI_VERSION_$part \([0-9]*\)\$/\1/p" include/codeinterp.h; done | paste -sd.)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A root host's worker runs as uid 65534: keep every directory searchable.
chmod 0755 "$tmp"
prefix=$tmp/prefix
worker=$prefix/libexec/codeinterp/codeinterp-worker
fail() { echo "install: $*"; exit 1; }
# Every directory explicitly, so that variables given to an outer make
# (make check LIBDIR=...) cannot leak into these.
dirs() {
    $MAKE --no-print-directory "$@" PREFIX="$prefix" EXEC_PREFIX="$prefix" \
        LIBDIR="$prefix/lib" INCLUDEDIR="$prefix/include" LIBEXECDIR="$prefix/libexec" BINDIR="$prefix/bin" \
        MANDIR="$prefix/share/man" PKGCONFIGDIR="$prefix/lib/pkgconfig" > "$tmp/make.log" 2>&1 ||
        { cat "$tmp/make.log"; fail "make $* failed"; }
}
installed_files() {
    echo "lib/libcodeinterp.so.$version lib/libcodeinterp.so.${version%%.*} lib/libcodeinterp.so"
    echo "lib/libcodeinterp.a include/codeinterp.h lib/pkgconfig/codeinterp.pc"
    echo "libexec/codeinterp/codeinterp-worker bin/codeinterp-mcp share/man/man1/codeinterp-mcp.1"
    echo "bin/codeinterp-manifest share/man/man1/codeinterp-manifest.1"
    echo "bin/codeinterp-audit share/man/man1/codeinterp-audit.1"
    for page in man/*.3; do echo "share/man/man3/${page#man/}"; done
}
only_dirs_left() {
    left=$(find "$1" ! -type d)
    [ -z "$left" ] || fail "uninstall left: $left"
}

# Staged: the files land under DESTDIR; the paths compiled in do not name it.
stage=$tmp/stage
dirs install DESTDIR="$stage"
[ ! -e "$prefix" ] || fail "install with DESTDIR wrote to $prefix"
for f in $(installed_files); do
    [ -e "$stage$prefix/$f" ] || fail "install with DESTDIR did not install $stage$prefix/$f"
done
! grep -aqF "$stage" "$stage$prefix/lib/libcodeinterp.so.$version" "$stage$prefix/lib/pkgconfig/codeinterp.pc" \
    "$stage$prefix/bin/codeinterp-mcp" ||
    fail "DESTDIR is compiled into the installed library, its .pc or codeinterp-mcp"
dirs uninstall DESTDIR="$stage"
only_dirs_left "$stage"

dirs install DESTDIR=
for f in $(installed_files); do
    [ -e "$prefix/$f" ] || fail "$prefix/$f was not installed"
done
[ -L "$prefix/lib/libcodeinterp.so.${version%%.*}" ] && [ -L "$prefix/lib/libcodeinterp.so" ] ||
    fail "the .so.${version%%.*} and .so names are not links"
[ "$(stat -c %a "$worker")" = 755 ] || fail "$worker is not mode 755"
sh test/abi.sh "$prefix/lib/libcodeinterp.so" "$prefix/include/codeinterp.h"
for lib in "$prefix/lib/libcodeinterp.so.$version" "$prefix/lib/libcodeinterp.a"; do
    grep -aqF "$worker" "$lib" || fail "$lib does not name the installed worker $worker"
    ! grep -aqF "$TREE_WORKER" "$lib" || fail "$lib names the build tree's worker $TREE_WORKER"
done

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
[ "$(pkg-config --modversion codeinterp)" = "$version" ] || fail "pkg-config --modversion is not $version"
[ "$(pkg-config --variable=libdir codeinterp)" = "$prefix/lib" ] || fail "the .pc's libdir is not $prefix/lib"

# The consumer, out of the tree: nothing of the tree but its two files.
mkdir "$tmp/consumer"
cp examples/pkgconfig/Makefile examples/pkgconfig/consumer.c "$tmp/consumer"
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -C "$tmp/consumer" \
    LDFLAGS="-Wl,-rpath,$prefix/lib" > "$tmp/make.log" 2>&1 ||
    { cat "$tmp/make.log"; fail "the consumer does not build with pkg-config"; }
ldd "$tmp/consumer/consumer" | grep -qF "$prefix/lib/libcodeinterp.so.${version%%.*}" ||
    fail "the consumer does not load the installed library"
out=$(env -u CODEINTERP_WORKER "$tmp/consumer/consumer") || fail "the consumer failed: $out"
echo "$out" | sed 's/^/  consumer: /'
[ "$(echo "$out" | sed -n 1p)" = "codeinterp $version (header $version)" ] || fail "the consumer saw another version"
[ "$(echo "$out" | sed -n 2p)" = 42 ] || fail "the consumer did not print 42"

# Without its installed worker the installed library fails, naming it.
mv "$worker" "$worker.away"
if env -u CODEINTERP_WORKER "$tmp/consumer/consumer" > /dev/null 2> "$tmp/err"; then
    fail "the consumer ran without the installed worker"
fi
mv "$worker.away" "$worker"
grep -qF "$worker" "$tmp/err" || fail "the failure does not name $worker: $(cat "$tmp/err")"

# The MCP server: the installed library (through its rpath), the installed
# worker; at end of input it answers, then removes its workspace.
mcp=$prefix/bin/codeinterp-mcp
[ "$(stat -c %a "$mcp")" = 755 ] || fail "$mcp is not mode 755"
ldd "$mcp" | grep -qF "$prefix/lib/libcodeinterp.so.${version%%.*}" ||
    fail "codeinterp-mcp does not load the installed library"
"$mcp" --help | grep -q -- --max-message-bytes || fail "codeinterp-mcp --help does not document its options"
"$prefix/bin/codeinterp-manifest" --help | grep -q -- keygen ||
    fail "codeinterp-manifest --help does not name its commands"
"$prefix/bin/codeinterp-audit" 2>&1 | grep -q -- 'verify' ||
    fail "codeinterp-audit does not name its command when run without one"
mkdir "$tmp/ws" && chmod 0755 "$tmp/ws"
out=$(echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"install.sh","version":"1"}}}' |
    env -u CODEINTERP_WORKER "$mcp" --workspace-root "$tmp/ws" 2> "$tmp/err") ||
    fail "codeinterp-mcp failed: $(cat "$tmp/err")"
echo "$out" | grep -qF '"protocolVersion":"2025-06-18"' && echo "$out" | grep -qF "\"version\":\"$version\"" ||
    fail "codeinterp-mcp did not answer initialize: $out $(cat "$tmp/err")"
[ -z "$(ls -A "$tmp/ws")" ] || fail "codeinterp-mcp left its workspace behind: $(ls -A "$tmp/ws")"
echo "  codeinterp-mcp: answered initialize with $version, workspace removed"

dirs uninstall DESTDIR=
only_dirs_left "$prefix"
[ ! -e "$prefix/libexec/codeinterp" ] || fail "uninstall left $prefix/libexec/codeinterp"
echo "install: staged, installed, used through pkg-config, uninstalled"

# The default prefix, /usr/local, into the live system, as a user's make
# install: pkg-config finds codeinterp.pc with no PKG_CONFIG_PATH (Debian's
# pc_path holds /usr/local/lib/pkgconfig), the consumer links with no rpath
# and loads the library through ldconfig's cache, and uninstall leaves
# /usr/local as it found it. Only as root, only when no codeinterp is
# installed there already (someone's own is never overwritten), and one run
# at a time (flock); CODEINTERP_TEST_LIVE_INSTALL=0 skips it. A skip is
# appended to $CI_TEST_SKIPS, as the test programs' are (make check lists
# them).
live_dirs="/usr/local/lib /usr/local/lib/pkgconfig /usr/local/include /usr/local/libexec
  /usr/local/bin /usr/local/share /usr/local/share/man /usr/local/share/man/man1 /usr/local/share/man/man3"
live_skip() {
    echo "install: default prefix not tried: $*"
    [ -z "${CI_TEST_SKIPS:-}" ] || echo "install.sh: default_prefix: $*" >> "$CI_TEST_SKIPS"
    exit 0
}
[ "${CODEINTERP_TEST_LIVE_INSTALL:-1}" != 0 ] || live_skip "CODEINTERP_TEST_LIVE_INSTALL=0"
[ "$(id -u)" = 0 ] || live_skip "needs root"
command -v flock > /dev/null || live_skip "needs flock(1)"
# A read-only root (a container's): the lock file and /usr/local itself.
# sh exits on a redirection that fails, so test first.
[ -w /run/lock ] || live_skip "needs a writable /run/lock"
for d in /usr/local $live_dirs; do
    [ ! -d "$d" ] || [ -w "$d" ] || live_skip "needs a writable $d"
done
exec 9> /run/lock/codeinterp-install-test.lock
flock -n 9 || live_skip "another run holds /run/lock/codeinterp-install-test.lock"
for f in /usr/local/lib/libcodeinterp.so.0 /usr/local/lib/pkgconfig/codeinterp.pc \
         /usr/local/include/codeinterp.h /usr/local/libexec/codeinterp; do
    [ ! -e "$f" ] || live_skip "$f is already there"
done
! env -u PKG_CONFIG_PATH pkg-config --exists codeinterp || live_skip "pkg-config already finds a codeinterp"
new_dirs=""
for d in $live_dirs; do [ -d "$d" ] || new_dirs="$d $new_dirs"; done   # deepest first
# Outer make's variables and the environment's must not move the prefix.
live_make() {
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u PREFIX -u prefix -u EXEC_PREFIX -u exec_prefix \
        -u LIBDIR -u libdir -u INCLUDEDIR -u includedir -u LIBEXECDIR -u libexecdir -u BINDIR \
        -u bindir -u MANDIR -u mandir -u PKGCONFIGDIR -u DESTDIR \
        $MAKE --no-print-directory "$@" > "$tmp/make.log" 2>&1 ||
        { cat "$tmp/make.log"; fail "make $* (default prefix) failed"; }
}
live_cleanup() {
    live_make uninstall
    for d in $new_dirs; do rmdir "$d" 2> /dev/null || true; done
    rm -rf "$tmp"
}
trap live_cleanup EXIT
live_make install
unset PKG_CONFIG_PATH
[ "$(pkg-config --modversion codeinterp)" = "$version" ] ||
    fail "pkg-config does not find /usr/local/lib/pkgconfig/codeinterp.pc without PKG_CONFIG_PATH"
pkg-config --variable pc_path pkg-config | tr : '\n' | grep -qx /usr/local/lib/pkgconfig ||
    fail "pkg-config's pc_path lacks /usr/local/lib/pkgconfig"
flags=$(echo $(pkg-config --cflags --libs codeinterp))    # words, one space apart
[ "$flags" = "-I/usr/local/include -L/usr/local/lib -lcodeinterp" ] ||
    fail "pkg-config --cflags --libs codeinterp gives: $flags"
/sbin/ldconfig -p | grep -q "libcodeinterp\.so\.${version%%.*} .*=> /usr/local/lib/libcodeinterp\.so\.${version%%.*}\$" ||
    fail "make install did not refresh ldconfig's cache"
make_consumer() {
    rm -rf "$tmp/consumer" && mkdir "$tmp/consumer"
    cp examples/pkgconfig/Makefile examples/pkgconfig/consumer.c "$tmp/consumer"
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u LDFLAGS -u PKG_CONFIG_PATH \
        make --no-print-directory -C "$tmp/consumer" > "$tmp/make.log" 2>&1 ||
        { cat "$tmp/make.log"; fail "the consumer does not build with pkg-config alone"; }
}
make_consumer
! readelf -d "$tmp/consumer/consumer" | grep -qE 'RPATH|RUNPATH' || fail "the consumer has an rpath"
env -u LD_LIBRARY_PATH ldd "$tmp/consumer/consumer" |
    grep -qF "libcodeinterp.so.${version%%.*} => /usr/local/lib/libcodeinterp.so.${version%%.*}" ||
    fail "the consumer does not load /usr/local/lib/libcodeinterp.so.${version%%.*}"
out=$(env -u CODEINTERP_WORKER -u LD_LIBRARY_PATH "$tmp/consumer/consumer") || fail "the consumer failed: $out"
[ "$(echo "$out" | sed -n 2p)" = 42 ] || fail "the consumer (default prefix) did not print 42: $out"
trap - EXIT
live_cleanup
for f in /usr/local/lib/libcodeinterp.so.0 /usr/local/lib/pkgconfig/codeinterp.pc \
         /usr/local/include/codeinterp.h /usr/local/libexec/codeinterp /usr/local/bin/codeinterp-mcp; do
    [ ! -e "$f" ] || fail "uninstall left $f"
done
! /sbin/ldconfig -p | grep -qF libcodeinterp.so || fail "ldconfig's cache still names libcodeinterp after uninstall"
for d in $new_dirs; do [ ! -e "$d" ] || fail "the test left $d behind"; done
echo "install: default prefix /usr/local: pkg-config without PKG_CONFIG_PATH, linked without rpath, uninstalled"
