// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/fitted_constants.h"
#include "core/time.h"

#include <array>

namespace paralens {
namespace {

struct Entry
{
    FitConstant constant;
    std::string_view key;
    ConstantBounds bounds;
};

// Bounds are physical limits, not guesses of the answer; docs/fit.md gives the reasoning.
constexpr std::array<Entry, 9> kEntries{{
    {FitConstant::GemmEfficiency,
     "gemm_efficiency",
     {0.25, 0.95,
      "no dense GEMM sustains the datasheet peak (clocks drop under load; cuBLAS's largest "
      "BF16 GEMMs reach about 0.8-0.9 of it, NVIDIA Matrix Multiplication Background guide); "
      "below a quarter of the peak a GEMM is not tensor-core bound"}},
    {FitConstant::GemmHalfSize,
     "gemm_half_size",
     {0.0, 512.0,
      "tensor-core GEMMs reach half their large-depth throughput when the reduction depth K "
      "is some tens to a few hundred (K tiles of 64-128 in cuBLAS and CUTLASS; 159 in OpenXLA's "
      "measured H100 table); 0 is no shallow-GEMM penalty"}},
    {FitConstant::HbmEfficiency,
     "hbm_efficiency",
     {0.3, 1.0,
      "streaming kernels reach 0.8-0.93 of the datasheet HBM bandwidth (STREAM-like copies, "
      "NVIDIA and AMD bandwidth tests); small unfused element-wise kernels reach much less; "
      "never more than the datasheet figure"}},
    {FitConstant::AttentionRatio,
     "attention_efficiency_ratio",
     {0.3, 1.3,
      "FlashAttention-2 forward reaches about 0.73 of the A100 peak (Dao 2023), "
      "FlashAttention-3 about 0.75 of the H100 FP16 peak (Shah et al. 2024), against GEMMs at "
      "0.7-0.8: near 1; older kernels' backward passes reach a third of that"}},
    {FitConstant::ScaleUpEfficiency,
     "scale_up_efficiency",
     {0.3, 1.1,
      "nccl-tests bus bandwidth over the per-direction NVLink rate is about 0.8 (A100 240/300, "
      "H100 370/450 GB/s); NVLink SHARP reductions can pass the line rate slightly"}},
    {FitConstant::ScaleOutEfficiency,
     "scale_out_efficiency",
     {0.3, 1.0,
      "achieved over nominal NIC rate: 0.92-0.98 on InfiniBand NDR in nccl-tests, less on "
      "congested RoCE; never above the line rate"}},
    {FitConstant::DpOverlap,
     "dp_overlap_fraction",
     {0.0, 1.0, "a share of the backward window, by definition"}},
    {FitConstant::LayerOverhead,
     "layer_overhead_seconds",
     {0.0, 5e-3,
      "a layer's forward, recomputation and backward run 100-200 operators; eager PyTorch "
      "spends some 10-20 us of CPU on each (the launch overhead CUDA Graphs remove), so a GPU "
      "that outruns its CPU waits up to a few ms per layer; 5 ms bounds it"}},
    {FitConstant::StepOverhead,
     "step_overhead_seconds",
     {0.0, 2.0,
      "gradient clipping, loss-scale checks, host synchronisation and logging cost "
      "milliseconds to a few hundred per step; 2 s bounds it"}},
}};

constexpr std::array<FitConstant, 9> kAll{
    FitConstant::GemmEfficiency, FitConstant::GemmHalfSize,      FitConstant::HbmEfficiency,
    FitConstant::AttentionRatio, FitConstant::ScaleUpEfficiency, FitConstant::ScaleOutEfficiency,
    FitConstant::DpOverlap,      FitConstant::LayerOverhead,     FitConstant::StepOverhead};

// K is ModelConstants or const ModelConstants.
template <typename K> auto field(FitConstant c, K& k) -> decltype(&k.gemm_efficiency)
{
    switch (c) {
    case FitConstant::GemmEfficiency:
        return &k.gemm_efficiency;
    case FitConstant::GemmHalfSize:
        return &k.gemm_half_size;
    case FitConstant::HbmEfficiency:
        return &k.hbm_efficiency;
    case FitConstant::AttentionRatio:
        return &k.attention_efficiency_ratio;
    case FitConstant::ScaleUpEfficiency:
        return &k.scale_up_efficiency;
    case FitConstant::ScaleOutEfficiency:
        return &k.scale_out_efficiency;
    case FitConstant::DpOverlap:
        return &k.dp_overlap_fraction;
    case FitConstant::LayerOverhead:
        return &k.layer_overhead_seconds;
    case FitConstant::StepOverhead:
        return &k.step_overhead_seconds;
    }
    return &k.gemm_efficiency;
}

char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c;
}

} // namespace

std::span<const FitConstant> allFitConstants()
{
    return kAll;
}

std::string_view fitConstantKey(FitConstant c)
{
    return kEntries[std::size_t(c)].key;
}

std::optional<FitConstant> parseFitConstant(std::string_view key)
{
    for (const Entry& e : kEntries)
        if (e.key == key)
            return e.constant;
    return std::nullopt;
}

ConstantBounds fitConstantBounds(FitConstant c)
{
    return kEntries[std::size_t(c)].bounds;
}

double constantValue(FitConstant c, const ModelConstants& k, const std::string& gpu_name)
{
    if (c == FitConstant::GemmEfficiency && k.gemm_efficiency <= 0) {
        GpuSpec gpu;
        gpu.name = gpu_name;
        return defaultGemmEfficiency(gpu, false);
    }
    return *field(c, k);
}

void setConstant(FitConstant c, ModelConstants& k, double value)
{
    *field(c, k) = value;
}

bool sameGpuName(std::string_view a, std::string_view b)
{
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (lower(a[i]) != lower(b[i]))
            return false;
    return true;
}

bool FittedConstants::empty() const
{
    if (!gemm_efficiency.empty())
        return false;
    for (FitConstant c : kAll)
        if (c != FitConstant::GemmEfficiency && value(c))
            return false;
    return true;
}

std::optional<double> FittedConstants::value(FitConstant c) const
{
    switch (c) {
    case FitConstant::GemmEfficiency:
        return std::nullopt;
    case FitConstant::GemmHalfSize:
        return gemm_half_size;
    case FitConstant::HbmEfficiency:
        return hbm_efficiency;
    case FitConstant::AttentionRatio:
        return attention_efficiency_ratio;
    case FitConstant::ScaleUpEfficiency:
        return scale_up_efficiency;
    case FitConstant::ScaleOutEfficiency:
        return scale_out_efficiency;
    case FitConstant::DpOverlap:
        return dp_overlap_fraction;
    case FitConstant::LayerOverhead:
        return layer_overhead_seconds;
    case FitConstant::StepOverhead:
        return step_overhead_seconds;
    }
    return std::nullopt;
}

void FittedConstants::set(FitConstant c, double v)
{
    switch (c) {
    case FitConstant::GemmEfficiency:
        break; // per GPU: gemm_efficiency
    case FitConstant::GemmHalfSize:
        gemm_half_size = v;
        break;
    case FitConstant::HbmEfficiency:
        hbm_efficiency = v;
        break;
    case FitConstant::AttentionRatio:
        attention_efficiency_ratio = v;
        break;
    case FitConstant::ScaleUpEfficiency:
        scale_up_efficiency = v;
        break;
    case FitConstant::ScaleOutEfficiency:
        scale_out_efficiency = v;
        break;
    case FitConstant::DpOverlap:
        dp_overlap_fraction = v;
        break;
    case FitConstant::LayerOverhead:
        layer_overhead_seconds = v;
        break;
    case FitConstant::StepOverhead:
        step_overhead_seconds = v;
        break;
    }
}

void FittedConstants::applyTo(std::string_view gpu_name, ModelConstants& k) const
{
    for (const GpuEfficiency& g : gemm_efficiency)
        if (sameGpuName(g.gpu, gpu_name)) {
            k.gemm_efficiency = g.value;
            break;
        }
    for (FitConstant c : kAll)
        if (c != FitConstant::GemmEfficiency)
            if (const auto v = value(c))
                *field(c, k) = *v;
}

} // namespace paralens
