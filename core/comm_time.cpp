// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/comm_time.h"
#include "core/plan_options.h"

#include <algorithm>

namespace paralens {
namespace {

// One activation tensor of the micro-batch on one CP rank, b·s·h/cp 2-byte elements.
double activationBytes(const Dims& d)
{
    return d.b * d.s * d.h * 2 / d.cp;
}

} // namespace

CommTimes tpComm(const CommContext& c, const LayerTimes& dense)
{
    const ParallelPlan& pl = c.scenario->parallel;
    CommTimes tp;
    if (pl.tp <= 1)
        return tp;
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
    if (full)
        tp.backward += tp.forward;
    if (pl.tp_comm_overlap && pl.sequence_parallel) {
        // TransformerEngine / AsyncTP split each all-gather and reduce-scatter into chunks that
        // run beside the GEMM consuming or producing them (Wang et al. 2022, "Overlap
        // Communication with Dependent Computation via Decomposition", ASPLOS'23).
        const double share = c.constants->comm_sm_share;
        const double hf = std::min(tp.forward, dense.linear_f);
        const double hb = std::min(tp.backward, dense.linear_bw + (full ? dense.linear_f : 0.0));
        tp.forward += share * hf - hf;
        tp.backward += share * hb - hb;
        tp.hidden += hf + hb;
    }
    return tp;
}

CommTimes cpComm(const CommContext& c, double core_forward)
{
    const Dims& d = *c.dims;
    CommTimes cp;
    if (c.scenario->parallel.cp <= 1)
        return cp;
    const double chunk = 2 * (d.s / d.cp) * d.b * (d.kv / d.t) * 2;
    const double step = c.seconds(Collective::SendRecv, c.link(c.topology->cp), chunk);
    const double fwd = (d.cp - 1) * step, bwd = 2 * (d.cp - 1) * step;
    const double window = (d.cp - 1) / d.cp;
    cp.forward = std::max(0.0, fwd - core_forward * window);
    cp.backward = std::max(0.0, bwd - 2 * core_forward * window);
    cp.hidden = fwd + bwd - cp.forward - cp.backward;
    if (c.scenario->training.recompute == Recompute::Full) { // the recomputed forward rings again
        cp.backward += cp.forward;
        cp.hidden += fwd - cp.forward;
    }
    return cp;
}

CommTimes epComm(const CommContext& c, const LayerTimes& moe)
{
    const Scenario& sc = *c.scenario;
    const Dims& d = *c.dims;
    CommTimes ep;
    if (!sc.model.isMoe() || sc.parallel.ep <= 1)
        return ep;
    const double bytes = d.tokens / d.t * sc.model.moe.top_k * d.h * 2;
    const double a2a = c.seconds(Collective::AllToAll, c.link(c.topology->ep), bytes) *
                       c.constants->ep_load_imbalance;
    ep.forward = 2 * a2a;
    ep.backward = 2 * a2a + (sc.training.recompute == Recompute::Full ? 2 * a2a : 0);
    if (traitsOf(sc.parallel.schedule).pairs_forward_backward) {
        // DualPipe pairs a forward and a backward chunk so all-to-alls run under compute.
        const double f = std::max(0.0, ep.forward - moe.f);
        const double b = std::max(0.0, ep.backward - moe.b - moe.w);
        ep.hidden = ep.forward + ep.backward - f - b;
        ep.forward = f;
        ep.backward = b;
    }
    return ep;
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
    if (!sc.model.tied_embeddings || std::max(1, sc.parallel.pp) <= 1)
        return 0;
    LinkModel pair = c.link(c.topology->pp);
    pair.ranks = 2;
    const Dims& d = *c.dims;
    return c.seconds(Collective::AllReduce, pair,
                     double(vocab_pad) * d.h / d.t * grad_reduce_bytes);
}

} // namespace paralens
