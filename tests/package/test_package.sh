#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Builds the .deb with CPack, unpacks it into a temporary root and runs the unpacked program
# from there; then validates the desktop entry and the AppStream metainfo.
# With paralens-measure built (MEASURE_BUILT=1) it checks that package too: it names the CUDA
# runtime, NCCL and cuBLASLt packages, and its unpacked launcher starts without a GPU.
# usage: test_package.sh BUILD_DIR SOURCE_DIR MEASURE_BUILT
set -euo pipefail
build=$1 src=$2 measure_built=${3:-0}
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
measure=$(ls "$root"/out/paralens-measure_*.deb 2>/dev/null || true)
if [ "$measure_built" != 1 ]; then
    [ -z "$measure" ] || { echo "FAIL: paralens-measure .deb without paralens-measure built"; exit 1; }
    echo "paralens-measure not built here (no CUDA toolkit, NCCL or cuBLASLt): its package checks skipped"
else
    [ -n "$measure" ] || { echo "FAIL: paralens-measure was built but has no .deb"; exit 1; }
    contents=$(dpkg-deb -c "$measure")
    grep -q './usr/bin/paralens-measure$' <<<"$contents" || { echo "FAIL: measure .deb"; exit 1; }
    grep -q 'man1/paralens-measure.1.gz' <<<"$contents" || { echo "FAIL: measure man page"; exit 1; }
    echo "built $(basename "$measure")"
    dpkg-deb -x "$measure" "$root/mfs"
    impl=$(find "$root/mfs/usr/lib" -name paralens-measure-impl.so)
    [ -n "$impl" ] || { echo "FAIL: measure .deb lacks paralens-measure-impl.so"; exit 1; }
    # The CUDA libraries the packaged module really links (readelf), and the CUDA major
    # version their sonames carry, are what the package must name.
    needed=$(readelf -d "$impl" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
    echo "module needs: $(tr '\n' ' ' <<<"$needed")"
    major=$(sed -n 's/^libcudart\.so\.\([0-9][0-9]*\)$/\1/p' <<<"$needed")
    [ -n "$major" ] || { echo "FAIL: the module does not link libcudart.so.N"; exit 1; }
    grep -qx "libcublasLt.so.$major" <<<"$needed" || { echo "FAIL: no libcublasLt.so.$major"; exit 1; }
    grep -qx 'libnccl.so.2' <<<"$needed" || { echo "FAIL: no libnccl.so.2"; exit 1; }
    declared=$(dpkg-deb -f "$measure" Depends Recommends)
    echo "$declared"
    # One comma-separated relation per library, naming NVIDIA's repository package.
    relations=$(sed -n 's/^\(Depends\|Recommends\): //p' <<<"$declared" | tr ',' '\n')
    for want in "cuda-cudart-$major-[0-9]" "libcublas-$major-[0-9]" "libnccl2"; do
        grep -Eq "(^| )$want" <<<"$relations" || { echo "FAIL: Depends/Recommends lack $want"; exit 1; }
    done
    # The unpacked launcher finds its module in ../lib and starts without a GPU: one line
    # and exit 3 where there is no device (or driver), the device list where there is.
    set +e
    "$root/mfs/usr/bin/paralens-measure" devices >"$root/devices.out" 2>"$root/devices.err"
    rc=$?
    set -e
    if [ $rc -eq 3 ]; then
        [ "$(wc -l <"$root/devices.err")" -eq 1 ] && grep -q '^error: no CUDA device visible' "$root/devices.err" \
            || { echo "FAIL: devices without a GPU:"; cat "$root/devices.err"; exit 1; }
    elif [ $rc -ne 0 ]; then
        echo "FAIL: unpacked paralens-measure devices exited $rc"; cat "$root/devices.err"; exit 1
    fi
    echo "unpacked paralens-measure devices: exit $rc, $(cat "$root/devices.err" "$root/devices.out")"
fi

if command -v desktop-file-validate >/dev/null; then
    desktop-file-validate "$root/fs/usr/share/applications/io.github.paralens.ParaLens.desktop"
    echo "desktop-file-validate: ok"
fi
if command -v appstreamcli >/dev/null; then
    appstreamcli validate --no-net "$root/fs/usr/share/metainfo/io.github.paralens.ParaLens.metainfo.xml"
fi
echo "package test passed"
