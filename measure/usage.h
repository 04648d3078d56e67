// SPDX-License-Identifier: GPL-3.0-or-later
// `paralens-measure --help`, shared by the launcher (which prints it even where the CUDA
// libraries are missing) and the measurement module.
#pragma once

namespace paralens::measure {

inline constexpr const char* kUsage =
    R"(Usage: paralens-measure SUBCOMMAND [OPTIONS]

Micro-benchmarks for ParaLens' calibration profile (schema 1). One process drives every
local GPU; across nodes launch one process per node with mpirun/srun (when built with MPI),
rank 0 prints and writes the profile.

Subcommands:
  collectives   all_reduce, all_gather, reduce_scatter, alltoall, sendrecv, broadcast
                over all GPUs and sub-groups of 2, 4, 8, ... (ncclCommSplit)
  gemm          cuBLASLt BF16 (and FP8 where supported) TFLOP/s per shape
  membw         HBM bandwidth: device-to-device copy and a streaming kernel
  all           the three above
  devices       list the visible GPUs as JSON on stdout (exit 3 when there is none)

Options (collectives follow nccl-tests' flags; sizes take K, M, G suffixes):
  -b, --minbytes SIZE     smallest message (default 32M)
  -e, --maxbytes SIZE     largest message (default 1G)
  -f, --stepfactor F      size multiplier (default 2)
  -w, --warmup_iters N    warm-up iterations (default 5)
  -n, --iters N           timed iterations; median, min, max reported (default 20)
  -c, --check [0|1]       check results (default 0)
  --dtype bf16|fp32       collective data type (default bf16)
  --ops LIST              comma-separated collectives (default all six)
  --groups LIST           sub-group sizes (default 2,4,8,... below the GPU count)
  --timeout SECONDS       abort a collective that has not finished (default 60)
  --shapes LIST           GEMM shapes "m,n,k[:label];..." (default: square sweep and
                          Llama-3-70B layer GEMMs)
  --scenario FILE         GEMM shapes of a .paralens.json scenario's layers (with the
                          square sweep)
  --no-fp8                skip FP8 GEMMs
  --membw-bytes SIZE      buffer for membw (default 1G)
  --out PROFILE.json      write the calibration profile (atomically)
  --help, --version

Output: a table on stdout (collectives in nccl-tests' layout, which `paralens calibrate`
also reads), progress as one JSON object per line on stderr.

Exit codes:
  0  success
  1  a CUDA, NCCL or cuBLASLt call failed (profile of what was measured still written)
  2  bad command line or input file (--scenario)
  3  no CUDA device visible ("error: no CUDA device visible"), or the CUDA runtime,
     NCCL, cuBLASLt or the NVIDIA driver could not be loaded (the same line names it)
  4  a collective hung past --timeout and was aborted (profile so far still written)
)";

} // namespace paralens::measure
