// SPDX-License-Identifier: GPL-3.0-or-later
// The alpha-beta fit, interpolation of measured curves, and the model's MeasuredPerformance.
#include "core/calibration.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace paralens {
namespace {

double factorFor(Collective c, int ranks)
{
    const double f = busFactor(c, ranks);
    return f > 0 ? f : 1.0;
}

std::string shortType(const std::string& t)
{
    if (t == "bfloat16")
        return "bf16";
    if (t == "float" || t == "float32")
        return "fp32";
    if (t == "half" || t == "float16")
        return "fp16";
    if (t == "double" || t == "float64")
        return "fp64";
    return t;
}

double model(const CollectiveCurve& c, double bytes)
{
    if (!c.fit.valid || c.fit.busbw_gbps <= 0)
        return bytes;
    return c.fit.alpha_seconds +
           bytes * factorFor(c.collective, c.ranks) / (c.fit.busbw_gbps * 1e9);
}

} // namespace

// ---- fit and interpolation ----

AlphaBetaFit fitAlphaBeta(Collective c, int ranks, const std::vector<SizePoint>& points)
{
    AlphaBetaFit fit;
    const double f = factorFor(c, ranks);
    std::vector<double> x, t, w;
    for (const auto& p : points) {
        if (p.size_bytes <= 0 || p.time_median_seconds <= 0)
            continue;
        x.push_back(p.size_bytes * f);
        t.push_back(p.time_median_seconds);
        w.push_back(p.size_bytes / (p.time_median_seconds * p.time_median_seconds));
    }
    fit.points_used = static_cast<int>(x.size());
    if (x.empty())
        return fit;
    double sw = 0, sx = 0, sxx = 0, st = 0, sxt = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        sw += w[i];
        sx += w[i] * x[i];
        sxx += w[i] * x[i] * x[i];
        st += w[i] * t[i];
        sxt += w[i] * x[i] * t[i];
    }
    double alpha = 0, beta = 0; // beta: seconds per bus byte
    const double det = sw * sxx - sx * sx;
    if (x.size() >= 2 && det > 1e-12 * sw * sxx) {
        alpha = (sxx * st - sx * sxt) / det;
        beta = (sw * sxt - sx * st) / det;
    }
    if (x.size() < 2 || det <= 1e-12 * sw * sxx || alpha < 0 || beta <= 0) {
        alpha = 0; // through the origin: the constrained optimum when α < 0
        beta = sxt / sxx;
    }
    if (!(beta > 0) || !std::isfinite(beta))
        return fit;
    fit.valid = true;
    fit.alpha_seconds = alpha;
    fit.busbw_gbps = 1.0 / beta / 1e9;
    double sq = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        const double r = 100.0 * (alpha + beta * x[i] - t[i]) / t[i];
        fit.residual_pct.push_back(r);
        sq += r * r;
        fit.max_abs_residual_pct = std::max(fit.max_abs_residual_pct, std::abs(r));
    }
    fit.rms_residual_pct = std::sqrt(sq / static_cast<double>(x.size()));
    return fit;
}

std::optional<double> CollectiveCurve::seconds(double bytes) const
{
    if (!(bytes > 0))
        return 0.0;
    std::vector<const SizePoint*> pts;
    for (const auto& p : points)
        if (p.size_bytes > 0 && p.time_median_seconds > 0)
            pts.push_back(&p);
    if (pts.empty())
        return std::nullopt;
    std::sort(pts.begin(), pts.end(),
              [](auto* a, auto* b) { return a->size_bytes < b->size_bytes; });
    const auto& lo = *pts.front();
    const auto& hi = *pts.back();
    if (bytes <= lo.size_bytes) {
        if (!fit.valid)
            return lo.time_median_seconds; // latency-bound below the sweep
        return lo.time_median_seconds * model(*this, bytes) / model(*this, lo.size_bytes);
    }
    if (bytes >= hi.size_bytes)
        return hi.time_median_seconds * model(*this, bytes) / model(*this, hi.size_bytes);
    for (size_t i = 0; i + 1 < pts.size(); ++i) {
        const auto& a = *pts[i];
        const auto& b = *pts[i + 1];
        if (bytes > b.size_bytes)
            continue;
        if (b.size_bytes <= a.size_bytes)
            return a.time_median_seconds;
        const double u = std::log(bytes / a.size_bytes) / std::log(b.size_bytes / a.size_bytes);
        return std::exp(std::log(a.time_median_seconds) +
                        u * (std::log(b.time_median_seconds) - std::log(a.time_median_seconds)));
    }
    return hi.time_median_seconds;
}

// ---- nccl-tests logs into curves ----

std::vector<CollectiveCurve> curvesFromNcclLog(const NcclLogResult& log, const std::string& source,
                                               std::vector<std::string>* warnings)
{
    std::vector<CollectiveCurve> out;
    int index = 0;
    for (const auto& t : log.tables) {
        ++index;
        const std::string where = source + " table " + std::to_string(index) + " (line " +
                                  std::to_string(t.first_line) + ", " + t.op + ")";
        if (!t.collective) {
            if (warnings)
                warnings->push_back(where + ": operation not used by the model; skipped");
            continue;
        }
        if (t.ranks < 1) {
            if (warnings)
                warnings->push_back(where + ": rank count unknown; skipped");
            continue;
        }
        CollectiveCurve c;
        c.collective = *t.collective;
        c.ranks = t.ranks;
        c.nodes = std::max(1, t.nodes);
        c.span = t.span();
        c.dtype = t.rows.empty() ? std::string() : shortType(t.rows.front().type);
        c.source = where;
        const double f = factorFor(c.collective, c.ranks);
        for (const auto& r : t.rows) {
            if (r.size_bytes <= 0 || r.out_of_place.time_seconds <= 0)
                continue;
            SizePoint p;
            p.size_bytes = r.size_bytes;
            p.time_median_seconds = p.time_min_seconds = p.time_max_seconds =
                r.out_of_place.time_seconds;
            p.algbw_gbps = r.size_bytes / r.out_of_place.time_seconds / 1e9;
            p.busbw_gbps = p.algbw_gbps * f;
            if (r.in_place && r.in_place->time_seconds > 0)
                p.in_place_seconds = r.in_place->time_seconds;
            c.points.push_back(p);
        }
        std::sort(c.points.begin(), c.points.end(), [](const SizePoint& a, const SizePoint& b) {
            return a.size_bytes < b.size_bytes;
        });
        if (c.points.empty()) {
            if (warnings)
                warnings->push_back(where + ": no row with a positive size and time; skipped");
            continue;
        }
        c.fit = fitAlphaBeta(c.collective, c.ranks, c.points);
        out.push_back(std::move(c));
    }
    return out;
}

void addNcclLog(CalibrationProfile& profile, const NcclLogResult& log, const std::string& source)
{
    for (const auto& w : log.warnings)
        profile.warnings.push_back(source + ":" + std::to_string(w.line) + ": " + w.message);
    auto curves = curvesFromNcclLog(log, source, &profile.warnings);
    auto& s = profile.system;
    for (const auto& t : log.tables) {
        if (s.gpu_name.empty())
            s.gpu_name = t.device_name;
        if (s.nccl_version.empty())
            s.nccl_version = t.nccl_version;
        for (const auto& h : t.hosts)
            if (std::find(s.hosts.begin(), s.hosts.end(), h) == s.hosts.end())
                s.hosts.push_back(h);
        if (t.ranks > s.gpu_count) {
            s.gpu_count = t.ranks;
            s.nodes = std::max(1, t.nodes);
            s.gpus_per_node = t.ranks / s.nodes;
        }
    }
    for (auto& c : curves) {
        for (const auto& e : profile.collectives)
            if (e.collective == c.collective && e.ranks == c.ranks && e.span == c.span &&
                e.dtype == c.dtype)
                profile.warnings.push_back(
                    c.source + " repeats " + std::string(toString(c.collective)) + " on " +
                    std::to_string(c.ranks) + " ranks (" + std::string(toString(c.span)) +
                    "); the later table is used");
        profile.collectives.push_back(std::move(c));
    }
}

void mergeProfile(CalibrationProfile& profile, const CalibrationProfile& other)
{
    auto& s = profile.system;
    const auto& o = other.system;
    auto take = [](std::string& a, const std::string& b) {
        if (a.empty())
            a = b;
    };
    take(s.gpu_name, o.gpu_name);
    take(s.driver_version, o.driver_version);
    take(s.cuda_version, o.cuda_version);
    take(s.nccl_version, o.nccl_version);
    take(s.topology, o.topology);
    if (o.gpu_count > s.gpu_count) {
        s.gpu_count = o.gpu_count;
        s.gpus_per_node = o.gpus_per_node;
        s.nodes = o.nodes;
    }
    for (const auto& h : o.hosts)
        if (std::find(s.hosts.begin(), s.hosts.end(), h) == s.hosts.end())
            s.hosts.push_back(h);
    profile.collectives.insert(profile.collectives.end(), other.collectives.begin(),
                               other.collectives.end());
    profile.gemm.insert(profile.gemm.end(), other.gemm.begin(), other.gemm.end());
    if (other.hbm_gbps)
        profile.hbm_gbps = other.hbm_gbps;
    if (other.d2d_copy_gbps)
        profile.d2d_copy_gbps = other.d2d_copy_gbps;
    profile.warnings.insert(profile.warnings.end(), other.warnings.begin(), other.warnings.end());
    if (other.model_constants && !profile.model_constants)
        profile.model_constants = other.model_constants;
}

void refit(CalibrationProfile& profile)
{
    for (auto& c : profile.collectives)
        c.fit = fitAlphaBeta(c.collective, c.ranks, c.points);
}

// ---- the model's view ----

CalibratedPerformance::CalibratedPerformance(CalibrationProfile profile, double peak_bf16_tflops,
                                             double peak_fp8_tflops)
    : m_profile(std::move(profile)), m_peak_bf16_tflops(peak_bf16_tflops),
      m_peak_fp8_tflops(peak_fp8_tflops)
{
}

const CollectiveCurve* CalibratedPerformance::curveFor(Collective c, int ranks, Span span) const
{
    const CollectiveCurve* best = nullptr;
    std::tuple<double, int, size_t> bestKey{};
    for (const auto& curve : m_profile.collectives) {
        if (curve.collective != c || curve.span != span || curve.ranks < 1 || curve.points.empty())
            continue;
        // Nearest group size in log2, then bf16, then the fuller sweep; later wins ties.
        const double dist =
            std::abs(std::log2(static_cast<double>(curve.ranks) / std::max(1, ranks)));
        const std::tuple<double, int, size_t> key{-dist, curve.dtype == "bf16" ? 1 : 0,
                                                  curve.points.size()};
        if (!best || key >= bestKey) {
            best = &curve;
            bestKey = key;
        }
    }
    return best;
}

std::optional<double> CalibratedPerformance::collectiveSeconds(Collective c, int ranks, Span span,
                                                               double bytes) const
{
    // A point-to-point transfer has a cost whatever the group size says; collectives over one
    // rank have none.
    if ((ranks <= 1 && c != Collective::SendRecv) || !(bytes > 0))
        return 0.0;
    if (c == Collective::SendRecv)
        ranks = std::max(ranks, 2);
    const auto* curve = curveFor(c, ranks, span);
    if (!curve)
        return std::nullopt;
    const auto t = curve->seconds(bytes);
    if (!t)
        return std::nullopt;
    if (curve->ranks == ranks)
        return *t;
    // Same bus bandwidth at this size, the bus factor of the asked group size.
    return *t * factorFor(c, ranks) / factorFor(c, curve->ranks);
}

std::optional<double> CalibratedPerformance::gemmEfficiency(double m, double n, double k,
                                                            bool fp8) const
{
    const double peak = fp8 ? m_peak_fp8_tflops : m_peak_bf16_tflops;
    if (!(peak > 0) || !(m > 0) || !(n > 0) || !(k > 0))
        return std::nullopt;
    const GemmPoint* best = nullptr;
    double bestDist = 0;
    for (const auto& g : m_profile.gemm) {
        if ((g.dtype == "fp8") != fp8 || g.tflops <= 0)
            continue;
        const double d = std::pow(std::log(m / g.m), 2) + std::pow(std::log(n / g.n), 2) +
                         std::pow(std::log(k / g.k), 2);
        if (!best || d < bestDist) {
            best = &g;
            bestDist = d;
        }
    }
    if (!best)
        return std::nullopt;
    return std::min(1.0, best->tflops / peak);
}

std::optional<double> CalibratedPerformance::hbmGbps() const
{
    if (m_profile.hbm_gbps)
        return m_profile.hbm_gbps;
    return m_profile.d2d_copy_gbps;
}

void CalibratedPerformance::adjustConstants(std::string_view gpu_name, ModelConstants& k) const
{
    if (m_profile.model_constants)
        m_profile.model_constants->applyTo(gpu_name, k);
}

} // namespace paralens
