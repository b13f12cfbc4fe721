#!/bin/sh
# The shared library's ABI: it exports exactly the functions the header
# declares with CI_API, all named ci_*, it holds no manifest signing
# code, and its soname carries the major version only.
#   test/abi.sh LIBRARY.so HEADER
set -eu
lib=$1 header=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

sed -n 's/^CI_API[^(]*[ *]\(ci_[a-z0-9_]*\)(.*/\1/p' "$header" | sort > "$tmp/declared"
nm -D --defined-only "$lib" | awk '{ print $NF }' | sort > "$tmp/exported"
[ -s "$tmp/declared" ] || { echo "abi: no CI_API function found in $header"; exit 1; }

fail=0
if grep -v '^ci_' "$tmp/exported" > "$tmp/foreign"; then
    echo "abi: $lib exports symbols outside ci_*:"; sed 's/^/  /' "$tmp/foreign"; fail=1
fi
if comm -23 "$tmp/exported" "$tmp/declared" | grep '^ci_' > "$tmp/extra"; then
    echo "abi: $lib exports ci_* symbols the header does not declare:"; sed 's/^/  /' "$tmp/extra"; fail=1
fi
if comm -13 "$tmp/exported" "$tmp/declared" > "$tmp/missing" && [ -s "$tmp/missing" ]; then
    echo "abi: $header declares functions $lib does not export:"; sed 's/^/  /' "$tmp/missing"; fail=1
fi

# The library verifies package manifests and never signs one: key
# generation, secret keys and signing are codeinterp-manifest's own
# (tools/manifest/keys.c). So it imports none of libsodium's key-making
# or signing calls, and holds none of the tool's functions, even as a
# local symbol (checked when the library still has its symbol table).
signer_imports='crypto_sign_keypair crypto_sign_seed_keypair crypto_sign_detached crypto_sign'
signer_functions='ci_manifest_keygen ci_manifest_read_secret_key ci_manifest_sign'
nm -D --undefined-only "$lib" | awk '{ print $NF }' | sed 's/@.*//' > "$tmp/imports"
for f in $signer_imports; do
    if grep -qx "$f" "$tmp/imports"; then
        echo "abi: $lib imports $f: signing belongs in codeinterp-manifest"; fail=1
    fi
done
if nm "$lib" > "$tmp/symbols" 2> /dev/null && [ -s "$tmp/symbols" ]; then
    for f in $signer_functions; do
        if awk '{ print $NF }' "$tmp/symbols" | grep -qx "$f"; then
            echo "abi: $lib holds $f: it belongs in codeinterp-manifest"; fail=1
        fi
    done
fi

major=$(sed -n 's/^#define CI_VERSION_MAJOR \([0-9]*\)$/\1/p' "$header")
soname=$(objdump -p "$lib" | awk '$1 == "SONAME" { print $2 }')
if [ "$soname" != "libcodeinterp.so.$major" ]; then
    echo "abi: $lib has soname '$soname', not libcodeinterp.so.$major"; fail=1
fi

[ $fail = 0 ] && echo "abi: $lib exports the $(wc -l < "$tmp/declared") functions of $header, nothing else, and cannot sign a manifest"
exit $fail
