// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/dp_time.h"

#include <algorithm>

namespace paralens {
namespace {

// Parameter tensors of one layer (DeepSpeed fetches them one by one): the attention and MLP
// weight matrices, their biases in GPT-style models, and the norms' weights (and biases).
double tensorsPerLayer(const ModelSpec& m)
{
    const double linears = 4 + mlpMatrices(m);
    return m.gated_mlp ? linears + 2 : 2 * linears + 4;
}

} // namespace

DpLinks dpLinks(const CommContext& c)
{
    const ParallelPlan& pl = c.scenario->parallel;
    const ClusterSpec& cl = c.scenario->cluster;
    const Dims& d = *c.dims;
    DpLinks l;
    l.shard_group = pl.shardGroup();
    l.hybrid = pl.zero >= 1 && l.shard_group < pl.dp;
    const int sg = l.shard_group;
    l.dense =
        c.link(l.hybrid ? placeGroup(sg * int(d.cp), int(d.t), pl.gpus(), cl) : c.topology->dp_cp);
    l.expert = c.link(c.topology->edp);
    l.replicas = c.link(placeGroup(pl.dp / sg, int(d.t * d.cp) * sg, pl.gpus(), cl));
    return l;
}

DpCosts dpCosts(const CommContext& c, const DpLinks& links, const FrameworkConventions& fw,
                const StageParams& sp, double units)
{
    const ParallelPlan& pl = c.scenario->parallel;
    const double grb = fw.grad_reduce_bytes, wb = fw.weight_bytes;
    // Dense traffic over DP×CP (or the shard group), experts over EDP.
    auto coll = [&](Collective k, double denseBytes, double expertBytes) {
        return c.seconds(k, links.dense, denseBytes) + c.seconds(k, links.expert, expertBytes);
    };
    DpCosts dp;
    switch (pl.zero) {
    case 0:
        dp.grad_tail = coll(Collective::AllReduce, sp.dense * grb, sp.expert * grb);
        break;
    case 1:
        dp.grad_tail = coll(Collective::ReduceScatter, sp.dense * grb, sp.expert * grb);
        dp.param_tail = coll(Collective::AllGather, sp.dense * wb, sp.expert * wb);
        break;
    case 2:
        dp.backward = coll(Collective::ReduceScatter, sp.dense * grb, sp.expert * grb);
        dp.hideable_backward = dp.backward;
        dp.param_tail = coll(Collective::AllGather, sp.dense * wb, sp.expert * wb);
        break;
    default: {
        const double n = units * (fw.zero3_per_tensor ? tensorsPerLayer(c.scenario->model) : 1.0);
        const double ag = n * coll(Collective::AllGather, sp.dense * wb / n, sp.expert * wb / n);
        const double rs = units * coll(Collective::ReduceScatter, sp.dense * grb / units,
                                       sp.expert * grb / units);
        dp.forward = ag;
        dp.backward = ag * (c.scenario->training.recompute == Recompute::Full ? 2 : 1) + rs;
        // Only what the prefetch covers can run ahead of compute.
        double prefetch = 1;
        if (fw.zero3_prefetch_params > 0)
            prefetch = std::min(1.0, fw.zero3_prefetch_params / (sp.total() / n));
        dp.hideable_forward = prefetch * dp.forward;
        dp.hideable_backward = prefetch * (dp.backward - rs) + rs;
        break;
    }
    }
    if (links.hybrid)
        dp.grad_tail +=
            c.seconds(Collective::AllReduce, links.replicas, sp.total() / links.shard_group * grb);
    return dp;
}

} // namespace paralens
