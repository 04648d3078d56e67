// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/moe_dispatch.h"

#include <algorithm>
#include <cmath>

namespace paralens {
namespace {

// DeepSpeed-MoE's default capacity_factor (deepspeed/moe/layer.py, MoE(capacity_factor=1.0,
// drop_tokens=True)): each expert takes at most the mean load, padded up to it.
constexpr double kDeepSpeedCapacityFactor = 1.0;

// Beyond this many draws the exact product below changes by less than rounding; the rest is
// taken as draws with replacement.
constexpr int kExactDraws = 1024;

// Probability that none of `draws` picks without replacement from a pool of `pool` items lands
// on a given set of `mine` items: Π_{i<draws} (pool − mine − i) / (pool − i).
double missProbability(double pool, double mine, double draws)
{
    if (mine <= 0 || draws <= 0)
        return 1;
    if (draws > pool - mine)
        return 0;
    double p = 1;
    const int exact = int(std::min<double>(draws, kExactDraws));
    for (int i = 0; i < exact && p > 0; ++i)
        p *= (pool - mine - i) / (pool - i);
    if (draws > exact)
        p *= std::pow((pool - mine - exact) / (pool - exact), draws - exact);
    return std::max(0.0, p);
}

} // namespace

MoeDispatcher moeDispatcher(const ParallelPlan& plan, Framework framework)
{
    if (plan.moe_dispatcher != MoeDispatcher::Default)
        return plan.moe_dispatcher;
    return framework == Framework::Megatron ? MoeDispatcher::AllGather : MoeDispatcher::AllToAll;
}

double moeLoadImbalance(const TrainingSettings& training, const ModelConstants& k)
{
    if (training.moe_load_imbalance > 0)
        return training.moe_load_imbalance;
    if (training.framework == Framework::DeepSpeed)
        return kDeepSpeedCapacityFactor;
    return std::max(1.0, k.ep_load_imbalance);
}

double expectedDestinations(const MoeSpec& moe, double per_unit)
{
    const double E = moe.experts, k = std::min(moe.top_k, moe.experts);
    if (E <= 0 || k <= 0 || per_unit <= 0)
        return 0;
    per_unit = std::min(per_unit, E);
    const bool grouped = moe.groups > 1 && moe.group_top_k > 0 && moe.group_top_k < moe.groups;
    if (!grouped)
        return E / per_unit * (1 - missProbability(E, per_unit, k));
    const double perGroup = E / moe.groups, picked = moe.group_top_k;
    if (per_unit >= perGroup) // a unit holds whole groups: it is hit when one of them is picked
        return E / per_unit *
               (1 - missProbability(moe.groups, per_unit / perGroup, std::min(picked, k)));
    // Units inside a group: the k experts are drawn from the picked groups' experts.
    const double pool = picked * perGroup;
    return pool / per_unit * (1 - missProbability(pool, per_unit, k));
}

} // namespace paralens
