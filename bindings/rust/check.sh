#!/bin/sh
# Builds and tests the Rust binding against the tree's build directory.
#   sh bindings/rust/check.sh            (from the top of the tree, after make)
# Environment: BUILD (default "build"), the C build directory holding
# libcodeinterp.so and codeinterp-worker; CARGO to name a cargo of your own.
# Everything cargo writes (its home, the target directory) goes under
# $BUILD/rust: nothing lands in $HOME or in the source tree.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-build}

if [ ! -e "$build/libcodeinterp.so" ]; then
    echo "rust: $build/libcodeinterp.so not found; run make first" >&2
    exit 1
fi
build=$(cd "$build" && pwd)

# Debian's cargo and rustc (the toolchain the project installs), with its
# own rustc and rustdoc even when another toolchain comes first in PATH.
if [ -n "${CARGO:-}" ]; then
    cargo=$CARGO
elif [ -x /usr/bin/cargo ] && [ -x /usr/bin/rustc ]; then
    cargo=/usr/bin/cargo
    RUSTC=${RUSTC:-/usr/bin/rustc}
    export RUSTC
    if [ -x /usr/bin/rustdoc ]; then
        RUSTDOC=${RUSTDOC:-/usr/bin/rustdoc}
        export RUSTDOC
    fi
elif command -v cargo >/dev/null 2>&1; then
    cargo=$(command -v cargo)
else
    echo "rust: cargo not found; install Debian's: apt-get install -y cargo rustc" >&2
    exit 1
fi

if ! command -v "$cargo" >/dev/null 2>&1; then
    echo "rust: $cargo is not an executable cargo" >&2
    exit 1
fi

CODEINTERP_LIB_DIR=$build
CARGO_HOME=$build/rust/cargo-home
CARGO_TARGET_DIR=$build/rust/target
export CODEINTERP_LIB_DIR CARGO_HOME CARGO_TARGET_DIR

echo "rust: $("$cargo" --version), $(${RUSTC:-rustc} --version)"
cd "$here"
# --locked: Cargo.lock is committed and must not be rewritten.
"$cargo" test --offline --locked
"$cargo" build --offline --locked --examples
echo "rust: tests passed, examples built"
