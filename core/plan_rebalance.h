// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A plan moved to another GPU count: DP first, then the model-parallel degrees when DP alone
// cannot make tp·pp·cp·dp = gpus. The controls use it when the user types a GPU count.
#include "core/scenario.h"

#include <string>
#include <vector>

namespace paralens {

/// The scenario on `gpus` GPUs and the settings that had to change, in words ("DP 8 → 1").
struct Rebalanced
{
    Scenario scenario;
    std::vector<std::string> changes; ///< one entry per changed degree, in the order changed
};

/// Moves `s` to `gpus` GPUs keeping as much of its plan as possible:
/// 1. DP = gpus / (tp·pp·cp) when that is a whole number;
/// 2. otherwise PP, then CP, then TP, each lowered to the largest value it may take
///    (plan_options' degree lists) that lets the degrees fixed so far divide `gpus`, and DP
///    follows;
/// 3. a chunked schedule left with pp = 1 becomes 1F1B; v is clamped to the schedule's
///    largest on the new PP; EP is lowered to the largest degree dp·cp still allows.
/// A count that is not whole nodes of the cluster (above one node) only moves DP, when it
/// divides; the result is not validated, so validate() names what is still wrong.
/// `gpus` < 1 returns `s` unchanged with no change listed.
Rebalanced rebalanceForGpus(const Scenario& s, int gpus);

} // namespace paralens
