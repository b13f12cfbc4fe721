#!/bin/sh
# Turns a source file of another language (the worker's Python) into a C
# header that defines it as a NUL-terminated array, so that the program
# that runs it stays one self-contained executable while the source is a
# real file that is linted and tested as such.
#   sh tools/embed.sh NAME INPUT OUTPUT
# defines  static const char NAME[]  holding INPUT's bytes and a NUL.
set -eu
[ $# -eq 3 ] || { echo 'usage: embed.sh NAME INPUT OUTPUT' >&2; exit 2; }
name=$1 in=$2 out=$3
case $name in
''|[!a-z_]*|*[!a-z0-9_]*) echo "embed.sh: $name is not a C identifier" >&2; exit 2 ;;
esac
tmp=$out.tmp
{
    printf '/* Generated from %s by tools/embed.sh: edit that file instead. */\n' "$in"
    printf 'static const char %s[] = {\n' "$name"
    od -An -v -tx1 "$in" | sed -e 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g' -e 's/^/   /'
    printf '    0x00\n};\n'
} > "$tmp"
mv "$tmp" "$out"
