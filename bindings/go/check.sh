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

MODULE=codeinterp.dev/go/codeinterp   # bindings/go/go.mod
grep -qx "module $MODULE" "$TOP/bindings/go/go.mod" || fail "go.mod does not declare module $MODULE"
echo "go binding: $(go version), codeinterp $VERSION from $BUILD"
cd "$TOP/bindings/go"
unformatted=$(gofmt -l .)
[ -z "$unformatted" ] || fail "not gofmt-formatted: $unformatted"
go vet ./...
go test -count=1 -timeout 300s ./...
go build -o "$GODIR/agent" ./examples/agent
timeout -k 5 120 "$GODIR/agent" "$GODIR/agent-out"

# go doc shows every exported name with its comment (doc_test.go checks
# that each has one); the package comment names the import path.
go doc . > "$GODIR/doc.txt" && grep -q "import \"$MODULE\"" "$GODIR/doc.txt" ||
    fail "go doc does not show the package as $MODULE"

# A program of a user's, in a module of its own outside the tree, that
# requires $MODULE and finds it through the one replace directive the
# README documents while the module has no public host; -mod=mod with
# GOPROXY=off: nothing is fetched.
user=$GODIR/user
rm -rf "$user" && mkdir -p "$user"
cat > "$user/go.mod" <<EOF
module example.com/user

go 1.19

require $MODULE v0.0.0

replace $MODULE => $TOP/bindings/go
EOF
cat > "$user/main.go" <<'EOF'
package main

import (
	"errors"
	"fmt"
	"os"

	"codeinterp.dev/go/codeinterp"
)

func main() {
	s, err := codeinterp.NewSession()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	res, err := s.Run("6 * 7")
	if err != nil || res.Value != "42" {
		fmt.Fprintln(os.Stderr, "run:", err, res)
		os.Exit(1)
	}
	s.Close()
	if _, err := s.Run("1"); !errors.Is(err, codeinterp.ErrClosed) {
		fmt.Fprintln(os.Stderr, "Run after Close:", err)
		os.Exit(1)
	}
	fmt.Println(res.Value)
}
EOF
(cd "$user" && go vet ./... && go build -mod=mod -o "$GODIR/user-program" .) ||
    fail "a user's module cannot build against $MODULE with the documented replace"
[ "$(timeout -k 5 120 "$GODIR/user-program")" = 42 ] || fail "the user's program did not print 42"
echo "go binding: a user's module builds against $MODULE (replace => bindings/go) and runs"
echo "go binding: all checks passed"
