#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Every tr() string of widgets/ and app/ is extractable by lupdate: lupdate runs clean (no
# "Qualifying with unknown namespace/class", no "Cannot invoke tr() like this", no tr() in a
# class without Q_OBJECT) and finds the strings. `make translations` writes the same file.
# Usage: check_translations.sh LUPDATE SOURCE_DIR
set -u
lupdate=$1
src=$2
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
out=$("$lupdate" -I "$src" -locations none "$src/widgets" "$src/app" -ts "$tmp/paralens.ts" 2>&1)
rc=$?
noise=$(grep -vE "^Scanning directory |^Updating '|^ +Found [0-9]+ source text|^$" <<<"$out")
found=$(sed -nE 's/^ +Found ([0-9]+) source text.*/\1/p' <<<"$out")
if [ $rc -ne 0 ] || [ -n "$noise" ] || [ "${found:-0}" -eq 0 ]; then
    echo "lupdate (exit $rc) did not extract the strings cleanly:"
    echo "$out"
    exit 1
fi
echo "lupdate: $found translatable strings, no warnings"
