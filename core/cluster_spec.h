// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include <string>

namespace paralens {

/// One accelerator. Peaks are dense (no 2:4 sparsity); bandwidths in GB/s = 1e9 B/s.
struct GpuSpec
{
    std::string name;
    double memory_gib = 0;  ///< usable HBM capacity, GiB
    double hbm_gbps = 0;    ///< HBM bandwidth, GB/s
    double bf16_tflops = 0; ///< dense BF16 peak, TFLOP/s
    double fp8_tflops = 0;  ///< dense FP8 peak, TFLOP/s (0 = no FP8)
};

/// Latency (alpha) terms of the collective model, microseconds.
struct Latencies
{
    double scale_up_us = 3.0;  ///< per hop inside the NVLink / Infinity Fabric domain
    double scale_out_us = 8.0; ///< per hop across the scale-out network
};

/// A cluster: nodes of identical GPUs, a scale-up domain and a scale-out network.
struct ClusterSpec
{
    std::string name;
    GpuSpec gpu;
    int gpus_per_node = 8;
    int scale_up_domain = 8;   ///< GPUs sharing NVLink (8 for HGX, 72 for NVL72)
    double scale_up_gbps = 0;  ///< per-GPU, per-direction scale-up bandwidth, GB/s
    double scale_out_gbps = 0; ///< per-GPU scale-out bandwidth, GB/s
    double pcie_gbps = 50;     ///< host link per GPU for offload, GB/s
    Latencies latencies;
};

} // namespace paralens
