// SPDX-License-Identifier: GPL-3.0-or-later
// The Calibration view's series: measured points, the datasheet model and the fitted curve.
#include "core/calibration_chart.h"

#include <algorithm>
#include <cmath>

namespace paralens {

LinkModel measuredGroupLink(const CollectiveCurve& curve, const ClusterSpec& cluster,
                            const ModelConstants& k)
{
    GroupPlacement g;
    g.size = std::max(1, curve.ranks);
    g.nodes = std::max(1, curve.nodes);
    g.per_node = std::max(1, (g.size + g.nodes - 1) / g.nodes);
    g.crosses_nodes = g.nodes > 1;
    g.span = curve.span;
    g.per_domain = curve.span == Span::ScaleUp
                       ? g.size
                       : std::min(g.per_node, std::max(1, cluster.scale_up_domain));
    return linkFor(g, cluster, k);
}

std::optional<double> fittedSeconds(const CollectiveCurve& curve, double bytes)
{
    if (!curve.fit.valid || !(curve.fit.busbw_gbps > 0) || !(bytes > 0))
        return std::nullopt;
    double f = busFactor(curve.collective, curve.ranks);
    if (!(f > 0))
        f = 1.0; // the fit's convention (calibration.cpp): a factor of 0 counts as 1
    return curve.fit.alpha_seconds + bytes * f / (curve.fit.busbw_gbps * 1e9);
}

double busBandwidthGbps(Collective c, int ranks, double bytes, double seconds)
{
    if (!(seconds > 0) || !(bytes > 0))
        return 0;
    double f = busFactor(c, ranks);
    if (!(f > 0))
        f = 1.0;
    return bytes / seconds * f / 1e9;
}

CalibrationChart calibrationChart(const CollectiveCurve& curve, const ClusterSpec* cluster,
                                  const ModelConstants& k, int samples)
{
    CalibrationChart ch;
    for (const auto& p : curve.points) {
        if (!(p.size_bytes > 0) || !(p.time_median_seconds > 0))
            continue; // the points fitAlphaBeta skips, so residuals line up
        ch.size_bytes.push_back(p.size_bytes);
        ch.measured_busbw_gbps.push_back(p.busbw_gbps);
        ch.measured_seconds.push_back(p.time_median_seconds);
    }
    if (curve.fit.valid && curve.fit.residual_pct.size() == ch.size_bytes.size())
        ch.residual_pct = curve.fit.residual_pct;
    if (ch.size_bytes.empty())
        return ch;

    const double lo = *std::min_element(ch.size_bytes.begin(), ch.size_bytes.end());
    const double hi = *std::max_element(ch.size_bytes.begin(), ch.size_bytes.end());
    const int n = hi > lo ? std::max(2, samples) : 1;
    for (int i = 0; i < n; ++i) {
        const double t = n == 1 ? 0.0 : double(i) / (n - 1);
        ch.model_size_bytes.push_back(i == n - 1 ? hi : lo * std::pow(hi / lo, t));
    }

    const int ranks = std::max(1, curve.ranks);
    if (cluster) {
        const LinkModel link = measuredGroupLink(curve, *cluster, k);
        auto datasheet = [&](double bytes) {
            return busBandwidthGbps(curve.collective, ranks, bytes,
                                    collectiveSeconds(curve.collective, link, bytes));
        };
        for (double s : ch.model_size_bytes)
            ch.datasheet_busbw_gbps.push_back(datasheet(s));
        for (double s : ch.size_bytes)
            ch.datasheet_at_points_gbps.push_back(datasheet(s));
    }
    if (curve.fit.valid) {
        auto fitted = [&](double bytes) {
            return busBandwidthGbps(curve.collective, ranks, bytes,
                                    fittedSeconds(curve, bytes).value_or(0));
        };
        for (double s : ch.model_size_bytes)
            ch.fitted_busbw_gbps.push_back(fitted(s));
        for (double s : ch.size_bytes)
            ch.fitted_at_points_gbps.push_back(fitted(s));
    }
    return ch;
}

} // namespace paralens
