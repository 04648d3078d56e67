// SPDX-License-Identifier: GPL-3.0-or-later
// The `gemm` subcommand: achieved TFLOP/s of cuBLASLt matmuls (BF16, and FP8 where the GPU
// has it) on device 0.
#pragma once
#include "measure/common.h"

#include "core/calibration.h"
#include "core/gemm_shapes.h"

#include <cstdio>
#include <string>
#include <vector>

namespace paralens::measure {

/// Parses "m,n,k[:label];m,n,k[:label]...". Throws std::invalid_argument naming the bad item.
std::vector<GemmShape> parseShapes(const std::string& text);

/// A square sweep (1024..16384) and the layer GEMMs of a Llama-3-70B-like layer at 8192
/// tokens per micro-batch, TP 1: qkv, attn_out, mlp_up (gate+up), mlp_down.
std::vector<GemmShape> defaultShapes();

/// Times each shape (median of opt.iters after opt.warmup) and prints one line per shape.
std::vector<GemmPoint> runGemm(const std::vector<GemmShape>& shapes, const Options& opt,
                               std::FILE* table, std::vector<std::string>& warnings);

} // namespace paralens::measure
