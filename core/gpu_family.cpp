// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/gpu_family.h"

namespace paralens {

namespace {

// Default GEMM efficiencies, 🔢 from public cuBLAS / hipBLASLt figures (kernel_time.cpp
// defaultGemmEfficiency()).
constexpr double kGemmEfficiency = 0.70; // H100, H200 and any GPU not matched below
constexpr double kGemmEfficiencyA100 = 0.75;
// MI300X: H100's share scaled by the two GPUs' measured BF16 GEMM rates on the same shapes, with
// the same derate from benchmark to training as H100's (0.70 of 989 TF against its ~720).
// SemiAnalysis, "MI300X vs H100 vs H200 Benchmark Part 1: Training" (Dec 2024), section
// "General Matrix Multiply (GEMM) Performance": (M, N, K) = the Llama 70B shapes (16384, 8192,
// 1280), (16384, 1024, 8192), (16384, 8192, 7168), (16384, 3584, 8192) and 8192³, OpenAI's
// do_bench (median, L2 cleared): "the H100 and H200 achieves roughly 720 TFLOP/s [...] while
// the MI300X reaches a mere ~620 TFLOP/s" ("14% slower"; a custom AMD image and AMD's flags).
// 0.70 · (620 / 720) · (989 / 1307) = 0.456, kept to the two digits the "~" figures carry; the
// ratio is the five shapes' summary, read as the 8192³ GEMM's (the level below refers to it).
constexpr double kGemmEfficiencyMi300 = 0.46;
// Blackwell (B200, GB200; B300 taken alike, no table has it): H100's share scaled by the two
// GPUs' measured BF16 rates on the largest shape both have in OpenXLA's matmul table
// (xla/service/gpu/model/matmul_interpolator_data.h, "sm_100" and "sm_90": b 4 × 4096 × 4096 ×
// 4096, 1,690.7 against 793.1 TFLOP/s) and by the peaks (2,250 and 989.4 TF), with H100's
// derate from benchmark to training: 0.70 · 2.132 · 989.4 / 2250 = 0.656. (The same law
// fitted to each table puts the ratio at 8192³ at 1.85, 0.57; the largest measured shape is
// taken because Blackwell is still gaining there.)
constexpr double kGemmEfficiencyBlackwell = 0.66;
// That measured rate is the die's, at the B200's clocks: the GB200's datasheet peak (2,500
// against 2,250 TF dense BF16; NVIDIA Blackwell Architecture Technical Brief, Table 2, the GB200
// NVL72 rack's 180 PF ÷ 72, and DGX B200's 72 PF FP8 ÷ 8 ÷ 2) counts the higher boost clock its
// 1,200 W budget allows, which sustained GEMMs do not hold. NVIDIA's own measurements at one
// container and plan: Megatron-Bridge performance summary (25.11), Llama 3 8B on 8 GPUs, mb 2,
// gb 128: GB200 252,064 / B200 244,992 tokens/s in FP8 current scaling (1.029) and 238,312 /
// 236,168 in MXFP8 (1.009), where the peaks differ by 1.111. The share applies to B200's peak.
constexpr double kSustainedPeakBlackwell = 2250;
// FP8 GEMMs reach this share of the BF16 share, against the FP8 peak. The same article's FP8
// (e4m3) figures on those shapes: H100/H200 "~1,280 TFLOP/s out of the marketed 1979", MI300X
// "~990" of 2,614.9: (1280 / 1979) / (720 / 989.5) = 0.89 on H100, (990 / 2614.9) / (620 /
// 1307.4) = 0.80 on MI300X.
constexpr double kFp8GemmShare = 0.9;
constexpr double kFp8GemmShareMi300 = 0.80;

// Whether name[i...] starts with the lowercase ASCII key, ignoring case (no locale calls: this
// runs per evaluation).
bool hasAt(const std::string& name, std::size_t i, std::string_view key)
{
    if (name.size() - i < key.size())
        return false;
    for (std::size_t j = 0; j < key.size(); ++j) {
        const char c = name[i + j];
        if ((c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c) != key[j])
            return false;
    }
    return true;
}

// Streaming multiprocessors (AMD: compute units) per GPU: NVIDIA A100 Tensor Core GPU
// Architecture whitepaper (108); NVIDIA H100 Tensor Core GPU Architecture whitepaper (132 on
// SXM5, 114 on PCIe; H200 and other Hopper parts taken as SXM5); B200 148 (CUDA's
// multiProcessorCount on a B200, pytorch/ao#4002; GB200 and B300 taken alike); AMD CDNA 3
// white paper (MI300X: 304 compute units).
constexpr double kSmsA100 = 108, kSmsHopper = 132, kSmsH100Pcie = 114, kSmsBlackwell = 148,
                 kSmsMi300 = 304;

// The default GEMM efficiencies and SM count of a GPU family, found in one pass over the name:
// "a100" anywhere wins, else "mi3" or "b200" / "b300" (the later match), else the default;
// an "h100" with "pcie" in its name has the PCIe part's SMs.
FamilyEfficiency scanFamily(const std::string& name)
{
    FamilyEfficiency e{kGemmEfficiency, kFp8GemmShare, kSmsHopper, 0};
    bool h100 = false, pcie = false;
    for (std::size_t i = 0; i < name.size(); ++i) {
        const char c = char(name[i] | 0x20); // lowercase for letters; only a, m, b, h, p matter
        if (c == 'a' && hasAt(name, i, "a100"))
            return {kGemmEfficiencyA100, kFp8GemmShare, kSmsA100, 0};
        if (c == 'm' && hasAt(name, i, "mi3"))
            e = {kGemmEfficiencyMi300, kFp8GemmShareMi300, kSmsMi300, 0};
        if (c == 'b' && (hasAt(name, i, "b200") || hasAt(name, i, "b300")))
            e = {kGemmEfficiencyBlackwell, kFp8GemmShare, kSmsBlackwell, kSustainedPeakBlackwell};
        h100 = h100 || (c == 'h' && hasAt(name, i, "h100"));
        pcie = pcie || (c == 'p' && hasAt(name, i, "pcie"));
    }
    if (h100 && pcie && e.sms == kSmsHopper)
        e.sms = kSmsH100Pcie;
    return e;
}

// Whether the GPU is a Hopper part (H100, H200, H800, H20, GH200), on which FlashAttention-2
// misses the wgmma/TMA paths (kFa2OnHopperShare).
bool isHopper(const std::string& name)
{
    for (std::size_t i = 0; i < name.size(); ++i)
        if ((name[i] | 0x20) == 'h' && (hasAt(name, i, "h100") || hasAt(name, i, "h20") ||
                                        hasAt(name, i, "h800") || hasAt(name, i, "hopper")))
            return true;
    return false;
}

// Whether the GPU is an AMD Instinct part (MI250X, MI300X, MI325X, MI355X), where PyTorch SDPA's
// flash backend is AOTriton (FrameworkConventions::attention_sdpa).
bool isInstinct(const std::string& name)
{
    for (std::size_t i = 0; i < name.size(); ++i)
        if ((name[i] | 0x20) == 'm' && (hasAt(name, i, "mi2") || hasAt(name, i, "mi3")))
            return true;
    return false;
}

// Whether the GPU is a Blackwell part (B200, B300, GB200), whose FP8 GEMMs take either operand
// layout (fp8WeightExtraBytes()).
bool scanBlackwell(const std::string& name)
{
    for (std::size_t i = 0; i < name.size(); ++i)
        if ((name[i] | 0x20) == 'b' && (hasAt(name, i, "b200") || hasAt(name, i, "b300")))
            return true;
    return false;
}

} // namespace

GpuTraits scanGpuTraits(const std::string& name)
{
    return {scanFamily(name), isHopper(name), isInstinct(name), scanBlackwell(name)};
}

bool isBlackwell(const std::string& name)
{
    return gpuTraits(name).blackwell;
}

std::string_view gpuFamily(const std::string& name)
{
    const GpuTraits& t = gpuTraits(name);
    if (t.family.sms == kSmsA100)
        return "A100";
    if (t.hopper)
        return "Hopper";
    if (t.blackwell)
        return "Blackwell";
    if (t.instinct)
        return "Instinct";
    return "other";
}

} // namespace paralens
