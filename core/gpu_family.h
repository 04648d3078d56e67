// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include <string>
#include <string_view>

namespace paralens {

/// A GPU family's default GEMM efficiencies (of an 8192³ GEMM, against the dense peak) and its
/// streaming multiprocessors (AMD: compute units); gpu_family.cpp names their sources.
struct FamilyEfficiency
{
    double bf16 = 0;      ///< BF16 GEMMs' share of the BF16 peak
    double fp8_share = 0; ///< FP8 GEMMs' share of the FP8 peak over the BF16 share
    double sms = 0;
    /// The dense BF16 peak, TFLOP/s, the shares apply to at most (0: the GPU's own): a part whose
    /// datasheet peak counts a higher boost clock than its GEMMs sustain (Blackwell: the B200's).
    double sustained_peak_tflops = 0;

    /// The BF16 share of a GPU with dense BF16 peak `peak_tflops` (the shares scaled down where
    /// that peak exceeds sustained_peak_tflops; FP8: times fp8_share).
    double bf16Share(double peak_tflops) const
    {
        return sustained_peak_tflops > 0 && peak_tflops > sustained_peak_tflops
                   ? bf16 * sustained_peak_tflops / peak_tflops
                   : bf16;
    }
};

/// What evaluate() reads of the GPU's name: its family's GEMM efficiencies and SMs, and its kind.
struct GpuTraits
{
    FamilyEfficiency family;
    bool hopper = false;    ///< H100, H200, H800, H20, GH200 (FlashAttention-2 off its fast paths)
    bool instinct = false;  ///< AMD MI250X … MI355X (SDPA's flash backend is AOTriton)
    bool blackwell = false; ///< B200, B300, GB200 (FP8 GEMMs take either operand layout)
};

/// The traits of a GPU, read from its name.
GpuTraits scanGpuTraits(const std::string& name);

/// scanGpuTraits() with the last name's traits kept per thread: a search evaluates millions of
/// plans on one GPU, so the name is compared, not scanned, per evaluation (inline: on the
/// search's hot path).
inline const GpuTraits& gpuTraits(const std::string& name)
{
    thread_local std::string last;
    thread_local GpuTraits lastTraits = scanGpuTraits(last);
    if (name != last) {
        last = name;
        lastTraits = scanGpuTraits(name);
    }
    return lastTraits;
}

/// Whether the GPU is a Blackwell part (B200, B300, GB200), by name.
bool isBlackwell(const std::string& name);

/// The GPU family a name belongs to, for grouping measured runs: "A100", "Hopper" (H100,
/// H200, H800, H20, GH200), "Blackwell" (B200, B300, GB200), "Instinct" (MI250X … MI355X) or
/// "other".
std::string_view gpuFamily(const std::string& name);

} // namespace paralens
