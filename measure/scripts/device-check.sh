#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# paralens-measure on one GPU (written for one H200), end to end, in a few minutes:
#   build    core + paralens-measure (no GUI), and test_measure_gpu where Qt 6 Test is found
#   measure  devices; gemm BF16 and FP8 at 8192^3 and a thin 128x8192x8192; membw;
#            collectives on the one GPU (results checked); the gpu-labelled ctest
#   report   paralens calibrate on the profiles, paralens eval of an H200 scenario with the
#            merged profile and without, and a table against the datasheet and published
#            efficiency
# Results (profiles, logs, report.md) go to $OUT, or build/device-check-out.
#
# Usage, from the repository root:
#   measure/scripts/device-check.sh prepare     here: copies what the GPU machine lacks
#                                               (nlohmann_json's headers) to build/device-deps
#   measure/scripts/device-check.sh             on the GPU machine: build, measure, report
#   measure/scripts/device-check.sh report DIR  the report alone, on DIR's profiles, with the
#                                               paralens of build/dev (where the app builds)
# Environment: CUDA_ARCHS (default 90), PARALENS_MEASURE (a built tool: no build),
#   PARALENS (a built paralens for the report; otherwise built when Qt 6 is found).
# Running it again reuses build/device: the second run measures only.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUTDIR=${OUT:-$ROOT/build/device-check-out}
mkdir -p "$OUTDIR"
DEPS=$ROOT/build/device-deps
say() { printf '\n=== %s (%s)\n' "$*" "$(date -u +%H:%M:%S)"; }
GEN=""
command -v ninja >/dev/null && GEN="-G Ninja"
LAUNCHER=""
command -v ccache >/dev/null && LAUNCHER="-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"

# --- prepare (on the developer machine) ------------------------------------------------
prepare() {
    local cfg
    cfg=$(dirname "$(find /usr/share/cmake /usr/lib/cmake /usr/local -name nlohmann_jsonConfig.cmake 2>/dev/null | head -1)")
    [ -f "$cfg/nlohmann_jsonConfig.cmake" ] || { echo "nlohmann_json's CMake package not found"; exit 1; }
    rm -rf "$DEPS" && mkdir -p "$DEPS/include" "$DEPS/share/cmake"
    cp -r "$cfg" "$DEPS/share/cmake/"
    cp -r "$(dirname "$cfg")/../../include/nlohmann" "$DEPS/include/"
    echo "copied nlohmann_json to $DEPS ($(du -sh "$DEPS" | cut -f1)); carry build/device-deps"
}

# --- build (on the GPU machine) ---------------------------------------------------------
build_measure() {
    say "build: core + paralens-measure (no GUI)"
    local common="-DCMAKE_BUILD_TYPE=Release -DPARALENS_BUILD_GUI=OFF -DCMAKE_PREFIX_PATH=$DEPS"
    common+=" -DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHS:-90} $LAUNCHER"
    # With Qt 6 (Core, Test) the tests configure too, for test_measure_gpu; without, not.
    # A second run keeps the first one's choice (and its build).
    TESTS=ON
    local cache=build/device/CMakeCache.txt
    [ -f $cache ] && grep -q '^BUILD_TESTING:BOOL=OFF' $cache && TESTS=OFF
    # shellcheck disable=SC2086
    cmake -S . -B build/device $GEN $common -DBUILD_TESTING=$TESTS >"$OUTDIR/configure.log" 2>&1 || {
        [ $TESTS = ON ] || { tail -30 "$OUTDIR/configure.log"; exit 1; }
        TESTS=OFF
        echo "configure with tests failed (no Qt 6 Test?): building the tool alone"
        # shellcheck disable=SC2086
        cmake -S . -B build/device $GEN $common -DBUILD_TESTING=OFF >"$OUTDIR/configure.log" 2>&1 ||
            { tail -30 "$OUTDIR/configure.log"; exit 1; }
    }
    grep -E "^ \* (Measure|MeasureMPI)," "$OUTDIR/configure.log"
    grep -q "Measure.*paralens-measure: NCCL" "$OUTDIR/configure.log" ||
        { echo "paralens-measure is not configured (see $OUTDIR/configure.log)"; exit 1; }
    local targets="paralens-measure"
    [ $TESTS = ON ] && targets+=" test_measure_gpu"
    # shellcheck disable=SC2086
    cmake --build build/device --target $targets -j "$(nproc)" >"$OUTDIR/build.log" 2>&1 ||
        { tail -40 "$OUTDIR/build.log"; exit 1; }
    BIN=$ROOT/build/device/measure/paralens-measure
    echo "built $BIN ($(grep -c '^\[' "$OUTDIR/build.log") steps)"
}

# `paralens` (calibrate, eval) is the Qt application: built here only where Qt 6 Widgets and
# QCustomPlot are found; otherwise the report runs afterwards with `report DIR`.
build_app() {
    [ -n "${PARALENS:-}" ] && return 0
    say "build: paralens (needs Qt 6 and QCustomPlot)"
    # shellcheck disable=SC2086
    if cmake -S . -B build/device-app $GEN -DCMAKE_BUILD_TYPE=Release -DPARALENS_BUILD_MEASURE=OFF \
        -DBUILD_TESTING=OFF -DCMAKE_PREFIX_PATH="$DEPS" $LAUNCHER >"$OUTDIR/configure-app.log" 2>&1 &&
        cmake --build build/device-app --target paralens -j "$(nproc)" >"$OUTDIR/build-app.log" 2>&1; then
        PARALENS=$ROOT/build/device-app/app/paralens
    else
        echo "no paralens here ($(grep -m1 -E 'Could not find|not found' "$OUTDIR/configure-app.log" | cut -c1-120))"
        echo "then: measure/scripts/device-check.sh report <this OUT folder> on a machine with the app"
    fi
}

# --- measure ----------------------------------------------------------------------------
rc_all=0
run() { # name, args...: one subcommand, its profile to $OUTDIR/name.json
    local name=$1
    shift
    say "$name: paralens-measure $*"
    local t0=$SECONDS
    timeout 300 "$BIN" "$@" --out "$OUTDIR/$name.json" >"$OUTDIR/$name.txt" 2>"$OUTDIR/$name.progress.jsonl"
    local rc=$?
    echo "exit $rc after $((SECONDS - t0)) s"
    grep -v '^{' "$OUTDIR/$name.progress.jsonl" || true # error lines, if any
    [ "$name" = gemm ] && grep -v '^#' "$OUTDIR/$name.txt" | head -12
    [ $rc -eq 0 ] || rc_all=$rc
}

measure() {
    say "machine"
    nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.max.sm --format=csv |
        tee "$OUTDIR/machine.txt" || true
    nvcc --version | tail -2 | tee -a "$OUTDIR/machine.txt" || true
    "$BIN" --version

    say "devices"
    "$BIN" devices >"$OUTDIR/devices.json" 2>"$OUTDIR/devices.err"
    local rc=$?
    echo "exit $rc: $(cat "$OUTDIR/devices.json" "$OUTDIR/devices.err")"
    [ $rc -eq 0 ] || { echo "no usable GPU: stopping"; exit $rc; }

    run gemm gemm --shapes "8192,8192,8192:square;128,8192,8192:thin" -w 10 -n 50
    run membw membw --membw-bytes 4G -w 5 -n 20
    run nccl1 collectives -b 1M -e 1G -f 4 -w 5 -n 20 -c 1 --timeout 60

    if [ "${TESTS:-OFF}" = ON ]; then
        say "ctest -L gpu"
        ctest --test-dir build/device -L gpu --output-on-failure --timeout 300 2>&1 |
            tee "$OUTDIR/ctest-gpu.log" | tail -15
        [ "${PIPESTATUS[0]}" -eq 0 ] || rc_all=1
    else
        say "ctest -L gpu: not built here (no Qt 6 Test)"
    fi
}

# --- report -----------------------------------------------------------------------------
report() { # DIR with gemm.json, membw.json, nccl1.json
    local dir=$1
    local app=${PARALENS:-$ROOT/build/dev/app/paralens}
    if [ -x "$app" ]; then
        say "paralens calibrate"
        local inputs=()
        for n in nccl1 gemm membw; do [ -f "$dir/$n.json" ] && inputs+=("$dir/$n.json"); done
        "$app" calibrate "${inputs[@]}" --out "$dir/profile.json" | tee "$dir/calibrate.txt" ||
            rc_all=1
        say "paralens eval: Llama-3-70B on 64 H200, datasheet vs this profile"
        # The shipped 64xH100 example on H200, once as is and once with the profile.
        local ex=$ROOT/resources/examples/llama3-70b-64xh100.paralens.json
        sed 's/"hardware": "h100-sxm"/"hardware": "h200"/' "$ex" >"$dir/h200-datasheet.paralens.json"
        sed 's/"hardware": "h100-sxm"/"hardware": "h200", "calibration": "profile.json"/' "$ex" \
            >"$dir/h200-profile.paralens.json"
        for s in datasheet profile; do
            "$app" eval "$dir/h200-$s.paralens.json" --json >"$dir/eval-$s.json" || rc_all=1
        done
    else
        say "paralens calibrate / eval: skipped, no paralens at $app"
    fi
    say "table"
    python3 - "$dir" <<'PY' | tee "$dir/report.md"
import json, os, sys
d = sys.argv[1]
def load(n):
    p = os.path.join(d, n + ".json")
    try:
        return json.load(open(p))
    except (OSError, ValueError):
        return None
# Datasheet: NVIDIA H200 SXM, dense (no sparsity). Published: large BF16 GEMMs reach about
# 75-80 % of peak on Hopper, streaming copies about 90 % of HBM bandwidth.
PEAK = {"bf16": 989.0, "fp8": 1979.0}
HBM = 4800.0
g, m, c = load("gemm"), load("membw"), load("nccl1")
prof = g or m or c
if prof:
    s = prof["system"]
    print(f"GPU {s.get('gpu')} x{s.get('gpu_count')}, driver {s.get('driver')}, "
          f"CUDA {s.get('cuda')}, NCCL {s.get('nccl')}\n")
print("| figure | measured | datasheet | % of datasheet | published | within published? |")
print("|---|---|---|---|---|---|")
for e in (g or {}).get("gemm", []):
    dt = e["dtype"]
    pct = 100 * e["tflops"] / PEAK[dt]
    shape = f"{int(e['m'])}x{int(e['n'])}x{int(e['k'])}"
    pub, ok = "", ""
    if dt == "bf16" and e["label"] == "square":
        pub, ok = "75-80 %", "yes" if pct >= 75 else "no"
    print(f"| GEMM {dt.upper()} {shape} ({e['label']}) | {e['tflops']:.0f} TFLOP/s "
          f"| {PEAK[dt]:.0f} TFLOP/s | {pct:.1f} % | {pub} | {ok} |")
if m:
    mem = m["memory"]
    for key, what in (("hbm_gbps", "HBM streaming kernel"), ("d2d_copy_gbps", "cudaMemcpy D2D")):
        v = mem.get(key, 0)
        pct = 100 * v / HBM
        pub, ok = ("about 90 %", "yes" if pct >= 85 else "no") if key == "hbm_gbps" else ("", "")
        print(f"| {what} (read + write) | {v:.0f} GB/s | {HBM:.0f} GB/s | {pct:.1f} % | {pub} | {ok} |")
for name, curves in (c or {}).get("collectives", {}).items():
    for cv in curves:
        big = cv["points"][-1]
        print(f"| NCCL {name}, {cv['ranks']} ranks, {big['size_bytes'] / 2**20:.0f} MiB "
              f"| {big['time_seconds']['median'] * 1e6:.1f} us, algbw {big['algbw_gbps']:.0f} GB/s | | | | |")
for s in ("datasheet", "profile"):
    e = load("eval-" + s)
    if e:
        t = e["time"]
        print(f"\neval Llama-3-70B 64xH200 ({s}): step {t['step_seconds']:.2f} s, "
              f"compute {t['compute_seconds']:.2f} s, MFU {100 * e['throughput']['mfu']:.1f} %, "
              f"{e['throughput']['tokens_per_second']:.0f} tokens/s")
for w in sum([(x or {}).get("warnings", []) for x in (g, m, c)], []):
    print("warning:", w)
PY
}

case "${1:-}" in
prepare)
    prepare
    ;;
report)
    [ -d "${2:-}" ] || { echo "usage: $0 report DIR"; exit 2; }
    report "$2"
    ;;
"")
    T0=$SECONDS
    if [ -n "${PARALENS_MEASURE:-}" ]; then BIN=$PARALENS_MEASURE; else build_measure; fi
    measure
    build_app
    report "$OUTDIR"
    echo "device-check exit $rc_all after $((SECONDS - T0)) s"
    ;;
*)
    sed -n 2,22p "$0"
    exit 2
    ;;
esac
exit $rc_all
