// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/framework_options.h"
#include "core/framework.h"

namespace paralens {

FrameworkOptions frameworkOptions(const Scenario& s)
{
    const TrainingSettings& t = s.training;
    const ParallelPlan& p = s.parallel;
    const bool fsdp = t.framework == Framework::FSDP;
    FrameworkOptions o;
    o.fp8_recipe = t.precision == Precision::FP8;
    o.tp_comm_overlap = p.tp > 1 && p.sequence_parallel; // it splits SP's collectives
    o.compile = fsdp;
    // Megatron's FP8 parameters; FSDP's float8 all-gather (ZeRO 3, tensorwise).
    const bool tensorwise = resolvedFp8Recipe(t) == Fp8Recipe::Tensorwise;
    o.fp8_param_gather = t.precision == Precision::FP8 && (t.framework == Framework::Megatron ||
                                                           (fsdp && p.zero >= 3 && tensorwise));
    o.fsdp_version = fsdp && p.zero >= 2;
    o.fsdp_reshard = fsdp && p.zero >= 3;
    o.fsdp_prefetch = fsdp && conventions(t, p).zero3_reshard_after_forward;
    o.recompute_modules = t.framework == Framework::Megatron && t.recompute == Recompute::Selective;
    o.adam_moments = t.framework == Framework::Megatron && t.optimizer == Optimizer::Adam &&
                     !p.offload_optimizer;
    return o;
}

} // namespace paralens
