// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/time.h"
#include "core/comm_time.h"
#include "core/dims.h"
#include "core/dp_time.h"
#include "core/optimizer_time.h"
#include "core/plan_options.h"

#include <algorithm>
#include <utility>

namespace paralens {
namespace {

// What every stage of the step shares: per-layer kernel and communication times, the LM head,
// the DP links and the kernel model's HBM bandwidth.
struct StepModel
{
    LayerTimes dense, moe;
    StageTimes head;
    StageTimes mtp_extra;    ///< one MTP module's projection and norms, and its head pass
    bool mtp_moe = false;    ///< the MTP modules' blocks are MoE blocks (ModelSpec::mtpIsMoe())
    CommTimes tp, cp, ep;    ///< per layer (ep: per MoE layer), per micro-batch
    double moe_tp_share = 1; ///< share of tp an MoE layer runs (epComm() carries the rest)
    CommContext comm;
    DpLinks dp;
    double hbm = 0;
    int microbatches = 1;
    double layer_overhead = 0; ///< fixed seconds per layer per micro-batch (docs/fit.md)
    StageTensorCounts tensors; ///< parameter tensors per layer and stage extra (the optimizer)
    /// Full recompute with a layer count: how the layers it leaves alone (StageLayers::stored)
    /// run, as with recompute none; null otherwise.
    const StepModel* stored = nullptr;
};

// The result of walking the stages in order.
struct StageSweep
{
    int slow = 0;          ///< the critical stage: the largest per-micro-batch total
    double dp_exposed = 0; ///< once-per-step DP collectives left after their overlap windows
    double dp_mb_slow = 0; ///< per-micro-batch DP seconds its compute does not hide, critical stage
    OptimizerTimes optimizer;     ///< the slowest stage's optimizer step and offload
    CommSeconds comm_slow;        ///< TP, CP, EP seconds per micro-batch on the critical stage
    CommSeconds comm_hidden_slow; ///< and those its compute hides
    double dp_hidden_slow = 0;    ///< DP seconds per step hidden on the critical stage
};

// Host seconds to issue a pass beyond the `device` seconds its kernels and collectives take.
double hostExcess(double host, double device)
{
    return std::max(0.0, host - device);
}

// Transformer blocks a stage runs per micro-batch: its layers and its MTP modules' blocks, each
// priced like a layer of its kind (kernels, TP/CP/EP collectives, host time, fixed overhead).
struct Blocks
{
    double dense = 0, moe = 0;
    double all() const { return dense + moe; }
};

Blocks blocksOf(const StageLayers& st, const StepModel& sm)
{
    Blocks b{double(st.layers - st.moe_layers), double(st.moe_layers)};
    (sm.mtp_moe ? b.moe : b.dense) += st.mtp;
    return b;
}

// FrameworkConventions::microbatch_grad_pass_bytes over the stage's local parameters, or the
// host's loop over its tensors if that is longer (the host issues while the GPU streams).
double microbatchGradPassSeconds(const FrameworkConventions& fw, const ModelConstants& k,
                                 const StageParams& sp, double tensors, double hbm)
{
    if (fw.microbatch_grad_pass_bytes <= 0 || hbm <= 0)
        return 0;
    const double stream = fw.microbatch_grad_pass_bytes * sp.total() / hbm;
    return std::max(stream, fw.microbatch_grad_pass_calls * tensors * k.kernel_launch_seconds);
}

void addTimes(StageTimes& t, const StageTimes& x, double n)
{
    t.forward_seconds += n * x.forward_seconds;
    t.backward_seconds += n * x.backward_seconds;
    t.weight_seconds += n * x.weight_seconds;
}

// Per-micro-batch times of one stage: its layers' kernels, the LM head on the last stage (and
// each MTP module's block, projection and head pass after it), and the TP, CP and EP
// collectives its blocks run. Inlined: it runs per stage per evaluation.
[[gnu::always_inline]] inline StageTimes stageComputeOf(const StageLayers& st, const StepModel& sm)
{
    const Blocks bl = blocksOf(st, sm);
    const double nd = bl.dense, nm = bl.moe;
    StageTimes t;
    t.forward_seconds = nd * sm.dense.f + nm * sm.moe.f;
    t.backward_seconds = nd * sm.dense.b + nm * sm.moe.b;
    t.weight_seconds = nd * sm.dense.w + nm * sm.moe.w;
    if (st.last)
        addTimes(t, sm.head, 1);
    addTimes(t, sm.mtp_extra, st.mtp);
    const double layers = bl.all(), tpLayers = nd + nm * sm.moe_tp_share;
    t.forward_seconds += tpLayers * sm.tp.forward + layers * sm.cp.forward + nm * sm.ep.forward;
    t.backward_seconds += tpLayers * sm.tp.backward + layers * sm.cp.backward + nm * sm.ep.backward;
    // Eager PyTorch: a layer's pass takes at least the host time to issue it (the host runs
    // ahead of the GPU only while the GPU has queued work). What the host adds beyond the
    // kernels and collectives is host-bound compute time.
    t.forward_seconds +=
        nd * hostExcess(sm.dense.host_f, sm.dense.f + sm.tp.forward + sm.cp.forward) +
        nm * hostExcess(sm.moe.host_f,
                        sm.moe.f + sm.moe_tp_share * sm.tp.forward + sm.cp.forward + sm.ep.forward);
    t.backward_seconds +=
        nd *
            hostExcess(sm.dense.host_b, sm.dense.b + sm.dense.w + sm.tp.backward + sm.cp.backward) +
        nm * hostExcess(sm.moe.host_b, sm.moe.b + sm.moe.w + sm.moe_tp_share * sm.tp.backward +
                                           sm.cp.backward + sm.ep.backward);
    // Fixed per-layer costs (kernel launches, framework hooks), forward : backward = 1 : 2.
    t.forward_seconds += layers * sm.layer_overhead / 3;
    t.backward_seconds += layers * sm.layer_overhead * 2 / 3;
    return t;
}

// A stage's layers as two parts: those full recompute repeats (with the stage's ends and MTP
// modules), and those a layer count leaves alone (no ends).
std::pair<StageLayers, StageLayers> splitStored(const StageLayers& st)
{
    StageLayers rec = st;
    rec.layers -= st.stored;
    rec.moe_layers -= st.stored_moe;
    rec.stored = rec.stored_moe = 0;
    return {rec, StageLayers{st.stored, st.stored_moe, false, false, 0}};
}

// Out of line: the search's plans recompute every layer or none.
[[gnu::noinline]] StageTimes partialStageCompute(const StageLayers& st, const StepModel& sm)
{
    const auto [rec, kept] = splitStored(st);
    StageTimes t = stageComputeOf(rec, sm);
    addTimes(t, stageComputeOf(kept, *sm.stored), 1);
    return t;
}

StageTimes stageCompute(const StageLayers& st, const StepModel& sm)
{
    if (st.stored == 0 || !sm.stored) [[likely]]
        return stageComputeOf(st, sm);
    return partialStageCompute(st, sm);
}

// TP, CP and EP seconds per micro-batch a stage's blocks spend exposed and hidden.
struct StageComm
{
    CommSeconds exposed, hidden;
};

StageComm stageCommOf(const StageLayers& st, const StepModel& sm)
{
    const Blocks bl = blocksOf(st, sm);
    const double layers = bl.all(), nm = bl.moe;
    const double tpLayers = layers - nm + nm * sm.moe_tp_share;
    return {{.tp = tpLayers * (sm.tp.forward + sm.tp.backward),
             .cp = layers * (sm.cp.forward + sm.cp.backward),
             .ep = nm * (sm.ep.forward + sm.ep.backward)},
            {.tp = tpLayers * sm.tp.hidden, .cp = layers * sm.cp.hidden, .ep = nm * sm.ep.hidden}};
}

StageComm stageComm(const StageLayers& st, const StepModel& sm)
{
    if (st.stored == 0 || !sm.stored) [[likely]]
        return stageCommOf(st, sm);
    const auto [rec, kept] = splitStored(st);
    StageComm c = stageCommOf(rec, sm);
    const StageComm k = stageCommOf(kept, *sm.stored);
    c.exposed = {c.exposed.tp + k.exposed.tp, c.exposed.cp + k.exposed.cp,
                 c.exposed.ep + k.exposed.ep};
    c.hidden = {c.hidden.tp + k.hidden.tp, c.hidden.cp + k.hidden.cp, c.hidden.ep + k.hidden.ep};
    return c;
}

// What one stage costs per micro-batch on its own, before the pipeline's slack: its times with
// the per-micro-batch DP collectives its compute does not hide, and what of its compute is
// busy with them. A pure function of the stage's layers and memo (below), so a stage equal to
// its neighbour reuses it.
struct StageLocal
{
    StageTimes t;
    double busyF = 0, busyB = 0;     ///< compute the DP collectives may run beside
    double hiddenF = 0, hiddenB = 0; ///< per-micro-batch DP seconds that compute hides
    double mbExposed = 0;            ///< per-micro-batch DP seconds on the critical path
};

// The DP costs, copies, optimizer step and gradient pass of a stage's parameters. Stages with
// the same parameters and layers (most middle stages) cost the same; they hold the same
// parameter tensors too (layers + MTP modules, embedding or head: the head's final norm tells
// the two ends apart).
struct StageMemo
{
    double dense = 0, expert = 0, units = 0;
    DpCosts dp;
    DpCopies copies;
    OptimizerTimes optimizer;
    double grad_pass = 0; ///< FrameworkConventions::microbatch_grad_pass_bytes' pass
};

StageLocal stageLocal(const StageLayers& st, const StepModel& sm, const StageMemo& memo)
{
    StageLocal l;
    StageTimes& t = l.t;
    t = stageCompute(st, sm);
    // The pass runs after the micro-batch's backward, before the stage's next operation.
    t.backward_seconds += memo.grad_pass;
    // FSDP's copies around its collectives run on the compute stream; the once-per-step ones
    // (under PP) are spread over the micro-batches.
    const double m = sm.microbatches;
    t.forward_seconds += memo.copies.forward + memo.copies.step / (2 * m);
    t.backward_seconds += memo.copies.backward + memo.copies.step / (2 * m);
    const DpCosts& dp = memo.dp;
    // What one micro-batch keeps the stage busy with, which its DP collectives may run
    // beside: its kernels and its TP, CP and EP collectives (on other links; NCCL runs each
    // communicator on its own stream).
    l.busyF = t.forward_seconds;
    l.busyB = t.backward_seconds + t.weight_seconds;
    l.hiddenF = std::min(dp.hideable_forward, l.busyF);
    l.hiddenB = std::min(dp.hideable_backward, l.busyB);
    // ZeRO-2/3's per-micro-batch collectives hide only while that micro-batch keeps the stage
    // busy; the once-per-step ones get what they leave of the last one.
    // Hidden collectives still hold the SMs NCCL needs for them (DpCosts::sm_share), which
    // the compute they run beside loses for that time (overlap is not free): that share of
    // them is on the critical path, so it counts as exposed, the rest as hidden.
    const double share = dp.sm_share;
    l.mbExposed =
        (dp.forward - l.hiddenF) + (dp.backward - l.hiddenB) + share * (l.hiddenF + l.hiddenB);
    t.forward_seconds += dp.forward - l.hiddenF + share * l.hiddenF;
    t.backward_seconds += dp.backward - l.hiddenB + share * l.hiddenB;
    return l;
}

// Fills stage_times with each stage's times including its per-micro-batch DP collectives
// (what of them its compute does not hide), and collects the once-per-step DP exposure: stage
// r finishes its last backward Σ_{j<r} B_j earlier than stage 0, and starts its first forward
// Σ_{j<r} F_j later, so its gradient reduction and parameter gather get that much more cover.
StageSweep sweepStages(const StepInputs& in, const StepModel& sm, std::span<StageTimes> stage_times)
{
    const FrameworkConventions& fw = *in.framework;
    StageSweep sw;
    double slackB = 0, slackF = 0;
    StageMemo memo;
    StageLocal local;
    for (std::size_t r = 0; r < stage_times.size(); ++r) {
        const StageLayers& st = in.layers[r];
        const StageParams& sp = in.params[r];
        const double units = std::max(1, st.layers + st.mtp) + (st.first || st.last ? 1 : 0);
        const bool newMemo =
            r == 0 || sp.dense != memo.dense || sp.expert != memo.expert || units != memo.units;
        if (newMemo) {
            const double tensors = stageParameterTensors(sm.tensors, st);
            memo = StageMemo{sp.dense,
                             sp.expert,
                             units,
                             dpCosts(sm.comm, sm.dp, fw, sp, units),
                             dpCopies(sm.comm, fw, sp, units, sm.hbm),
                             optimizerTimes(*in.scenario, fw, *in.constants, sp, tensors, sm.hbm),
                             microbatchGradPassSeconds(fw, *in.constants, sp, tensors, sm.hbm)};
        }
        // A stage with its neighbour's layers and memo costs what the neighbour did.
        if (newMemo || !(st == in.layers[r - 1]))
            local = stageLocal(st, sm, memo);
        const StageTimes& t = local.t;
        const DpCosts& dp = memo.dp;
        const double share = dp.sm_share;
        const double bw = t.backward_seconds + t.weight_seconds;
        // A framework that overlaps the gradient reduction hides it under a share of the last
        // backward's compute (ModelConstants::dp_overlap_fraction; 1 = all of it) that the
        // per-micro-batch collectives left free, unless it is issued only after that backward.
        const bool underBackward = fw.overlap_grad_reduce && !dp.grad_tail_after_backward;
        const double freeB = local.busyB - local.hiddenB, freeF = local.busyF - local.hiddenF;
        const double gradWindow =
            slackB + (underBackward ? in.constants->dp_overlap_fraction * freeB : 0.0);
        const double paramWindow = slackF + (fw.overlap_param_gather ? freeF : 0.0);
        // The part of each window that is this stage's compute, not pipeline idle time, pays
        // the SM share too.
        const double gradUnder = std::max(0.0, std::min(dp.grad_tail, gradWindow) - slackB);
        const double paramUnder = std::max(0.0, std::min(dp.param_tail, paramWindow) - slackF);
        const double tailsExposed =
            std::max(0.0, dp.grad_tail - gradWindow) + std::max(0.0, dp.param_tail - paramWindow);
        const double exposed = tailsExposed + dp.step_exposed + share * (gradUnder + paramUnder);
        sw.dp_exposed = std::max(sw.dp_exposed, exposed);
        slackB += bw;
        slackF += t.forward_seconds;

        sw.optimizer.gpu = std::max(sw.optimizer.gpu, memo.optimizer.gpu);
        sw.optimizer.offload = std::max(sw.optimizer.offload, memo.optimizer.offload);

        stage_times[r] = t;
        if (r == 0 || t.total() > stage_times[std::size_t(sw.slow)].total()) {
            sw.slow = int(r);
            sw.dp_mb_slow = local.mbExposed;
            sw.dp_hidden_slow = dp.grad_tail + dp.param_tail - tailsExposed -
                                share * (gradUnder + paramUnder) +
                                sm.microbatches * (1 - share) * (local.hiddenF + local.hiddenB);
        }
    }
    const StageComm c = stageComm(in.layers[std::size_t(sw.slow)], sm);
    sw.comm_slow = c.exposed;
    sw.comm_hidden_slow = c.hidden;
    return sw;
}

// Boundary crossings of one micro-batch each way, relative to one per stage: v chunks for
// interleaved 1F1B (Narayanan et al. 2021 §2.2.2), 2 for the V shapes (Zero Bubble README).
double p2pHopFactor(const ParallelPlan& pl)
{
    return p2pHopsPerMicrobatch(pl.schedule, pl.virtual_stages);
}

// The step and where it goes, from the pipeline cost and the critical stage. Every field is
// given in one initializer (no zeroing pass first: this runs per evaluation).
void fillBreakdown(const StepInputs& in, const StepModel& sm, const StageSweep& sw,
                   const PipelineCost& pc, double p2p, double tied,
                   std::span<const StageTimes> stage_times, TimeBreakdown& tb)
{
    const int mb = sm.microbatches;
    // The fixed per-step cost (docs/fit.md) is drawn with the optimizer step.
    const double optimizer = sw.optimizer.gpu + in.constants->step_overhead_seconds;
    const StageTimes& ss = stage_times[std::size_t(sw.slow)];
    // The critical stage's per-micro-batch times hold its TP/CP/EP collectives and the DP ones
    // its compute does not hide: those are communication, not compute.
    const double commSlow = sw.comm_slow.tp + sw.comm_slow.cp + sw.comm_slow.ep + sw.dp_mb_slow;
    // In double: m (up to 1e9) times the layers overflows int (found by test_limits).
    const double dmb = mb;
    const double hops = p2pHopFactor(in.scenario->parallel);
    tb = TimeBreakdown{
        .step_seconds = pc.step_seconds + sw.dp_exposed + tied + optimizer + sw.optimizer.offload,
        .compute_seconds = std::max(0.0, mb * (ss.total() - commSlow)),
        .bubble_seconds = pc.bubble_seconds,
        .bubble_fraction = pc.bubble_fraction,
        .bubble_overhead = pc.bubble_overhead,
        .exposed = {.tp = mb * sw.comm_slow.tp,
                    .cp = mb * sw.comm_slow.cp,
                    .ep = mb * sw.comm_slow.ep,
                    .pp = pc.p2p_exposed_seconds + tied,
                    .dp = sw.dp_exposed + mb * sw.dp_mb_slow},
        .overlapped = {.tp = dmb * sw.comm_hidden_slow.tp,
                       .cp = dmb * sw.comm_hidden_slow.cp,
                       .ep = dmb * sw.comm_hidden_slow.ep,
                       .pp = std::max(0.0, 2.0 * mb * hops * p2p - pc.p2p_exposed_seconds),
                       .dp = sw.dp_hidden_slow},
        .optimizer_seconds = optimizer,
        .offload_seconds = sw.optimizer.offload,
        .critical_stage = sw.slow,
    };
}

// The per-layer, head and link times of `sc` (the inputs' scenario, or it with recompute none
// for the layers a layer count leaves alone).
// `d` (no part of which depends on recompute) outlives the model: its comm context points at it.
[[gnu::always_inline]] inline StepModel stepModel(const StepInputs& in, const Scenario& sc,
                                                  const KernelModel& k, const Dims& d)
{
    const ParallelPlan& pl = sc.parallel;
    const ModelConstants& kc = *in.constants;
    const AttentionSetup att = attentionSetup(sc, *in.framework);

    // Built member by member in one initializer: a default-constructed StepModel would be
    // zeroed first (a 700-byte memset per evaluation) and then overwritten.
    const CommContext comm{&sc, &d, in.topology, &kc, in.measured};
    const LayerTimes dense = layerTimes(sc.model, d, k, pl, sc.training, kc, att, false);
    const LayerTimes moe =
        sc.model.isMoe() ? layerTimes(sc.model, d, k, pl, sc.training, kc, att, true) : dense;
    const std::int64_t vpad = paddedVocab(sc.model.vocab, pl.tp, kc.vocab_divisible_by);
    StageTimes head = headTimes(d, k, vpad, *in.framework);
    StageTimes mtpExtra{};
    if (sc.model.mtp_layers > 0) {
        mtpExtra = mtpProjectionTimes(d, k);
        addTimes(mtpExtra, head, 1);
    }
    // The training loop's metrics read the main head's logits once its backward is done (not
    // the MTP modules' logits, which no such loop reads).
    head.backward_seconds += logitMetricSeconds(d, k, vpad, sc.training.logit_metrics);
    return StepModel{
        .dense = dense,
        .moe = moe,
        .head = head,
        .mtp_extra = mtpExtra,
        .mtp_moe = sc.model.mtp_layers > 0 && sc.model.mtpIsMoe(),
        .tp = tpComm(comm, dense),
        .cp = cpComm(comm, att, dense.core),
        .ep = epComm(comm, moe),
        // The attention half of tpComm() when the dispatcher replaces the MLP's TP collectives.
        .moe_tp_share = sc.model.isMoe() && !moeLayerKeepsMlpTpComm(sc) ? 0.5 : 1.0,
        .comm = comm,
        .dp = dpLinks(comm),
        .hbm = k.hbm,
        .microbatches = std::max(1, safeMicrobatches(sc.training, pl)),
        .layer_overhead = kc.layer_overhead_seconds,
        .tensors = stageTensorCounts(sc.model),
    };
}

// The stages' sweep, the pipeline and the breakdown, on the step's model.
[[gnu::always_inline]] inline void finishStep(const StepInputs& in, const StepModel& sm,
                                              std::span<StageTimes> stage_times,
                                              std::span<double> inflight, Estimate& est)
{
    const Scenario& sc = *in.scenario;
    const ParallelPlan& pl = sc.parallel;
    const ModelConstants& kc = *in.constants;
    const std::size_t p = std::size_t(std::max(1, pl.pp));
    const StageSweep sw = sweepStages(in, sm, stage_times.first(p));
    const double p2p = ppComm(sm.comm).forward;
    const std::span<const StageTimes> times = stage_times.first(p);
    const PipelineCost pc = kc.simulate_pipeline || in.timeline
                                ? pipelineCost(pl.schedule, sm.microbatches, pl.virtual_stages,
                                               times, p2p, inflight, in.timeline)
                                : closedFormPipelineCost(pl.schedule, sm.microbatches,
                                                         pl.virtual_stages, times, p2p, inflight);
    const std::int64_t vpad = paddedVocab(sc.model.vocab, pl.tp, kc.vocab_divisible_by);
    const double tied = tiedEmbeddingSeconds(sm.comm, vpad, in.framework->grad_reduce_bytes);
    fillBreakdown(in, sm, sw, pc, p2p, tied, times, est.time);
}

// Full recompute with a layer count: the layers it leaves alone run as under recompute none,
// with a comm context on this copy of the scenario. Out of line, so the usual evaluation
// constructs neither.
[[gnu::noinline]] void finishStepWithStored(const StepInputs& in, StepModel sm,
                                            const KernelModel& k, const Dims& d,
                                            std::span<StageTimes> stage_times,
                                            std::span<double> inflight, Estimate& est)
{
    Scenario plain = *in.scenario;
    plain.training.recompute = Recompute::None;
    plain.training.recompute_num_layers = 0;
    const StepModel stored = stepModel(in, plain, k, d);
    sm.stored = &stored;
    finishStep(in, sm, stage_times, inflight, est);
}

} // namespace

void stepTime(const StepInputs& in, std::span<StageTimes> stage_times, std::span<double> inflight,
              Estimate& est)
{
    const Scenario& sc = *in.scenario;
    const ParallelPlan& pl = sc.parallel;
    const KernelModel k = kernelModel(sc, *in.constants, in.measured);
    const Dims d = dimsOf(sc.model, ActivationShape::of(sc), pl.ep, pl.expertTp());
    const StepModel sm = stepModel(in, sc, k, d);
    if (sc.training.recomputedPerChunk() > 0) [[unlikely]]
        finishStepWithStored(in, sm, k, d, stage_times, inflight, est);
    else
        finishStep(in, sm, stage_times, inflight, est);
}

} // namespace paralens
