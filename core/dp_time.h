// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/comm_time.h"
#include "core/framework.h"
#include "core/params.h"

namespace paralens {

/// The links of the data-parallel collectives: dense gradients and parameters over DP×CP (or
/// over the shard group × CP with hybrid sharding), expert ones over the EDP group, and the
/// all-reduce across shard-group replicas of hybrid sharding.
struct DpLinks
{
    LinkModel dense;
    LinkModel expert;
    LinkModel replicas;  ///< only with hybrid sharding
    int shard_group = 1; ///< ParallelPlan::shardGroup()
    bool hybrid = false; ///< ZeRO inside shard groups smaller than DP (FSDP HYBRID_SHARD)
    double sms = 0;      ///< streamingMultiprocessors() of the GPU, for ncclSmSeconds()
};
DpLinks dpLinks(const CommContext& c);

/// GPU-seconds of SMs that NCCL holds for one collective of `seconds` on `link`. Its CTAs share
/// no SM with compute kernels. Moving the data takes its bus bytes (busFactor · bytes) over
/// kNcclBusBytesPerSm CTA-seconds, whatever the link's speed, at most kNcclMaxCtas CTAs at a
/// time; what the collective spends beyond its bus time (its latency steps) holds kNcclMaxCtas
/// CTAs waiting on their peers ("all the other GPUs will block SMs, waiting", NVIDIA/nccl#403).
/// Over the GPU's SMs (streamingMultiprocessors()), never more than all of them.
double ncclSmSeconds(Collective c, const LinkModel& link, double bytes, double seconds, double sms);

/// One stage's data-parallel collectives. Once per step: the gradient reduction after the last
/// backward and the parameter all-gather before the first forward, and what of them no overlap
/// can hide. Per micro-batch (ZeRO-2/3): the collectives that lengthen its forward and
/// backward, and how much of each may run under that micro-batch's compute.
struct DpCosts
{
    double grad_tail = 0;
    double param_tail = 0;
    /// The gradient reduction is issued only after the stage's last backward (FSDP under PP),
    /// so only the pipeline's slack hides it, not that backward.
    bool grad_tail_after_backward = false;
    double step_exposed = 0; ///< once per step, never hidden (the first gathered unit)
    double forward = 0;
    double backward = 0;
    double hideable_forward = 0;
    double hideable_backward = 0;
    /// Share of the GPU's SMs these collectives hold while they run: their ncclSmSeconds() over
    /// their seconds. Compute that runs beside them loses that share for that time.
    double sm_share = 0;
};

/// DP costs of a stage holding `sp` parameters in `units` gather units (its layers, plus one
/// for the embedding or the LM head), by ZeRO stage (Rajbhandari et al. 2020 §7; Megatron
/// dist_optimizer.md): 0 all-reduce of the gradients; 1 reduce-scatter of the gradients and
/// all-gather of the parameters; 2 the reduce-scatter per micro-batch; 3 parameters
/// all-gathered unit by unit in forward and again in backward, gradients reduce-scattered unit
/// by unit in the reduce dtype, only what the framework prefetches hideable, and never the
/// first unit's gather or the last unit's reduce-scatter (nothing runs before or after them).
/// DeepSpeed gathers tensor by tensor, each collective paying its own latency, and again for a
/// recomputed forward; FSDP2 gathers once per unit in backward and skips the units it does not
/// reshard (the root and the last block, torchtitan), none without reshard-after-forward, and
/// under PP gathers the stage once per step and reduce-scatters it once after its last
/// backward. Hybrid sharding adds the replicas' all-reduce of the gradient shard.
DpCosts dpCosts(const CommContext& c, const DpLinks& links, const FrameworkConventions& fw,
                const StageParams& sp, double units);

/// HBM seconds of one stage's copies around its ZeRO-3 / FSDP collectives that run on the
/// compute stream (FrameworkConventions::zero3_gather_copy_bytes and zero3_reduce_copy_bytes):
/// every gathered unit's parameters copied out, every reduced unit's gradients copied in. Per
/// micro-batch in its forward and backward; under PP (the stage gathered once and reduced once
/// per step) once per step, spread by the caller over the micro-batches.
struct DpCopies
{
    double forward = 0;  ///< per micro-batch
    double backward = 0; ///< per micro-batch
    double step = 0;     ///< once per step
};
DpCopies dpCopies(const CommContext& c, const FrameworkConventions& fw, const StageParams& sp,
                  double units, double hbm_bytes_per_s);

} // namespace paralens
