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
# --locked: Cargo.lock is committed and must not be rewritten. The
# workspace: codeinterp-sys and codeinterp.
"$cargo" test --offline --locked --workspace --no-fail-fast
"$cargo" build --offline --locked --examples
echo "rust: tests passed, examples built"

# clippy, warnings as errors, where the toolchain has it (Debian:
# rust-clippy, which make deps installs).
if "$cargo" clippy --version > /dev/null 2>&1; then
    "$cargo" clippy --offline --locked --workspace --all-targets -- -D warnings
    echo "rust: clippy clean"
else
    echo "rust: no clippy for $cargo (apt-get install -y rust-clippy): not linted" >&2
fi

# Both crates as cargo package makes them for a registry, offline, each
# then built from its .crate alone (cargo's verification). The safe crate
# depends on codeinterp-sys by path and version; in its package only the
# version is left, which cargo resolves in a registry: here a local one
# (source replacement in a CARGO_HOME of its own) holding the
# codeinterp-sys .crate just made, as crates.io would.
pkghome=$CARGO_TARGET_DIR/package-home
registry=$CARGO_TARGET_DIR/package-registry
rm -rf "$pkghome" "$registry"
# Cargo takes a registry crate of a name and version it has built for
# unchanged, so the codeinterp-sys that the verification below builds from
# the registry is built again: its declarations may have changed.
rm -rf "$CARGO_TARGET_DIR"/debug/.fingerprint/codeinterp-sys-* \
       "$CARGO_TARGET_DIR"/debug/build/codeinterp-sys-* \
       "$CARGO_TARGET_DIR"/debug/deps/*codeinterp_sys-*
mkdir -p "$pkghome" "$registry/index/co/de"
printf '[source.crates-io]\nreplace-with = "local"\n\n[source.local]\nlocal-registry = "%s"\n' \
    "$registry" > "$pkghome/config.toml"
for crate in codeinterp-sys codeinterp; do
    CARGO_HOME=$pkghome "$cargo" package --offline --allow-dirty -p "$crate" \
        > "$CARGO_TARGET_DIR/package-$crate.log" 2>&1 ||
        { cat "$CARGO_TARGET_DIR/package-$crate.log" >&2; echo "rust: cargo package -p $crate failed" >&2; exit 1; }
    file=$CARGO_TARGET_DIR/package/$crate-0.1.0.crate
    [ -s "$file" ] || { echo "rust: no $file" >&2; exit 1; }
    echo "rust: packaged and verified $(basename "$file"): $(tar -tzf "$file" | wc -l) files"
    if [ "$crate" = codeinterp-sys ]; then
        cp "$file" "$registry/"
        printf '{"name":"codeinterp-sys","vers":"0.1.0","deps":[],"cksum":"%s","features":{},"yanked":false,"links":"codeinterp"}\n' \
            "$(sha256sum "$file" | cut -d' ' -f1)" > "$registry/index/co/de/codeinterp-sys"
    fi
done
tar -xzOf "$CARGO_TARGET_DIR/package/codeinterp-0.1.0.crate" codeinterp-0.1.0/Cargo.toml |
    grep -A2 '^\[dependencies.codeinterp-sys\]' | grep -q '^version = "0.1.0"' ||
    { echo "rust: the packaged codeinterp does not depend on codeinterp-sys 0.1.0" >&2; exit 1; }
echo "rust: both crates packaged offline"
