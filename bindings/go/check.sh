#!/bin/sh
# Builds and tests the Go binding against the build tree. Run from the top
# of the tree after make:  BUILD=build sh bindings/go/check.sh
# Needs Debian's golang-go (Go 1.19 or later) and pkg-config; uses the
# standard library only, so no network. Everything Go writes (build cache,
# GOPATH, the example's binary and output) goes under $BUILD/go.
set -eu

fail() { echo "bindings/go/check.sh: $*" >&2; exit 1; }

BUILD=${BUILD:-build}
TOP=$(pwd)
[ -f "$TOP/include/codeinterp.h" ] && [ -f "$TOP/codeinterp.pc.in" ] ||
    fail "run me from the top of the tree (sh bindings/go/check.sh)"
case $BUILD in /*) ;; *) BUILD=$TOP/$BUILD ;; esac

command -v go >/dev/null 2>&1 ||
    fail "'go' not found: install Debian's golang-go (apt-get install -y golang-go)"
command -v pkg-config >/dev/null 2>&1 ||
    fail "'pkg-config' not found: apt-get install -y pkg-config"
command -v gcc >/dev/null 2>&1 || command -v cc >/dev/null 2>&1 ||
    fail "no C compiler for cgo: apt-get install -y gcc"
[ -e "$BUILD/libcodeinterp.so" ] && [ -x "$BUILD/codeinterp-worker" ] ||
    fail "$BUILD/libcodeinterp.so or $BUILD/codeinterp-worker missing: run make first"

# A pkg-config file for the build tree, from the template: the library in
# $BUILD (found at run time through an rpath), the header in include/.
VERSION=$(sed -n 's/^#define CI_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' \
          "$TOP/include/codeinterp.h" | paste -sd. -)
[ -n "$VERSION" ] || fail "cannot read the version from include/codeinterp.h"
GODIR=$BUILD/go
mkdir -p "$GODIR/pkgconfig" "$GODIR/home"
sed -e "s|@PREFIX@|$BUILD|" \
    -e "s|@LIBDIR@|$BUILD|" \
    -e "s|@INCLUDEDIR@|$TOP/include|" \
    -e "s|@VERSION@|$VERSION|" \
    -e "s|^\(Libs:.*\)\$|\1 -Wl,-rpath,$BUILD|" \
    "$TOP/codeinterp.pc.in" > "$GODIR/pkgconfig/codeinterp.pc"
PKG_CONFIG_PATH=$GODIR/pkgconfig
export PKG_CONFIG_PATH
pkg-config --exists codeinterp || fail "pkg-config rejects $GODIR/pkgconfig/codeinterp.pc"

# Keep Go off $HOME and off the network.
GOCACHE=$GODIR/cache
GOPATH=$GODIR/path
GOENV=off
GOPROXY=off
GOFLAGS=
GOTOOLCHAIN=local
GO111MODULE=on
CGO_ENABLED=1
XDG_CONFIG_HOME=$GODIR/home
XDG_CACHE_HOME=$GODIR/home
export GOCACHE GOPATH GOENV GOPROXY GOFLAGS GOTOOLCHAIN GO111MODULE CGO_ENABLED \
       XDG_CONFIG_HOME XDG_CACHE_HOME

echo "go binding: $(go version), codeinterp $VERSION from $BUILD"
cd "$TOP/bindings/go"
unformatted=$(gofmt -l .)
[ -z "$unformatted" ] || fail "not gofmt-formatted: $unformatted"
go vet ./...
go test -count=1 -timeout 300s ./...
go build -o "$GODIR/agent" ./examples/agent
timeout -k 5 120 "$GODIR/agent" "$GODIR/agent-out"
echo "go binding: all checks passed"
