// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What a plan may be: each pipeline schedule's traits, the degrees a scenario can run with,
// and switching a plan's schedule. validate(), the search, the step time, the pipeline cost,
// the schedule builder and the controls all take these rules from here.
#include "core/scenario.h"

#include <array>
#include <cstdint>
#include <vector>

namespace paralens {

/// Every schedule, in the order the controls list them.
inline constexpr std::array<Schedule, 6> kAllSchedules{
    Schedule::GPipe, Schedule::OneF1B, Schedule::Interleaved1F1B,
    Schedule::ZBH1,  Schedule::ZBV,    Schedule::DualPipeV};

/// How many model chunks (virtual stages, v) a schedule places on each device.
enum class ChunkRule : std::uint8_t
{
    One,  ///< v = 1
    Two,  ///< v = 2 exactly: the two arms of a V
    Free, ///< any v >= 2 (v = 1 is accepted as the spelling of plain 1F1B)
};

/// Where a device's chunks sit in the model.
enum class ChunkLayout : std::uint8_t
{
    Looped, ///< Megatron interleaving: chunk c of device d is model stage c·p + d
    VShape  ///< ZB-V / DualPipeV: chunk 0 of device d is model stage d, chunk 1 is 2p − 1 − d
};

/// What a schedule is, independent of the plan's numbers.
struct ScheduleTraits
{
    ChunkRule chunks = ChunkRule::One;
    /// The backward is split into B (input gradient) and W (weight gradient) ops.
    bool split_backward = false;
    ChunkLayout layout = ChunkLayout::Looped;
    /// The schedule needs at least this many micro-batches per pipeline stage (m >= k·pp);
    /// 0 = any m >= 1.
    int microbatches_per_stage = 0;
    /// A forward chunk and a backward chunk run together, so the expert all-to-alls of one
    /// hide under the other's compute.
    bool pairs_forward_backward = false;
};

/// The traits of each schedule:
/// - GPipe (Huang et al. 2019) and 1F1B (PipeDream-Flush, Narayanan et al. 2021 §2.2.1): one
///   chunk per device, fused backward.
/// - Interleaved 1F1B (Narayanan et al. 2021 §2.2.2): v >= 2 looped chunks per device;
///   Megatron-LM needs at least pp micro-batches (one group of G >= pp per chunk).
/// - ZB-H1 (Qi et al. 2023, "Zero Bubble Pipeline Parallelism", §3.1): the 1F1B order with the
///   backward split into B and W.
/// - ZB-V (Qi et al. 2023, §6): two chunks per device in a V, backward split; any m (the
///   order is built for max(m, 2p − 1) micro-batches and the extra ones dropped).
/// - DualPipeV (DeepSeek-V3 report §3.2.1; deepseek-ai/DualPipe, dualpipev.py): two chunks in a
///   V, zero-bubble W ops, at least 2·pp micro-batches (the step asserts it), forward and
///   backward chunks paired so that communication overlaps computation.
constexpr ScheduleTraits traitsOf(Schedule s)
{
    switch (s) {
    case Schedule::GPipe:
    case Schedule::OneF1B:
        return {};
    case Schedule::Interleaved1F1B:
        return {ChunkRule::Free, false, ChunkLayout::Looped, 1, false};
    case Schedule::ZBH1:
        return {ChunkRule::One, true, ChunkLayout::Looped, 0, false};
    case Schedule::ZBV:
        return {ChunkRule::Two, true, ChunkLayout::VShape, 0, false};
    case Schedule::DualPipeV:
        return {ChunkRule::Two, true, ChunkLayout::VShape, 2, true};
    }
    return {};
}

/// The schedule a plan really runs: interleaved 1F1B with one chunk is plain 1F1B.
constexpr Schedule effectiveSchedule(Schedule s, int virtual_stages)
{
    return traitsOf(s).chunks == ChunkRule::Free && virtual_stages <= 1 ? Schedule::OneF1B : s;
}

/// Whether the schedule takes more than one chunk per device (so needs pp >= 2).
constexpr bool usesChunks(Schedule s)
{
    return traitsOf(s).chunks != ChunkRule::One;
}

/// Whether v suits the schedule's chunk rule (interleaved also takes v = 1, as 1F1B).
constexpr bool acceptsVirtualStages(Schedule s, int virtual_stages)
{
    switch (traitsOf(s).chunks) {
    case ChunkRule::One:
        return virtual_stages == 1;
    case ChunkRule::Two:
        return virtual_stages == 2;
    case ChunkRule::Free:
        return virtual_stages >= 1;
    }
    return false;
}

/// Model chunks on each device as the schedule runs them: 1, 2 for a V, v for interleaved.
constexpr int chunksPerDevice(Schedule s, int virtual_stages)
{
    switch (traitsOf(effectiveSchedule(s, virtual_stages)).chunks) {
    case ChunkRule::One:
        return 1;
    case ChunkRule::Two:
        return 2;
    case ChunkRule::Free:
        return virtual_stages;
    }
    return 1;
}

/// Point-to-point sends of one micro-batch's activations by one device (the same again for
/// its gradients): one per chunk it holds, whose output goes to the next model stage.
constexpr int p2pHopsPerMicrobatch(Schedule s, int virtual_stages)
{
    return chunksPerDevice(s, virtual_stages);
}

/// Where the plan's model chunks sit: Looped, or VShape for ZB-V / DualPipeV.
constexpr ChunkLayout chunkLayoutOf(Schedule s, int virtual_stages)
{
    return traitsOf(effectiveSchedule(s, virtual_stages)).layout;
}

/// Device (pipeline rank) that holds model chunk c (0 = the embedding side) of p·v: c mod p
/// looped (Narayanan et al. 2021 §2.2.2); c, or 2p − 1 − c on the V's way back (Qi et al. 2024,
/// ZB-V; deepseek-ai/DualPipe dualpipev.py).
constexpr int deviceOfChunk(ChunkLayout layout, int p, int c)
{
    if (layout == ChunkLayout::VShape)
        return c < p ? c : 2 * p - 1 - c;
    return c % p;
}

/// Index on its device of model chunk c: c / p looped; 0 down the V, 1 on the way back.
constexpr int localChunkOf(ChunkLayout layout, int p, int c)
{
    if (layout == ChunkLayout::VShape)
        return c < p ? 0 : 1;
    return c / p;
}

/// Position in the model of local chunk j of device d (the inverse of the two above).
constexpr int modelChunkOf(ChunkLayout layout, int p, int d, int j)
{
    if (layout == ChunkLayout::VShape)
        return j == 0 ? d : 2 * p - 1 - d;
    return j * p + d;
}

/// The device that holds the model's last chunk (final norm, LM head, loss): p − 1, except in
/// a V, where it is device 0, beside the embedding.
constexpr int headDeviceOf(ChunkLayout layout, int p)
{
    return layout == ChunkLayout::VShape ? 0 : p - 1;
}

/// Least micro-batches per pipeline the schedule runs with on pp stages (at least 1).
constexpr std::int64_t minMicrobatches(Schedule s, int virtual_stages, int pp)
{
    const std::int64_t k = traitsOf(effectiveSchedule(s, virtual_stages)).microbatches_per_stage;
    return k > 0 ? k * pp : 1;
}

/// The plan with its schedule switched and v made consistent: interleaved keeps the plan's
/// v when it is at least 2 and takes 2 otherwise; the V schedules take 2; the others 1.
ParallelPlan withSchedule(ParallelPlan plan, Schedule s);

// ---- Degrees ----
// Each list is ascending and always holds 1 (the degree that splits nothing). `gpus_left` is
// the GPU count divided by the degrees held fixed, 0 when they do not divide it (then no
// other value keeps tp·pp·cp·dp = gpus).

/// gpus / used, or 0 when used does not divide gpus (or either is not positive).
std::int64_t gpusLeft(std::int64_t gpus, std::int64_t used);

/// TP: divisors of gpus_left that divide the heads and the KV heads (Megatron splits both over
/// TP), up to max_tp (the scale-up domain: TP's per-layer all-reduces need it, Narayanan et
/// al. 2021 §3.3).
std::vector<int> tpDegrees(const ModelSpec& m, std::int64_t gpus_left, std::int64_t max_tp);
/// CP: divisors of gpus_left with seq_len a multiple of 2·cp (causal load balance splits each
/// sequence into 2·cp chunks).
std::vector<int> cpDegrees(std::int64_t seq_len, std::int64_t gpus_left);
/// PP: divisors of gpus_left with pp·v at most the layers (every model chunk needs a layer).
std::vector<int> ppDegrees(int layers, std::int64_t gpus_left, int virtual_stages);
/// DP: divisors of global_batch / micro_batch (the global batch is a whole number of
/// micro-batches per replica), with model_parallel·dp (the GPU count) at most the largest a
/// scenario holds.
std::vector<int> dpDegrees(std::int64_t global_batch, std::int64_t micro_batch,
                           std::int64_t model_parallel);
/// EP: divisors of the expert count that divide dp·cp (expert groups are carved out of the
/// data × context ranks); {1} for a dense model.
std::vector<int> epDegrees(const ModelSpec& m, std::int64_t dp_cp);
/// What epDegrees() divides: dp·cp when expert TP follows TP (expert_tp 0), else
/// tp·cp·dp / expert_tp (MoE parallel folding: etp·ep divides tp·cp·dp), 0 when expert_tp
/// does not divide tp·cp·dp.
std::int64_t expertRanks(std::int64_t tp, std::int64_t cp, std::int64_t dp, int expert_tp);
/// v for a schedule on pp stages over `layers` layers: {1} (one chunk), {2} (V, pp >= 2),
/// or 2..min(layers / pp, max_v) (interleaved, pp >= 2; max_v 0 = no cap). Empty when none
/// runs. Interleaved's v = 1 spelling of 1F1B is not listed.
std::vector<int> virtualStageDegrees(Schedule s, int pp, int layers, int max_v = 0);

/// Every degree's values with the scenario's other degrees held, the way the controls move
/// one at a time (DP moves the GPU count, v follows the schedule).
struct PlanDegrees
{
    std::vector<int> tp, pp, dp, ep, cp, virtual_stages;
};
PlanDegrees planDegrees(const Scenario& s);

} // namespace paralens
