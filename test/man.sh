#!/bin/sh
# The man pages against the header: every CI_API function has a page of
# its own name (a full page or a one-line `.so man3/PAGE.3` alias to the
# page that documents it), every full page is well formed and names only
# functions the header declares, and every constant of the header is
# documented somewhere. Renders the pages with groff when it is there.
#   test/man.sh HEADER MANDIR
set -eu
header=$1 dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
err() { echo "man: $*"; fail=1; }

sed -n 's/^CI_API[^(]*[ *]\(ci_[a-z0-9_]*\)(.*/\1/p' "$header" | sort > "$tmp/functions"
# The types a program names (ci_session, ci_status...): an alias page of
# one leads to a page that uses it.
sed -n 's/^\(typedef .*\|}\) *\**\(ci_[a-z0-9_]*\);$/\2/p; s/^typedef [^(]*(\*\(ci_[a-z0-9_]*\))(.*/\1/p' "$header" |
    sort -u > "$tmp/types"
[ -s "$tmp/functions" ] || { echo "man: no CI_API function found in $header"; exit 1; }

# The function names a full page lists in its NAME section.
names() {
    awk '/^\.SH /{ f = ($2 == "NAME") ; next } f' "$1" | sed 's/\\-.*//' |
        tr ', ' '\n\n' | grep '^ci_' || true
}
alias_target() { sed -n '1s|^\.so man3/\([^ ]*\.3\)$|\1|p' "$1"; }

for page in "$dir"/*.3; do
    base=$(basename "$page" .3)
    target=$(alias_target "$page")
    if [ -n "$target" ]; then
        [ "$(wc -l < "$page")" -eq 1 ] || err "$page: an alias page is one .so line"
        if grep -qx "$base" "$tmp/types"; then
            grep -q "\<$base\>" "$dir/$target" || err "$page: $target does not mention the type $base"
            continue
        fi
        grep -qx "$base" "$tmp/functions" || err "$page: alias for $base, which $header does not declare"
        if [ ! -f "$dir/$target" ] || [ -n "$(alias_target "$dir/$target")" ]; then
            err "$page: .so to $target, which is not a full page in $dir"
        elif ! names "$dir/$target" | grep -qx "$base"; then
            err "$page: $target does not list $base in its NAME section"
        fi
        continue
    fi
    head -n 1 "$page" | grep -q "^\.TH $base 3 " || err "$page: the first line is not .TH $base 3 ..."
    for section in NAME SYNOPSIS DESCRIPTION "SEE ALSO"; do
        grep -q "^\.SH \"*$section\"*\$" "$page" || err "$page: no $section section"
    done
    grep -q '^\.SH NAME' "$page" && ! awk '/^\.SH NAME/{ f = 1; next } /^\.SH /{ f = 0 } f' "$page" | grep -q '\\-' &&
        err "$page: the NAME section has no '\\-' before its description"
    for f in $(names "$page"); do
        grep -qx "$f" "$tmp/functions" || err "$page: lists $f, which $header does not declare"
        awk '/^\.SH SYNOPSIS/{ f = 1; next } /^\.SH /{ f = 0 } f' "$page" | grep -q "[ *]$f(" ||
            err "$page: $f is not declared in its SYNOPSIS"
    done
done

while read -r f; do
    [ -f "$dir/$f.3" ] || err "no page $dir/$f.3 for $f (add a full page or a one-line '.so man3/PAGE.3' alias)"
done < "$tmp/functions"

# Constants and types a program uses (CI_API and CI_STATIC are the
# header's own machinery; names ending in _ are private helpers).
grep -o '\<CI_[A-Z0-9_]*[A-Z0-9]\>' "$header" | sort -u | grep -vx 'CI_API\|CI_STATIC' > "$tmp/constants"
cat "$dir"/*.3 > "$tmp/all"
while read -r c; do
    grep -q "\<$c\>" "$tmp/all" || err "$c, in $header, is in no page"
done < "$tmp/constants"

if command -v groff > /dev/null 2>&1; then
    for page in "$dir"/*.3; do
        [ -n "$(alias_target "$page")" ] && continue
        out=$(groff -man -Tutf8 -ww -z "$page" 2>&1) || err "$page: groff failed"
        [ -z "$out" ] || err "$page: groff warns: $out"
    done
else
    echo "man: groff is not installed; the pages were not rendered"
fi

[ $fail = 0 ] && echo "man: $(wc -l < "$tmp/functions") functions, each with a page; $(ls "$dir"/*.3 | wc -l) pages checked"
exit $fail
