// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/optimizer_time.h"
#include "core/dims.h"

#include <algorithm>

namespace paralens {

OptimizerTimes optimizerTimes(const Scenario& s, const FrameworkConventions& fw,
                              const ModelConstants& k, const StageParams& sp,
                              double hbm_bytes_per_s)
{
    const ParallelPlan& pl = s.parallel;
    const ZeroShards shards = pl.zero >= 1 ? zeroShards(pl) : ZeroShards{};
    const double local = sp.dense / shards.dense + sp.expert / shards.expert;
    OptimizerTimes t;
    if (pl.offload_optimizer) {
        const double pcie = std::max(kMinPcieBytesPerSecond, s.cluster.pcie_gbps * kBytesPerGB);
        t.offload =
            local * (fw.grad_bytes + fw.weight_bytes) / pcie + local / k.cpu_adam_params_per_second;
    } else {
        t.gpu = local * k.adam_bytes_per_param / hbm_bytes_per_s;
    }
    return t;
}

} // namespace paralens
