// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/comm_time.h"
#include "core/moe_dispatch.h"
#include "core/plan_options.h"

#include <algorithm>
#include <cmath>

namespace paralens {
namespace {

// One activation tensor of the micro-batch on one CP rank, b·s·h/cp 2-byte elements.
double activationBytes(const Dims& d)
{
    return d.b * d.s * d.h * 2 / d.cp;
}

// Exposed and total seconds of one direction of the CP exchange.
struct Exposure
{
    double exposed = 0;
    double total = 0;
};

// Seconds of `comm` left over after `compute` runs alongside it.
double leftOver(double comm, double compute)
{
    return std::max(0.0, comm - compute);
}

// The p2p ring: cp − 1 K/V hops forward, one under each block from the local one on.
void ringExchange(const CommContext& c, const AttentionSetup& a, const AttentionTimes& core,
                  double chunk, Exposure& fwd, Exposure& bwd)
{
    const LinkModel l = c.link(c.topology->cp);
    const double n = c.dims->cp;
    const double kv = c.seconds(Collective::SendRecv, l, chunk);
    const double dkv = c.seconds(Collective::SendRecv, l, chunk * a.cp.dkv_bytes / 2);
    fwd.total = (n - 1) * kv;
    fwd.exposed = leftOver(kv, core.first_f) + (n - 2) * leftOver(kv, core.step_f);
    if (a.cp.dkv_trails) { // dK/dV of block i travel under block i + 1; the last one exposed
        bwd.total = (n - 1) * kv + n * dkv;
        bwd.exposed = leftOver(kv, core.first_b) + (n - 2) * leftOver(kv + dkv, core.step_b) +
                      leftOver(dkv, core.step_b) + dkv;
    } else { // one message per step: K/V, then K/V with the dK/dV so far, then dK/dV alone
        const double both = c.seconds(Collective::SendRecv, l, chunk * (1 + a.cp.dkv_bytes / 2));
        bwd.total = kv + (n - 2) * both + dkv;
        bwd.exposed = leftOver(kv, core.first_b) + (n - 2) * leftOver(both, core.step_b) +
                      leftOver(dkv, core.step_b);
    }
}

// K/V all-gathered over the CP group: before the attention (exposed), or under the local
// block with dK/dV handed on after each block.
void gatherExchange(const CommContext& c, const AttentionSetup& a, const AttentionTimes& core,
                    double chunk, Exposure& fwd, Exposure& bwd)
{
    const LinkModel l = c.link(c.topology->cp);
    const double n = c.dims->cp;
    const double gather = c.seconds(Collective::AllGather, l, n * chunk);
    if (a.cp.gather_under_first_block) {
        const double dkv = c.seconds(Collective::SendRecv, l, chunk * a.cp.dkv_bytes / 2);
        fwd = {leftOver(gather, core.first_f), gather};
        bwd.total = gather + n * dkv;
        bwd.exposed = leftOver(gather, core.first_b) + (n - 1) * leftOver(dkv, core.step_b) + dkv;
        return;
    }
    const double scatter = c.seconds(Collective::ReduceScatter, l, n * chunk * a.cp.dkv_bytes / 2);
    fwd = {gather, gather};
    bwd = {gather + scatter, gather + scatter};
}

// Ulysses: all-to-alls of Q, K, V and the output (b·(s/cp) rows each), exposed.
Exposure headExchange(const CommContext& c)
{
    const Dims& d = *c.dims;
    const LinkModel l = c.link(c.topology->cp);
    const double rows = d.b * d.s / d.cp * 2; // bf16 bytes per element of width 1
    const double s = 2 * c.seconds(Collective::AllToAll, l, rows * d.q / d.t) +
                     2 * c.seconds(Collective::AllToAll, l, rows * d.kv / d.t);
    return {s, s};
}

// What of a collective of `comm` seconds fused with a GEMM of `gemm` seconds, both split into t
// chunks and pipelined (Wang et al. 2022, "Overlap Communication with Dependent Computation via
// Decomposition", ASPLOS'23; PyTorch's fused_all_gather_matmul / fused_matmul_reduce_scatter),
// lengthens the pair: the local chunk's GEMM (all-gather) or the last chunk's send
// (reduce-scatter) has nothing beside it, so only (t − 1)/t of the GEMM covers communication.
double fusedExposed(double comm, double gemm, double t)
{
    return std::max(0.0, comm - gemm * (t - 1) / t);
}

// torchtitan's TP with sequence parallelism (DTensor ColwiseParallel / RowwiseParallel): per
// layer two all-gathers (attention and MLP inputs) and two reduce-scatters (their outputs) in
// forward; in backward the output gradients' two all-gathers and the input gradients' two
// reduce-scatters; full recompute repeats the forward's, torchtitan's op-level selective
// checkpointing re-runs the two all-gathers (it saves reduce-scatter outputs, not all-gather
// ones). Float8 tensorwise gathers FP8 (half the bytes); reduce-scatters stay BF16.
// AsyncTP (tp_comm_overlap; Inductor's micro_pipeline_tp pass) fuses an all-gather only with
// the GEMMs that read its output directly and a reduce-scatter only with the one GEMM that
// produces its input: the forward's four, the output gradients' gathers with the output
// projections' input-gradient GEMMs, the recomputed gathers with the recomputed half of the
// input projections; the input gradients' reduce-scatters follow a sum of GEMMs and stay
// exposed. With rowwise Float8 a cast sits between each all-gather and its GEMM, so only the
// forward reduce-scatters fuse. Each fused reduce-scatter sums its t partials on the compute
// stream (TpGemmSeconds::rs_sum). The comms run on copy engines (SymmetricMemory): no SMs.
CommTimes torchtitanTp(const CommContext& c, const LayerTimes& dense)
{
    const Scenario& sc = *c.scenario;
    const ParallelPlan& pl = sc.parallel;
    const TrainingSettings& tr = sc.training;
    const LinkModel l = c.link(c.topology->tp);
    const double S = activationBytes(*c.dims), t = c.dims->t;
    const bool fp8 = tr.precision == Precision::FP8 && sc.cluster.gpu.fp8_tflops > 0;
    const Fp8Recipe recipe = resolvedFp8Recipe(tr);
    const bool fp8Gather = fp8 && recipe == Fp8Recipe::Tensorwise;
    const double ag = c.seconds(Collective::AllGather, l, fp8Gather ? S / 2 : S);
    const double rs = c.seconds(Collective::ReduceScatter, l, S);
    const bool full = tr.recompute == Recompute::Full;
    const bool opSac = opLevelCheckpointing(tr);
    CommTimes tp;
    const double fwdTotal = 2 * (ag + rs);
    const double bwdTotal = 2 * (ag + rs) + (full ? fwdTotal : 0.0) + (opSac ? 2 * ag : 0.0);
    if (!pl.tp_comm_overlap) {
        tp.forward = fwdTotal;
        tp.backward = bwdTotal;
        return tp;
    }
    const TpGemmSeconds& g = dense.tp_gemm;
    const bool agFuses =
        !(fp8 && (recipe == Fp8Recipe::Rowwise || recipe == Fp8Recipe::RowwiseGwHp));
    const auto gather = [&](double gemm) { return agFuses ? fusedExposed(ag, gemm, t) : ag; };
    const double fwd = gather(g.qkv_f) + gather(g.up_f) + fusedExposed(rs, g.o_f, t) +
                       fusedExposed(rs, g.down_f, t) + 2 * g.rs_sum;
    double bwd = gather(g.o_dgrad) + gather(g.down_dgrad) + 2 * rs;
    if (full)
        bwd += fwd;
    if (opSac)
        bwd += gather(g.qkv_f / 2) + gather(g.up_f / 2);
    const double sums = (2 + (full ? 2 : 0)) * g.rs_sum;
    tp.forward = fwd;
    tp.backward = bwd;
    tp.hidden = std::max(0.0, fwdTotal + bwdTotal - (fwd + bwd - sums));
    return tp;
}

// Whether the backward repeats the dense MLP's TP collectives: Megatron's mlp recompute module
// checkpoints the MLP with its all-gather and reduce-scatter (or all-reduce) inside. Counted for
// dense models only: tpComm() prices one dense layer, whose collectives an MoE layer shares.
bool mlpRecomputed(const Scenario& s)
{
    return !s.model.isMoe() && s.training.recomputes(kRecomputeMlp);
}

// TransformerEngine's userbuffers overlap (Megatron --tp-comm-overlap; kUbPipelineSplits and
// kUbCommSms say how TE runs it by default): per layer in forward the two input all-gathers
// ring-exchanged under their GEMMs' chunks and the two output reduce-scatters pipelined under
// theirs, of which the last chunk's has no GEMM left beside it; in backward the output
// gradients' two all-gathers ring-exchanged under the output projections' input-gradient
// GEMMs, and beside the whole input-gradient and weight-gradient GEMMs of the input
// projections (bulk) the re-gathers of their inputs and the reduce-scatters of their input
// gradients. Full recompute repeats the forward's. The GEMMs' own cost of being split and of
// the SMs the communication holds is in the layer's compute (TpGemmSeconds::split_f, split_b).
CommTimes userbuffersTp(const CommContext& c, const LayerTimes& dense, const LinkModel& l, double S)
{
    const TpGemmSeconds& g = dense.tp_gemm;
    const double t = c.dims->t;
    const double ag = c.seconds(Collective::AllGather, l, S);
    const double rs = c.seconds(Collective::ReduceScatter, l, S);
    const auto pipelined = [&](double gemm) {
        return std::max(rs / kUbPipelineSplits,
                        rs - gemm * (kUbPipelineSplits - 1) / kUbPipelineSplits);
    };
    const auto bulk = [](double comm, double gemm) { return std::max(0.0, comm - gemm); };
    const double fwd = fusedExposed(ag, g.qkv_f, t) + fusedExposed(ag, g.up_f, t) +
                       pipelined(g.o_f) + pipelined(g.down_f);
    const double bwd = fusedExposed(ag, g.o_dgrad, t) + fusedExposed(ag, g.down_dgrad, t) +
                       bulk(ag, g.qkv_dgrad) + bulk(ag, g.up_dgrad) + bulk(rs, g.qkv_wgrad) +
                       bulk(rs, g.up_wgrad);
    const bool full = c.scenario->training.recompute == Recompute::Full;
    const bool mlp = mlpRecomputed(*c.scenario);
    CommTimes tp;
    tp.forward = fwd;
    tp.backward = bwd + (full  ? fwd
                         : mlp ? fusedExposed(ag, g.up_f, t) + pipelined(g.down_f)
                               : 0.0);
    const double total = 2 * (ag + rs) * (full ? 2 : 1) + (mlp ? ag + rs : 0.0) + 4 * ag + 2 * rs;
    tp.hidden = std::max(0.0, total - tp.forward - tp.backward);
    return tp;
}

} // namespace

CommTimes tpComm(const CommContext& c, const LayerTimes& dense)
{
    const ParallelPlan& pl = c.scenario->parallel;
    CommTimes tp;
    if (pl.tp <= 1)
        return tp;
    if (pl.sequence_parallel && c.scenario->training.framework == Framework::FSDP)
        return torchtitanTp(c, dense);
    const LinkModel l = c.link(c.topology->tp);
    const double S = activationBytes(*c.dims);
    if (pl.sequence_parallel) {
        const double gather = c.seconds(Collective::AllGather, l, S);
        const double pair = gather + c.seconds(Collective::ReduceScatter, l, S);
        tp.forward = 2 * pair;
        tp.backward = 2 * pair;
        tp.hidden = 2 * gather;
    } else {
        tp.forward = 2 * c.seconds(Collective::AllReduce, l, S);
        tp.backward = tp.forward;
    }
    const bool full = c.scenario->training.recompute == Recompute::Full;
    if (pl.tp_comm_overlap && pl.sequence_parallel)
        return userbuffersTp(c, dense, l, S);
    if (full)
        tp.backward += tp.forward;
    else if (mlpRecomputed(*c.scenario))
        tp.backward += tp.forward / 2; // the MLP's half of the layer's collectives
    return tp;
}

CommTimes cpComm(const CommContext& c, const AttentionSetup& a, const AttentionTimes& core)
{
    const Dims& d = *c.dims;
    CommTimes cp;
    if (c.scenario->parallel.cp <= 1)
        return cp;
    const double kvWide = (a.cp.kv_repeated ? d.q : d.kv) / d.t;
    const double chunk = 2 * (d.s / d.cp) * d.b * kvWide * 2; // K and V, bf16
    Exposure fwd, bwd;
    if (a.comm == CpComm::AllToAll)
        fwd = bwd = headExchange(c);
    else if (a.comm == CpComm::AllGather)
        gatherExchange(c, a, core, chunk, fwd, bwd);
    else
        ringExchange(c, a, core, chunk, fwd, bwd);
    if (a.exchange_exposed) {
        fwd.exposed = fwd.total;
        bwd.exposed = bwd.total;
    }
    cp.forward = fwd.exposed;
    cp.backward = bwd.exposed;
    cp.hidden = fwd.total - fwd.exposed + bwd.total - bwd.exposed;
    if (a.recomputed) { // the recomputed attention forward exchanges again
        cp.backward += fwd.exposed;
        cp.hidden += fwd.total - fwd.exposed;
    }
    return cp;
}

namespace {

// Bytes of one token's hidden vector on the wire: Megatron-Core dispatches and combines in BF16
// (FP8 dispatch is DeepSeek's own, DeepSeek-V3 §3.3, and not the frameworks' default).
double tokenBytes(const Dims& d)
{
    return d.h * 2;
}

// DeepEP / HybridEP (DeepEP README, "normal kernels"): a token crosses the NIC once per remote
// scale-up domain that holds one of its experts, then NVLink once per further destination GPU;
// the two run pipelined, so the slower sets the time. `tokens` tokens leave each rank.
double flexSeconds(const CommContext& c, double tokens)
{
    const Scenario& sc = *c.scenario;
    const GroupPlacement& g = c.topology->tp_ep;
    const LinkModel l = c.link(g);
    if (g.size <= 1)
        return 0;
    const Dims& d = *c.dims;
    const double experts = std::max(1, sc.model.moe.experts);
    const double perRank = experts / d.ep; // an EP rank's experts; its etp TP ranks share them
    // Destination GPUs of a token: its distinct EP ranks, each expert's etp shards.
    const double gpus = d.etp * expectedDestinations(sc.model.moe, perRank);
    const double inDomain = std::min<double>(g.size, std::max(1, g.per_domain));
    const double domains = std::ceil(g.size / inDomain);
    double nic = 0;
    if (domains > 1) {
        const double perDomain = experts * inDomain / g.size;
        const double hitDomains = expectedDestinations(sc.model.moe, perDomain);
        nic = tokens * hitDomains * (domains - 1) / domains * tokenBytes(d) / l.scale_out_Bps;
    }
    const double nvl = tokens * gpus * (inDomain - 1) / inDomain * tokenBytes(d) / l.scale_up_Bps;
    return l.alpha_seconds + std::max(nic, nvl);
}

// One dispatch plus one combine of an MoE layer, seconds, with the dispatcher's own volumes
// (Megatron-Core token_dispatcher.py); `tokens` tokens enter the layer on each rank, split over
// the expert TP group when `split_over_etp` (sequence parallelism).
double dispatchCombineSeconds(const CommContext& c, double tokens, double imbalance,
                              bool split_over_etp)
{
    const Scenario& sc = *c.scenario;
    const Dims& d = *c.dims;
    const Topology& topo = *c.topology;
    const double row = tokenBytes(d);
    switch (moeDispatcher(sc.parallel, sc.training.framework)) {
    case MoeDispatcher::AllGather: { // every token to every rank of etp × ep, reduce-scatter back
        const double all = tokens * topo.tp_ep.size * row;
        const LinkModel l = c.link(topo.tp_ep);
        return c.seconds(Collective::AllGather, l, all) +
               c.seconds(Collective::ReduceScatter, l, all);
    }
    case MoeDispatcher::DeepEP:
    case MoeDispatcher::HybridEP:
        return 2 * imbalance * flexSeconds(c, tokens);
    case MoeDispatcher::Default:
    case MoeDispatcher::AllToAll:
        break;
    }
    // One copy per (token, routed expert) over EP, then an all-gather of what arrived over the
    // expert TP group (reduce-scatter on the way back); the busiest rank sets the pace.
    const double sent = tokens * sc.model.moe.top_k * row * imbalance;
    const double a2a = c.seconds(Collective::AllToAll, c.link(topo.ep), sent);
    if (!split_over_etp)
        return 2 * a2a;
    const LinkModel etp = c.link(topo.etp);
    const double gathered = sent * topo.etp.size;
    return 2 * a2a + c.seconds(Collective::AllGather, etp, gathered) +
           c.seconds(Collective::ReduceScatter, etp, gathered);
}

// What of `comm` seconds running beside `compute` seconds lengthens them: the part the compute
// does not cover, but at least the SM share the communication kernels take from the compute
// while they run (time = max(comm, compute + share · comm)).
double exposedBeside(double comm, double compute, double share)
{
    return std::max(comm - compute, share * comm);
}

} // namespace

CommTimes epComm(const CommContext& c, const LayerTimes& moe)
{
    const Scenario& sc = *c.scenario;
    const Dims& d = *c.dims;
    CommTimes ep;
    if (!sc.model.isMoe())
        return ep;
    // With SP the layer's tokens are split over TP (Megatron-Core requires SP for MoE with TP);
    // without it every TP rank routes all of them and no expert TP gathers are needed.
    const bool sp = sc.parallel.sequence_parallel || d.t <= 1;
    const double tokens = sp ? d.tokens / d.t : d.tokens;
    const double imbalance = moeLoadImbalance(sc.training, *c.constants);
    const double pass = dispatchCombineSeconds(c, tokens, imbalance, sp);
    ep.forward = pass;
    // Full recompute and the moe recompute module repeat the dispatch and combine.
    const bool again =
        sc.training.recompute == Recompute::Full || sc.training.recomputes(kRecomputeMoe);
    ep.backward = pass + (again ? pass : 0);
    const ParallelPlan& pl = sc.parallel;
    if (pl.moe_overlap || traitsOf(pl.schedule).pairs_forward_backward) {
        // A forward and a backward chunk run side by side (DeepSeek-V3 §3.2.1, Megatron-Core
        // EP overlap): each one's all-to-alls run under the other's compute, so the pair's
        // communication hides under the pair's compute; what stays exposed is split as the
        // communication is.
        const double comm = ep.forward + ep.backward;
        const double exposed =
            exposedBeside(comm, moe.f + moe.b + moe.w, c.constants->ep_comm_sm_share);
        const double forwardShare = comm > 0 ? ep.forward / comm : 0;
        ep.hidden = comm - exposed;
        ep.forward = exposed * forwardShare;
        ep.backward = exposed - ep.forward;
    }
    return ep;
}

bool moeLayerKeepsMlpTpComm(const Scenario& s)
{
    // With SP the MoE layer's dispatcher replaces the MLP's TP all-gather / reduce-scatter;
    // shared experts keep theirs (Megatron-Core SharedExpertMLP runs on the TP group).
    return !s.parallel.sequence_parallel || s.model.moe.shared_experts > 0;
}

CommTimes ppComm(const CommContext& c)
{
    CommTimes pp;
    if (std::max(1, c.scenario->parallel.pp) <= 1)
        return pp;
    const double bytes = activationBytes(*c.dims) / c.dims->t;
    pp.forward = c.seconds(Collective::SendRecv, c.link(c.topology->pp), bytes);
    pp.backward = pp.forward;
    return pp;
}

double tiedEmbeddingSeconds(const CommContext& c, std::int64_t vocab_pad, double grad_reduce_bytes)
{
    const Scenario& sc = *c.scenario;
    // Under a V the embedding and the LM head are both on device 0: one copy, nothing to sum.
    // MTP modules keep a copy of the word embedding on the head's stage too, whose gradient is
    // summed with stage 0's the same way (Megatron-Core finalize_model_grads.py,
    // _allreduce_word_embedding_grads, which covers the MTP stage's duplicate).
    const ParallelPlan& pl = sc.parallel;
    if (!(sc.model.tied_embeddings || sc.model.mtp_layers > 0) || std::max(1, pl.pp) <= 1 ||
        headDeviceOf(chunkLayoutOf(pl.schedule, pl.virtual_stages), pl.pp) == 0)
        return 0;
    LinkModel pair = c.link(c.topology->pp);
    pair.ranks = 2;
    const Dims& d = *c.dims;
    return c.seconds(Collective::AllReduce, pair,
                     double(vocab_pad) * d.h / d.t * grad_reduce_bytes);
}

} // namespace paralens
