#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Fills seed corpora for the fuzz targets from the project's own files:
#   fuzz/seeds.sh OUTDIR    -> OUTDIR/<target>/ (one folder per fuzz target)
# Scenarios and presets from resources/, profiles from fuzz/seeds/, nccl-tests logs from
# tests/data/nccl plus small generated logs, runs files and CSVs. Nothing is downloaded.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
out=$1
mkdir -p "$out/fuzz_scenario" "$out/fuzz_preset" "$out/fuzz_profile" "$out/fuzz_nccl_log" \
         "$out/fuzz_estimate" "$out/fuzz_runs" "$out/fuzz_iteration_csv" \
         "$out/fuzz_launch_megatron" "$out/fuzz_launch_toml" "$out/fuzz_launch_deepspeed" \
         "$out/fuzz_hf_config"

for f in "$src"/resources/examples/*.json; do
    cp "$f" "$out/fuzz_scenario/"
    # fuzz_estimate: first byte even = scenario JSON follows.
    { printf ' '; cat "$f"; } > "$out/fuzz_estimate/$(basename "$f")"
done
# A few decoded-plan seeds (first byte odd) for fuzz_estimate.
for i in 1 3 5 7 9; do
    head -c 64 /dev/zero | tr '\0' "\\$(printf '%03o' $((i * 23)))" > "$out/fuzz_estimate/plan-$i"
    printf '\001' | cat - "$out/fuzz_estimate/plan-$i" > "$out/fuzz_estimate/plan-$i.tmp"
    mv "$out/fuzz_estimate/plan-$i.tmp" "$out/fuzz_estimate/plan-$i"
done
find "$src/resources/presets" -name '*.json' -exec cp {} "$out/fuzz_preset/" \;
cp "$src"/fuzz/seeds/*.json "$out/fuzz_profile/"
# Test data, where the suites keep files: scenarios, profiles and logs.
if [ -d "$src/tests/data" ]; then
    find "$src/tests/data" -name '*.paralens.json' -exec cp {} "$out/fuzz_scenario/" \;
    find "$src/tests/data" -name '*profile*.json' -exec cp {} "$out/fuzz_profile/" \;
    find "$src/tests/data" \( -name '*.txt' -o -name '*.log' \) -exec cp {} "$out/fuzz_nccl_log/" \;
fi

# Launch files in each framework's layout (tests/data/launch/files): scripts, TOML, JSON.
for f in "$src"/tests/data/launch/files/*; do
    case "$f" in
        *.sh) cp "$f" "$out/fuzz_launch_megatron/" ;;
        *.toml) cp "$f" "$out/fuzz_launch_toml/" ;;
        *.json) cp "$f" "$out/fuzz_launch_deepspeed/" ;;
    esac
done
printf '%s\n' '--tensor-model-parallel-size 2 --num-layers 4 --hidden-size 64 --num-attention-heads 4' \
    '--ffn-hidden-size 128 --vocab-size 999 --tokenizer-type NullTokenizer --seq-length 256' \
    "--num-experts 4 --moe-layer-freq '([0]*1+[1]*3)' --nnodes 1 --nproc-per-node 2" \
    > "$out/fuzz_launch_megatron/moe-args.txt"
# Hugging Face config.json files, one per family the importer reads.
if [ -d "$src/tests/data/hf" ]; then
    cp "$src"/tests/data/hf/*.json "$out/fuzz_hf_config/"
fi

# Small generated nccl-tests logs: an all_reduce table with and without footer, srun prefixes.
gen() { # $1 ranks, $2 prefix
    p=$2
    printf '%s# nccl-tests version 2.17.8 nccl-headers=22703 nccl-library=22703\n' "$p"
    printf '%s# Collective test starting: all_reduce_perf\n' "$p"
    printf '%s# nThread 1 nGpus 1 minBytes 8 maxBytes 1048576 step: 4(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n' "$p"
    printf '%s# Using devices\n' "$p"
    r=0
    while [ $r -lt "$1" ]; do
        printf '%s#  Rank %2d Group  0 Pid %d on node%02d device  %d [0x%02x] NVIDIA H100 80GB HBM3\n' \
            "$p" $r $((1000 + r)) $((r / 8)) $((r % 8)) $r
        r=$((r + 1))
    done
    printf '%s#\n' "$p"
    printf '%s#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n' "$p"
    printf '%s#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n' "$p"
    printf '%s           8             2     float     sum      -1    20.10    0.00    0.00      0    19.80    0.00    0.00      0\n' "$p"
    printf '%s        4096          1024     float     sum      -1    22.40    0.18    0.32      0    22.10    0.19    0.32      0\n' "$p"
    printf '%s     1048576        262144     float     sum      -1    45.00   23.30   40.78      0    44.20   23.72   41.51      0\n' "$p"
    printf '%s# Out of bounds values : 0 OK\n%s# Avg bus bandwidth    : 13.7\n' "$p" "$p"
}
gen 8 '' > "$out/fuzz_nccl_log/gen-allreduce-8.txt"
gen 16 '0: ' > "$out/fuzz_nccl_log/gen-allreduce-16-srun.txt"
gen 2 '' | head -n 12 > "$out/fuzz_nccl_log/gen-cut-off.txt"

# Measured-runs files: an inline scenario per example, with each kind of measured figure.
i=0
for f in "$src"/resources/examples/*.paralens.json; do
    i=$((i + 1))
    { printf '{"runs": [{"name": "run %d", "scenario": ' "$i"; cat "$f"
      printf ', "measured": {"step_seconds": 12.5, "tokens_per_second": 250000, '
      printf '"tflops_per_gpu": 180, "flops_convention": "causal", "peak_memory_gib": 61.2, '
      printf '"memory_kind": "reserved"}, "source": "seed", "notes": "generated"}]}\n'
    } > "$out/fuzz_runs/example-$i.paralens-runs.json"
done
printf '%s\n' '{"runs": [' \
    '{"name": "a", "scenario": {"gpus": 64}, "measured": {"mfu": 0.41, "flops_convention": "narayanan-eq3"}},' \
    '{"name": "b", "scenario": {"gpus": 64, "parallel": {"tp": 8, "pp": 2}}, "measured": {"step_seconds": 3}}' \
    ']}' > "$out/fuzz_runs/two-runs.paralens-runs.json"

# Measured-iteration CSVs: both layouts, small.
hdr='# GPUs,global batch,micro batch,hidden size,attention heads,# layers,sequence length,tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms)'
printf '%s\n2,16,8,1024,16,24,1024,1,1,2,400.5\n8,32,4,1024,16,24,1024,2,2,2,250.25\n' "$hdr" \
    > "$out/fuzz_iteration_csv/single.csv"
printf 'Parameters (billion),%s\n3.6,64,512,8,3072,32,30,2048,1,64,1,3500.0\n' "$hdr" \
    > "$out/fuzz_iteration_csv/multi.csv"
