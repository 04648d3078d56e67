#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Builds the .deb with CPack, unpacks it into a temporary root and runs the unpacked program
# from there; then validates the desktop entry and the AppStream metainfo.
# usage: test_package.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT

(cd "$build" && cpack -G DEB -B "$root/out" >"$root/cpack.log" 2>&1) || { cat "$root/cpack.log"; exit 1; }
deb=$(ls "$root"/out/paralens_*.deb)
echo "built $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB)"
dpkg-deb -x "$deb" "$root/fs"

# Runtime dependencies are Debian packages, never build tools.
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for lib in libqt6widgets6 libqcustomplot2.1-qt6 qt6-qpa-plugins; do
    grep -q "$lib" <<<"$depends" || { echo "FAIL: Depends lacks $lib"; exit 1; }
done
for tool in cmake -dev gcc; do
    grep -q -- "$tool" <<<"$depends" && { echo "FAIL: Depends names build tool $tool"; exit 1; }
done

for f in usr/bin/paralens usr/share/applications/io.github.paralens.ParaLens.desktop \
         usr/share/metainfo/io.github.paralens.ParaLens.metainfo.xml \
         usr/share/mime/packages/io.github.paralens.ParaLens.xml \
         usr/share/icons/hicolor/scalable/apps/io.github.paralens.ParaLens.svg \
         usr/share/icons/hicolor/48x48/apps/io.github.paralens.ParaLens.png \
         usr/share/man/man1/paralens.1.gz; do
    [ -e "$root/fs/$f" ] || { echo "FAIL: package lacks /$f"; exit 1; }
done

bin="$root/fs/usr/bin/paralens"
"$bin" --version | grep -q '^paralens ' || { echo "FAIL: --version"; exit 1; }
example=$(ls "$root"/fs/usr/share/paralens/examples/*.paralens.json | head -1)
[ -n "$example" ] || { echo "FAIL: no example scenario in the package"; exit 1; }
"$bin" eval "$example" --json >"$root/eval.json" || { echo "FAIL: eval $example"; exit 1; }
grep -Eq '"step_seconds": *[0-9]' "$root/eval.json" || { echo "FAIL: eval output"; exit 1; }
echo "unpacked paralens ran --version and eval $(basename "$example")"

# paralens-measure, when built, is its own package: the app's package works without CUDA.
[ -e "$root/fs/usr/bin/paralens-measure" ] && { echo "FAIL: paralens .deb holds paralens-measure"; exit 1; }
if measure=$(ls "$root"/out/paralens-measure_*.deb 2>/dev/null); then
    contents=$(dpkg-deb -c "$measure")
    grep -q './usr/bin/paralens-measure$' <<<"$contents" || { echo "FAIL: measure .deb"; exit 1; }
    grep -q 'man1/paralens-measure.1.gz' <<<"$contents" || { echo "FAIL: measure man page"; exit 1; }
    echo "built $(basename "$measure")"
fi

if command -v desktop-file-validate >/dev/null; then
    desktop-file-validate "$root/fs/usr/share/applications/io.github.paralens.ParaLens.desktop"
    echo "desktop-file-validate: ok"
fi
if command -v appstreamcli >/dev/null; then
    appstreamcli validate --no-net "$root/fs/usr/share/metainfo/io.github.paralens.ParaLens.metainfo.xml"
fi
echo "package test passed"
