#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Fails when an #include crosses a layer boundary (docs/architecture.md lists the layers):
#   core/, fuzz/  plain C++: no Qt, no QCustomPlot, no widgets/, app/ or measure/, no CUDA
#   widgets/      no app/, no measure/, no CUDA
#   app/          no measure/ (it runs paralens-measure as a program), no CUDA
#   measure/      no Qt, no widgets/ or app/
# Usage: check_layers.sh SOURCE_DIR     checks the tree
#        check_layers.sh --self-test    plants one forbidden include per rule in a scratch
#                                       tree and fails unless every one is reported
set -u

qt='(Q[A-Za-z]|qcustomplot)'
cuda='(cuda|cublas|nccl|nvml|cufft|curand|thrust/)'
dirs='(\.\./)*'

# rule FOLDER WHAT REGEX: prints every include line in FOLDER matching REGEX.
rule() {
    local folder=$1 what=$2 regex=$3
    [ -d "$root/$folder" ] || return 0
    local hits
    hits=$(grep -rnE --include='*.h' --include='*.hpp' --include='*.cpp' --include='*.cu' \
        --include='*.cuh' "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]$regex" \
        "$root/$folder" | sed "s|^$root/||")
    if [ -n "$hits" ]; then
        echo "$folder/ must not include $what:"
        echo "$hits" | sed 's/^/  /'
        found=1
    fi
}

check() {
    root=$1
    found=0
    for layer in core fuzz; do
        rule "$layer" "Qt or QCustomPlot" "$qt"
        rule "$layer" "widgets/, app/ or measure/" "$dirs(widgets|app|measure)/"
        rule "$layer" "CUDA headers" "$cuda"
    done
    rule widgets "app/ or measure/" "$dirs(app|measure)/"
    rule widgets "CUDA headers" "$cuda"
    rule app "measure/" "${dirs}measure/"
    rule app "CUDA headers" "$cuda"
    rule measure "Qt" "$qt"
    rule measure "widgets/ or app/" "$dirs(widgets|app)/"
    return $found
}

self_test() {
    tmp=$(mktemp -d) || exit 2
    trap 'rm -rf "$tmp"' EXIT
    local cases=(
        'core/a.h|#include <QString>'
        'core/b.cpp|#include "widgets/palette.h"'
        'core/c.cpp|  #  include "../app/document.h"'
        'core/d.h|#include <cuda_runtime.h>'
        'core/e.h|#include <qcustomplot.h>'
        'fuzz/f.cpp|#include "app/cli.h"'
        'widgets/g.cpp|#include "app/mainwindow.h"'
        'widgets/h.h|#include "measure/common.h"'
        'app/i.cpp|#include "measure/common.h"'
        'app/j.cpp|#include <nccl.h>'
        'measure/k.cpp|#include "widgets/units.h"'
        'measure/l.cu|#include <QDebug>'
    )
    local failed=0 c file line
    for c in "${cases[@]}"; do
        file=${c%%|*}
        line=${c#*|}
        rm -rf "${tmp:?}"/*
        mkdir -p "$tmp/$(dirname "$file")"
        printf '%s\n' "$line" > "$tmp/$file"
        if check "$tmp" > /dev/null; then
            echo "not caught: $file: $line"
            failed=1
        fi
    done
    # Allowed includes stay quiet.
    rm -rf "${tmp:?}"/*
    mkdir -p "$tmp/core" "$tmp/widgets" "$tmp/app" "$tmp/measure"
    printf '#include "core/units.h"\n#include <queue>\n' > "$tmp/core/ok.h"
    printf '#include "core/units.h"\n#include <QWidget>\n' > "$tmp/widgets/ok.h"
    printf '#include "widgets/palette.h"\n#include "core/measure_exit_codes.h"\n' > "$tmp/app/ok.cpp"
    printf '#include "core/units.h"\n#include <cuda_runtime.h>\n' > "$tmp/measure/ok.cu"
    if ! check "$tmp"; then
        echo "allowed includes reported"
        failed=1
    fi
    [ $failed -eq 0 ] && echo "every forbidden include caught (${#cases[@]} cases)"
    return $failed
}

if [ "${1:-}" = "--self-test" ]; then
    self_test
    exit $?
fi
[ -d "${1:-}" ] || { echo "usage: $0 SOURCE_DIR | --self-test" >&2; exit 2; }
if check "$1"; then
    echo "layering: no include crosses a layer boundary"
    exit 0
fi
exit 1
