// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/dp_time.h"
#include "core/kernel_time.h"

#include <algorithm>

namespace paralens {
namespace {

// A stage's ZeRO-3 gather units: its layers, and the embedding / LM head as one more unit.
// FSDP2's root unit (embedding, final norm, LM head) is its own size and is never resharded;
// otherwise every unit counts as the average (the per-layer wrapping of the other frameworks).
struct Zero3Units
{
    double layers = 0;      ///< layer units
    double layer = 0;       ///< dense parameters per layer unit
    double root = 0;        ///< dense parameters of FSDP2's root unit (0: none on this stage)
    double kept_layers = 0; ///< layer units not resharded after forward (torchtitan's last block)
};

Zero3Units zero3Units(const FrameworkConventions& fw, const StageParams& sp, double units)
{
    Zero3Units u;
    const bool holdsRoot = sp.embedding > 0 && units > 1;
    if (fw.zero3_root_unsharded && holdsRoot) {
        u.root = sp.embedding;
        u.layers = units - 1;
        u.layer = (sp.dense - u.root) / u.layers;
        u.kept_layers = fw.zero3_last_layer_kept ? 1 : 0;
    } else {
        u.layers = units;
        u.layer = sp.dense / units;
    }
    return u;
}

// Layer units gathered again in each micro-batch's backward: none without reshard-after-forward;
// the resharded layers once (FSDP2 gathers in pre-backward and recomputes inside the unit), or
// twice when a recomputed forward gathers again (DeepSpeed's module hooks).
double backwardGatheredUnits(const CommContext& c, const FrameworkConventions& fw,
                             const Zero3Units& u)
{
    if (!fw.zero3_reshard_after_forward)
        return 0;
    const bool regather =
        fw.zero3_regather_for_recompute && c.scenario->training.recompute == Recompute::Full;
    return (regather ? 2 : 1) * (u.layers - u.kept_layers);
}

template <typename Coll>
void zero3Costs(const CommContext& c, const FrameworkConventions& fw, const StageParams& sp,
                double units, const Coll& coll, DpCosts& dp)
{
    const double grb = fw.grad_reduce_bytes, wb = fw.weight_bytes, lgb = fw.linear_gather_bytes;
    const Zero3Units u = zero3Units(fw, sp, units);
    // DeepSpeed fetches tensor by tensor: every gather pays its own latency (a dense layer's
    // tensors for every layer).
    const double perLayer = fw.zero3_per_tensor ? parameterTensorsPerLayer(c.scenario->model) : 1.0;
    const double n = u.layers * perLayer;
    const double expertPer = sp.expert / u.layers;
    const double agOne =
        coll(Collective::AllGather, u.layer * lgb / perLayer, expertPer * lgb / perLayer);
    const double rsOne = coll(Collective::ReduceScatter, u.layer * grb, expertPer * grb);
    const double agRoot = u.root > 0 ? coll(Collective::AllGather, u.root * wb, 0.0) : 0.0;
    const double rsRoot = u.root > 0 ? coll(Collective::ReduceScatter, u.root * grb, 0.0) : 0.0;
    const double ag = n * agOne + agRoot, rs = u.layers * rsOne + rsRoot;
    const double agBackward = backwardGatheredUnits(c, fw, u) * perLayer * agOne;
    // Only what the prefetch covers can run ahead of compute; the first gather of a pass and
    // the last reduce-scatter have no compute to run under.
    double prefetch = 1;
    if (fw.zero3_prefetch_params > 0)
        prefetch = std::min(1.0, fw.zero3_prefetch_params / (sp.total() / n));
    const double agFirst = u.root > 0 ? agRoot : agOne;
    const double rsLast = u.root > 0 ? rsRoot : rsOne;
    if (fw.zero3_accumulate_unsharded) {
        // Under PP: gathered at the first forward and kept, reduced once after the last backward.
        dp.param_tail = ag - agFirst;
        dp.step_exposed = agFirst;
        dp.grad_tail = rs;
        dp.grad_tail_after_backward = true;
        dp.backward = agBackward; // "always": freed after each forward, gathered in backward
        dp.hideable_backward = fw.zero3_backward_gather_hidden ? prefetch * agBackward : 0.0;
        return;
    }
    dp.forward = ag;
    dp.backward = agBackward + rs;
    dp.hideable_forward = prefetch * (ag - agFirst);
    dp.hideable_backward = (fw.zero3_backward_gather_hidden ? prefetch * agBackward : 0.0) +
                           (fw.zero3_backward_reduce_hidden ? rs - rsLast : 0.0);
}

} // namespace

DpCopies dpCopies(const CommContext& c, const FrameworkConventions& fw, const StageParams& sp,
                  double units, double hbm_bytes_per_s)
{
    const int zero = c.scenario->parallel.zero;
    const bool perUnit =
        zero >= 3 || (zero == 2 && (fw.zero2_per_unit || fw.zero3_accumulate_unsharded));
    const double gather = fw.zero3_gather_copy_bytes, reduce = fw.zero3_reduce_copy_bytes;
    if (!perUnit || hbm_bytes_per_s <= 0 || gather + reduce <= 0)
        return {};
    const Zero3Units u = zero3Units(fw, sp, units);
    const double all = sp.total() / hbm_bytes_per_s;
    const double regathered =
        backwardGatheredUnits(c, fw, u) * (u.layer + sp.expert / u.layers) / hbm_bytes_per_s;
    if (fw.zero3_accumulate_unsharded)
        return {.forward = 0, .backward = gather * regathered, .step = (gather + reduce) * all};
    return {.forward = gather * all, .backward = gather * regathered + reduce * all, .step = 0};
}

double ncclSmSeconds(Collective c, const LinkModel& link, double bytes, double seconds, double sms)
{
    if (link.ranks <= 1 || bytes <= 0 || sms <= 0)
        return 0;
    const double busBytes = busFactor(c, link.ranks) * bytes;
    const double busSeconds =
        link.busBps() > 0 ? std::min(seconds, busBytes / link.busBps()) : seconds;
    // Moving the bytes takes their CTAs; the latency steps hold every channel's CTA spinning.
    const double moving = std::min(busBytes / kNcclBusBytesPerSm, kNcclMaxCtas * busSeconds);
    const double waiting = kNcclMaxCtas * (seconds - busSeconds);
    return std::min(moving + waiting, sms * seconds) / sms;
}

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
    if (l.hybrid)
        l.replicas = c.link(placeGroup(pl.dp / sg, int(d.t * d.cp) * sg, pl.gpus(), cl));
    l.sms = streamingMultiprocessors(cl.gpu);
    return l;
}

DpCosts dpCosts(const CommContext& c, const DpLinks& links, const FrameworkConventions& fw,
                const StageParams& sp, double units)
{
    const ParallelPlan& pl = c.scenario->parallel;
    const double grb = fw.grad_reduce_bytes, wb = fw.weight_bytes;
    // Dense traffic over DP×CP (or the shard group), experts over EDP; with the SM time NCCL
    // holds for each.
    const double sms = links.sms;
    double seconds = 0, smSeconds = 0;
    auto one = [&](Collective k, const LinkModel& l, double bytes) {
        const double t = c.seconds(k, l, bytes);
        seconds += t;
        smSeconds += ncclSmSeconds(k, l, bytes, t, sms);
        return t;
    };
    auto coll = [&](Collective k, double denseBytes, double expertBytes) {
        return one(k, links.dense, denseBytes) + one(k, links.expert, expertBytes);
    };
    // The parameter all-gather: the linears' weights at linear_gather_bytes (FP8 parameters),
    // the embedding and LM head at weight_bytes.
    const double gatherDense =
        sp.embedding * wb + (sp.dense - sp.embedding) * fw.linear_gather_bytes;
    const double gatherExpert = sp.expert * fw.linear_gather_bytes;
    DpCosts dp;
    switch (pl.zero) {
    case 0:
        dp.grad_tail = coll(Collective::AllReduce, sp.dense * grb, sp.expert * grb);
        break;
    case 1:
        dp.grad_tail = coll(Collective::ReduceScatter, sp.dense * grb, sp.expert * grb);
        dp.param_tail = coll(Collective::AllGather, gatherDense, gatherExpert);
        break;
    case 2:
        // Unit by unit, each collective with its own latency (FrameworkConventions).
        if (fw.zero2_per_unit) {
            zero3Costs(c, fw, sp, units, coll, dp);
            break;
        }
        dp.param_tail = coll(Collective::AllGather, gatherDense, gatherExpert);
        if (fw.zero3_accumulate_unsharded) {
            // FSDP under PP: one reduce-scatter after the stage's last backward.
            dp.grad_tail = coll(Collective::ReduceScatter, sp.dense * grb, sp.expert * grb);
            dp.grad_tail_after_backward = true;
            break;
        }
        dp.backward = coll(Collective::ReduceScatter, sp.dense * grb, sp.expert * grb);
        dp.hideable_backward = dp.backward;
        break;
    default:
        zero3Costs(c, fw, sp, units, coll, dp);
        break;
    }
    if (links.hybrid)
        dp.grad_tail +=
            one(Collective::AllReduce, links.replicas, sp.total() / links.shard_group * grb);
    dp.sm_share = seconds > 0 ? smSeconds / seconds : 0.0;
    return dp;
}

} // namespace paralens
