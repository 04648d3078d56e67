#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# One-shot check of paralens-measure on a machine with a GPU (e.g. one H200):
# builds the tool (core + measure only, no GUI, no tests), then runs
#   1. GEMM 8192^3 BF16 (and FP8 where the GPU has it),
#   2. HBM bandwidth (device-to-device copy and streaming kernel),
#   3. the single-GPU NCCL path (all six collectives on one rank, results checked),
# and prints the results. Profiles go to $OUT (or ./device-check-out) for inspection.
#
# Usage: measure/scripts/device-check.sh            (from the repository root)
#        PARALENS_MEASURE=/path/to/paralens-measure measure/scripts/device-check.sh
set -u
cd "$(dirname "$0")/../.."
OUTDIR=${OUT:-$PWD/device-check-out}
mkdir -p "$OUTDIR"
BUILD=build/device
say() { printf '\n=== %s (%s)\n' "$*" "$(date -u +%H:%M:%S)"; }

say "machine"
nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.max.sm --format=csv || true
nvcc --version | tail -2 || true

BIN=${PARALENS_MEASURE:-}
if [ -z "$BIN" ]; then
    say "build (core + paralens-measure)"
    GEN=""
    command -v ninja >/dev/null && GEN="-G Ninja"
    cmake -S . -B "$BUILD" $GEN -DCMAKE_BUILD_TYPE=Release -DPARALENS_BUILD_GUI=OFF \
        -DBUILD_TESTING=OFF ${CUDA_ARCHS:+-DCMAKE_CUDA_ARCHITECTURES=$CUDA_ARCHS} \
        >"$OUTDIR/configure.log" 2>&1 || { tail -30 "$OUTDIR/configure.log"; exit 1; }
    grep -E "Measure|MPI" "$OUTDIR/configure.log" || true
    cmake --build "$BUILD" --target paralens-measure -j "$(nproc)" >"$OUTDIR/build.log" 2>&1 \
        || { tail -40 "$OUTDIR/build.log"; exit 1; }
    BIN=$BUILD/measure/paralens-measure
fi
"$BIN" --version

rc_all=0
run() { # name, args...
    local name=$1; shift
    say "$name: paralens-measure $*"
    local t0=$SECONDS
    timeout 300 "$BIN" "$@" --out "$OUTDIR/$name.json" 2>"$OUTDIR/$name.progress.jsonl"
    local rc=$?
    echo "exit $rc after $((SECONDS - t0)) s"
    grep -v '^{' "$OUTDIR/$name.progress.jsonl" || true   # error lines, if any
    [ $rc -eq 0 ] || rc_all=$rc
}

run gemm gemm --shapes "8192,8192,8192:square" -w 10 -n 50
run membw membw --membw-bytes 4G -w 5 -n 20
run nccl1 collectives -b 1M -e 1G -f 4 -w 5 -n 20 -c 1 --timeout 60

say "summary"
python3 - "$OUTDIR" <<'PY' || true
import json, sys, os
d = sys.argv[1]
def load(n):
    p = os.path.join(d, n + ".json")
    return json.load(open(p)) if os.path.exists(p) else None
g = load("gemm")
if g:
    s = g["system"]
    print(f"gpu {s['gpu']} x{s['gpu_count']}, cuda {s['cuda']}, nccl {s['nccl']}, driver {s['driver']}")
    for e in g["gemm"]:
        print(f"gemm {e['label']} {int(e['m'])}x{int(e['n'])}x{int(e['k'])} {e['dtype']}: "
              f"{e['tflops']:.1f} TFLOP/s ({e['time_seconds']*1e6:.1f} us)")
m = load("membw")
if m:
    mem = m["memory"]
    print(f"membw stream {mem.get('hbm_gbps', 0):.0f} GB/s, d2d copy {mem.get('d2d_copy_gbps', 0):.0f} GB/s")
c = load("nccl1")
if c:
    for name, curves in c["collectives"].items():
        for cv in curves:
            pts = cv["points"]
            big = pts[-1]
            print(f"nccl {name} ranks {cv['ranks']}: {len(pts)} sizes, largest {big['size_bytes']:.0f} B "
                  f"in {big['time_seconds']['median']*1e6:.1f} us (algbw {big['algbw_gbps']:.1f} GB/s)")
for w in sum([(x or {}).get("warnings", []) for x in (g, m, c)], []):
    print("warning:", w)
PY
echo "device-check exit $rc_all"
exit $rc_all
