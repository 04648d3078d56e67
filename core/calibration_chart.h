// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/calibration.h"
#include "core/cluster_spec.h"
#include "core/comm_cost.h"
#include "core/constants.h"

#include <vector>

namespace paralens {

/// The datasheet link of the group a curve was measured on: `curve.ranks` ranks spread evenly
/// over `curve.nodes` nodes; inside one scale-up domain when the curve's span is intra-node,
/// otherwise ranks / nodes members per domain (at most the cluster's scale-up domain).
LinkModel measuredGroupLink(const CollectiveCurve& curve, const ClusterSpec& cluster,
                            const ModelConstants& k = {});

/// Seconds of the curve's alpha-beta fit for a message of `bytes`:
/// t = α + bytes · busFactor(c, n) / B_bus. nullopt when the fit is invalid or bytes <= 0.
std::optional<double> fittedSeconds(const CollectiveCurve& curve, double bytes);

/// nccl-tests' bus bandwidth of a collective of `bytes` taking `seconds` on `ranks` ranks:
/// bytes / seconds · busFactor (sendrecv and broadcast: factor 1), in GB/s (1e9 B/s).
/// 0 when seconds <= 0.
double busBandwidthGbps(Collective c, int ranks, double bytes, double seconds);

/// Everything the Calibration view draws for one curve, computed here so the view derives
/// nothing. Sizes in bytes (nccl-tests' convention), bandwidths in GB/s (1e9 B/s).
struct CalibrationChart
{
    /// The measured points the fit used (size > 0 and time > 0), in the curve's order
    /// (ascending size), with the busbw the log or profile recorded for them.
    std::vector<double> size_bytes;
    std::vector<double> measured_busbw_gbps;
    std::vector<double> measured_seconds;
    /// The fit's residual per measured point, 100·(fit − measured)/measured time
    /// (AlphaBetaFit::residual_pct, same order); empty when the fit is invalid.
    std::vector<double> residual_pct;
    /// Log-spaced sizes spanning the measured range (both ends included).
    std::vector<double> model_size_bytes;
    /// Before calibration: the core's datasheet alpha-beta model (collectiveSeconds without a
    /// profile) on measuredGroupLink(); empty when no cluster was given.
    std::vector<double> datasheet_busbw_gbps;
    /// After calibration: the fitted curve (fittedSeconds); empty when the fit is invalid.
    std::vector<double> fitted_busbw_gbps;
    /// The datasheet and fitted bus bandwidths at each measured size (for tooltips); empty
    /// like the model series above.
    std::vector<double> datasheet_at_points_gbps;
    std::vector<double> fitted_at_points_gbps;
};

/// The chart series of one curve. `cluster` may be null (no datasheet series); `samples` model
/// sizes (at least 2) are spread evenly in log size over the measured range.
CalibrationChart calibrationChart(const CollectiveCurve& curve, const ClusterSpec* cluster,
                                  const ModelConstants& k = {}, int samples = 96);

} // namespace paralens
