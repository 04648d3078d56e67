// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/plan.h"

#include <array>
#include <utility>

namespace paralens {
namespace {

template <typename E, std::size_t N>
std::string_view nameOf(const std::array<std::pair<E, std::string_view>, N>& table, E value)
{
    for (const auto& [e, name] : table)
        if (e == value)
            return name;
    return "?";
}

template <typename E, std::size_t N>
std::optional<E> valueOf(const std::array<std::pair<E, std::string_view>, N>& table,
                         std::string_view name)
{
    for (const auto& [e, n] : table)
        if (n == name)
            return e;
    return std::nullopt;
}

constexpr std::array<std::pair<Schedule, std::string_view>, 6> kSchedules{{
    {Schedule::GPipe, "gpipe"},
    {Schedule::OneF1B, "1f1b"},
    {Schedule::Interleaved1F1B, "interleaved-1f1b"},
    {Schedule::ZBH1, "zb-h1"},
    {Schedule::ZBV, "zb-v"},
    {Schedule::DualPipeV, "dualpipe-v"},
}};
constexpr std::array<std::pair<Recompute, std::string_view>, 3> kRecompute{
    {{Recompute::None, "none"}, {Recompute::Selective, "selective"}, {Recompute::Full, "full"}}};
constexpr std::array<std::pair<RecomputeModule, std::string_view>, kRecomputeModuleCount>
    kRecomputeModules{{{kRecomputeCoreAttn, "core_attn"},
                       {kRecomputeLayernorm, "layernorm"},
                       {kRecomputeMlaUpProj, "mla_up_proj"},
                       {kRecomputeMlp, "mlp"},
                       {kRecomputeMoeAct, "moe_act"},
                       {kRecomputeMoe, "moe"},
                       {kRecomputeSharedExperts, "shared_experts"}}};
constexpr std::array<std::pair<Precision, std::string_view>, 3> kPrecision{
    {{Precision::BF16, "bf16"}, {Precision::FP8, "fp8"}, {Precision::FP16, "fp16"}}};
constexpr std::array<std::pair<Framework, std::string_view>, 3> kFramework{
    {{Framework::Megatron, "megatron"},
     {Framework::DeepSpeed, "deepspeed"},
     {Framework::FSDP, "fsdp"}}};
constexpr std::array<std::pair<Optimizer, std::string_view>, 2> kOptimizer{
    {{Optimizer::Adam, "adam"}, {Optimizer::SGD, "sgd"}}};
constexpr std::array<std::pair<MoeDispatcher, std::string_view>, 5> kDispatchers{
    {{MoeDispatcher::Default, "default"},
     {MoeDispatcher::AllGather, "allgather"},
     {MoeDispatcher::AllToAll, "alltoall"},
     {MoeDispatcher::DeepEP, "deepep"},
     {MoeDispatcher::HybridEP, "hybridep"}}};
constexpr std::array<std::pair<CpComm, std::string_view>, 4> kCpComm{
    {{CpComm::Default, "default"},
     {CpComm::P2P, "p2p"},
     {CpComm::AllGather, "all-gather"},
     {CpComm::AllToAll, "a2a"}}};
constexpr std::array<std::pair<AdamMomentsDtype, std::string_view>, 2> kAdamMomentsDtypes{
    {{AdamMomentsDtype::Fp32, "fp32"}, {AdamMomentsDtype::Bf16, "bf16"}}};
constexpr std::array<std::pair<GradReduceDtype, std::string_view>, 3> kGradReduceDtypes{
    {{GradReduceDtype::Default, "default"},
     {GradReduceDtype::Fp32, "fp32"},
     {GradReduceDtype::Bf16, "bf16"}}};
constexpr std::array<std::pair<ReshardAfterForward, std::string_view>, 3> kReshard{
    {{ReshardAfterForward::Default, "default"},
     {ReshardAfterForward::Always, "always"},
     {ReshardAfterForward::Never, "never"}}};
constexpr std::array<std::pair<FsdpBackwardPrefetch, std::string_view>, 4> kBackwardPrefetch{
    {{FsdpBackwardPrefetch::Default, "default"},
     {FsdpBackwardPrefetch::Pre, "backward_pre"},
     {FsdpBackwardPrefetch::Post, "backward_post"},
     {FsdpBackwardPrefetch::None, "none"}}};
constexpr std::array<std::pair<AttentionKernel, std::string_view>, 4> kAttentionKernels{
    {{AttentionKernel::Default, "default"},
     {AttentionKernel::Flash2, "flash2"},
     {AttentionKernel::Fused, "fused"},
     {AttentionKernel::Triton, "triton"}}};
constexpr std::array<std::pair<RopeImpl, std::string_view>, 4> kRopeImpls{
    {{RopeImpl::Default, "default"},
     {RopeImpl::Complex, "complex"},
     {RopeImpl::Real, "real"},
     {RopeImpl::Fused, "fused"}}};
constexpr std::array<std::pair<CrossEntropy, std::string_view>, 4> kCrossEntropies{
    {{CrossEntropy::Default, "default"},
     {CrossEntropy::Megatron, "megatron"},
     {CrossEntropy::Eager, "eager"},
     {CrossEntropy::Fused, "fused"}}};
constexpr std::array<std::pair<OptimizerImpl, std::string_view>, 4> kOptimizerImpls{
    {{OptimizerImpl::Default, "default"},
     {OptimizerImpl::Fused, "fused"},
     {OptimizerImpl::Foreach, "foreach"},
     {OptimizerImpl::ForLoop, "for_loop"}}};
constexpr std::array<std::pair<Fp8Recipe, std::string_view>, 6> kFp8Recipes{
    {{Fp8Recipe::Default, "default"},
     {Fp8Recipe::Delayed, "delayed"},
     {Fp8Recipe::Tensorwise, "tensorwise"},
     {Fp8Recipe::Rowwise, "rowwise"},
     {Fp8Recipe::RowwiseGwHp, "rowwise_with_gw_hp"},
     {Fp8Recipe::Mxfp8, "mxfp8"}}};

} // namespace

std::string_view toString(Schedule v)
{
    return nameOf(kSchedules, v);
}
std::string_view toString(Recompute v)
{
    return nameOf(kRecompute, v);
}
std::string_view toString(RecomputeModule v)
{
    return nameOf(kRecomputeModules, v);
}
std::optional<RecomputeModule> parseRecomputeModule(std::string_view s)
{
    return valueOf(kRecomputeModules, s);
}
std::string recomputeModuleList(std::uint8_t modules, std::string_view sep)
{
    std::string out;
    for (const auto& [m, name] : kRecomputeModules)
        if (modules & m)
            out += (out.empty() ? "" : std::string(sep)) + std::string(name);
    return out;
}
std::string_view toString(Precision v)
{
    return nameOf(kPrecision, v);
}
std::string_view toString(Framework v)
{
    return nameOf(kFramework, v);
}
std::string_view toString(Optimizer v)
{
    return nameOf(kOptimizer, v);
}
std::string_view toString(MoeDispatcher v)
{
    return nameOf(kDispatchers, v);
}
std::optional<MoeDispatcher> parseMoeDispatcher(std::string_view s)
{
    return valueOf(kDispatchers, s);
}
std::string_view toString(CpComm v)
{
    return nameOf(kCpComm, v);
}
std::string_view toString(GradReduceDtype v)
{
    return nameOf(kGradReduceDtypes, v);
}

std::string_view toString(ReshardAfterForward v)
{
    return nameOf(kReshard, v);
}
std::string_view toString(FsdpBackwardPrefetch v)
{
    return nameOf(kBackwardPrefetch, v);
}
std::string_view toString(AttentionKernel v)
{
    return nameOf(kAttentionKernels, v);
}

std::string_view toString(CrossEntropy v)
{
    return nameOf(kCrossEntropies, v);
}
std::optional<Schedule> parseSchedule(std::string_view s)
{
    return valueOf(kSchedules, s);
}
std::optional<Recompute> parseRecompute(std::string_view s)
{
    return valueOf(kRecompute, s);
}
std::optional<Precision> parsePrecision(std::string_view s)
{
    return valueOf(kPrecision, s);
}
std::optional<Framework> parseFramework(std::string_view s)
{
    return valueOf(kFramework, s);
}
std::optional<Optimizer> parseOptimizer(std::string_view s)
{
    return valueOf(kOptimizer, s);
}
std::optional<CpComm> parseCpComm(std::string_view s)
{
    return valueOf(kCpComm, s);
}
std::string_view toString(AdamMomentsDtype v)
{
    return nameOf(kAdamMomentsDtypes, v);
}
std::optional<AdamMomentsDtype> parseAdamMomentsDtype(std::string_view s)
{
    return valueOf(kAdamMomentsDtypes, s);
}
std::optional<GradReduceDtype> parseGradReduceDtype(std::string_view s)
{
    return valueOf(kGradReduceDtypes, s);
}

std::optional<ReshardAfterForward> parseReshardAfterForward(std::string_view s)
{
    return valueOf(kReshard, s);
}

std::optional<FsdpBackwardPrefetch> parseFsdpBackwardPrefetch(std::string_view s)
{
    return valueOf(kBackwardPrefetch, s);
}

std::optional<AttentionKernel> parseAttentionKernel(std::string_view s)
{
    return valueOf(kAttentionKernels, s);
}

std::optional<CrossEntropy> parseCrossEntropy(std::string_view s)
{
    return valueOf(kCrossEntropies, s);
}

std::string_view toString(RopeImpl v)
{
    return nameOf(kRopeImpls, v);
}

std::optional<RopeImpl> parseRopeImpl(std::string_view s)
{
    return valueOf(kRopeImpls, s);
}

std::string_view toString(OptimizerImpl v)
{
    return nameOf(kOptimizerImpls, v);
}
std::optional<OptimizerImpl> parseOptimizerImpl(std::string_view s)
{
    return valueOf(kOptimizerImpls, s);
}

std::string_view toString(Fp8Recipe v)
{
    return nameOf(kFp8Recipes, v);
}
std::optional<Fp8Recipe> parseFp8Recipe(std::string_view s)
{
    return valueOf(kFp8Recipes, s);
}

} // namespace paralens
