// SPDX-License-Identifier: GPL-3.0-or-later
// Fitting the model's free constants to measured runs: robust least squares on log error.
#include "core/fit.h"
#include "core/error.h"
#include "core/evaluate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

namespace paralens {
namespace {

[[noreturn]] void fitError(const std::string& what)
{
    throw InputError("runs", "fit: " + what);
}

bool isTime(RunMetric m)
{
    return m != RunMetric::PeakMemoryGib;
}

// One run the fit predicts: which residuals it feeds and which parameters act on it.
struct Sample
{
    std::size_t run = 0;
    std::vector<std::size_t> rows; ///< into FitResult::rows
    std::vector<int> params;       ///< into the parameter vector
    double step0 = 0;              ///< predicted step with the start constants
    bool holdout = false;
};

// The residual of a row is log0 + sign · log(step / step0): log(predicted / measured) in the
// row's own metric, since a time metric scales with the step and a rate with its inverse.
struct RowBase
{
    double log0 = 0;
    double sign = 1;
};

class Problem
{
public:
    Problem(std::span<const MeasuredRun> runs, const ModelConstants& start,
            const MeasuredPerformance* measured)
        : m_runs(runs), m_start(start), m_measured(measured)
    {
    }

    std::vector<FitParameter> params;
    std::vector<Sample> samples;
    std::vector<RowBase> bases; ///< parallel to FitResult::rows

    double step(const Sample& s, std::span<const double> x) const
    {
        ModelConstants k = m_start;
        for (int p : s.params)
            setConstant(params[std::size_t(p)].constant, k, x[std::size_t(p)]);
        evaluate(m_runs[s.run].scenario, m_est, m_measured, k);
        return m_est.time.step_seconds;
    }
    double stepAtStart(const Sample& s) const
    {
        evaluate(m_runs[s.run].scenario, m_est, m_measured, m_start);
        return m_est.time.step_seconds;
    }
    /// Residuals of the samples with holdout == `held`, in sample then row order.
    std::vector<double> residuals(std::span<const double> x, bool held) const
    {
        std::vector<double> r;
        for (const Sample& s : samples)
            if (s.holdout == held)
                appendResiduals(s, step(s, x), r);
        return r;
    }
    void appendResiduals(const Sample& s, double stepSeconds, std::vector<double>& r) const
    {
        const double lr = stepSeconds > 0 && s.step0 > 0 ? std::log(stepSeconds / s.step0) : 10;
        for (std::size_t row : s.rows)
            r.push_back(bases[row].log0 + bases[row].sign * lr);
    }

private:
    std::span<const MeasuredRun> m_runs;
    ModelConstants m_start;
    const MeasuredPerformance* m_measured;
    mutable Estimate m_est;
};

std::string gpuOf(const MeasuredRun& r)
{
    return r.scenario.cluster.gpu.name;
}

// The parameters: one gemm_efficiency per GPU type among the runs, one of each other constant.
void makeParameters(Problem& pb, std::span<const MeasuredRun> runs, const FitOptions& opt,
                    const ModelConstants& start)
{
    std::vector<FitConstant> chosen = opt.constants;
    if (chosen.empty())
        chosen.assign(allFitConstants().begin(), allFitConstants().end());
    for (FitConstant c : allFitConstants()) {
        if (std::find(chosen.begin(), chosen.end(), c) == chosen.end())
            continue;
        std::vector<std::string> gpus{std::string()};
        if (c == FitConstant::GemmEfficiency) {
            gpus.clear();
            for (const Sample& s : pb.samples) {
                const std::string g = gpuOf(runs[s.run]);
                if (std::none_of(gpus.begin(), gpus.end(),
                                 [&](const std::string& x) { return sameGpuName(x, g); }))
                    gpus.push_back(g);
            }
        }
        for (const std::string& g : gpus) {
            FitParameter p;
            p.constant = c;
            p.gpu = g;
            p.name = std::string(fitConstantKey(c)) + (g.empty() ? "" : "[" + g + "]");
            p.bounds = fitConstantBounds(c);
            p.start = constantValue(c, start, g);
            p.value = std::clamp(p.start, p.bounds.lower, p.bounds.upper);
            pb.params.push_back(p);
        }
    }
    for (Sample& s : pb.samples)
        for (int i = 0; i < int(pb.params.size()); ++i) {
            const FitParameter& p = pb.params[std::size_t(i)];
            if (p.gpu.empty() || sameGpuName(p.gpu, gpuOf(runs[s.run])))
                s.params.push_back(i);
        }
}

// Rows and samples from the model's predictions with the start constants.
void makeSamples(Problem& pb, FitResult& out, std::span<const MeasuredRun> runs,
                 const ModelConstants& start, const MeasuredPerformance* measured)
{
    const AccuracyReport report = validateRuns(runs, start, measured, GroupBy::None);
    std::map<std::size_t, std::size_t> sampleOf;
    for (const RunResult& r : report.rows) {
        if (!r.failure.empty()) {
            out.failed.push_back(r.name + ": " + r.failure);
            continue;
        }
        if (!isTime(r.metric)) {
            ++out.skipped_rows;
            continue;
        }
        if (!(r.measured > 0) || !(r.predicted > 0) || !(r.step_seconds > 0)) {
            out.failed.push_back(r.name + ": no positive prediction to fit");
            continue;
        }
        auto [it, added] = sampleOf.try_emplace(r.run_index, pb.samples.size());
        if (added) {
            Sample s;
            s.run = r.run_index;
            pb.samples.push_back(s);
        }
        FitRow row;
        row.name = r.name;
        row.run_index = r.run_index;
        row.metric = r.metric;
        row.measured = r.measured;
        row.predicted_before = r.predicted;
        row.error_before = r.error;
        pb.samples[it->second].rows.push_back(out.rows.size());
        out.rows.push_back(row);
        pb.bases.push_back(
            {std::log(r.predicted / r.measured), r.metric == RunMetric::StepSeconds ? 1.0 : -1.0});
    }
}

// Fisher–Yates on mt19937_64's raw output: the same split on every standard library.
void splitHoldout(std::vector<Sample>& samples, double share, std::uint64_t seed)
{
    if (share <= 0)
        return;
    std::vector<std::size_t> order(samples.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::mt19937_64 rng(seed);
    for (std::size_t i = order.size(); i > 1; --i)
        std::swap(order[i - 1], order[std::size_t(rng() % i)]);
    auto held = std::size_t(std::llround(share * double(samples.size())));
    held = std::clamp<std::size_t>(held, 1, samples.size() - 1);
    for (std::size_t i = 0; i < held; ++i)
        samples[order[i]].holdout = true;
}

// ---- the optimiser, in coordinates u ∈ [0, 1] per parameter ----

double huberCost(std::span<const double> r, double delta)
{
    double c = 0;
    for (double v : r) {
        const double a = std::abs(v);
        c += a <= delta ? 0.5 * v * v : delta * (a - 0.5 * delta);
    }
    return c;
}

class LogFit
{
public:
    LogFit(const Problem& pb, double delta) : m_pb(pb), m_delta(delta)
    {
        for (const FitParameter& p : pb.params) {
            m_lo.push_back(p.bounds.lower);
            m_span.push_back(p.bounds.upper - p.bounds.lower);
        }
    }

    std::vector<double> toX(std::span<const double> u) const
    {
        std::vector<double> x(u.size());
        for (std::size_t i = 0; i < u.size(); ++i)
            x[i] = m_lo[i] + std::clamp(u[i], 0.0, 1.0) * m_span[i];
        return x;
    }
    double cost(std::span<const double> u) const
    {
        return huberCost(m_pb.residuals(toX(u), false), m_delta);
    }
    /// Train residuals with parameter j moved to u_j = v (others as in u).
    std::vector<double> residualsWith(std::vector<double> u, std::size_t j, double v) const
    {
        u[j] = v;
        return m_pb.residuals(toX(u), false);
    }
    bool identified(std::span<const double> u, std::size_t j) const;
    void scan(std::vector<double>& u, const std::vector<bool>& free) const;
    int levenbergMarquardt(std::vector<double>& u, const std::vector<bool>& free, int maxIt,
                           bool* converged) const;

private:
    std::vector<std::vector<double>> jacobian(std::span<const double> u, std::span<const double> r,
                                              const std::vector<bool>& free) const;

    const Problem& m_pb;
    double m_delta;
    std::vector<double> m_lo, m_span;
};

// A constant is identified when moving it across its bounds changes some fitted prediction by
// more than 0.1 % (derivatives alone miss constants sitting on a kink, e.g. fully hidden DP).
bool LogFit::identified(std::span<const double> u, std::size_t j) const
{
    const std::vector<double> base(u.begin(), u.end());
    const auto r0 = m_pb.residuals(toX(base), false);
    for (double v : {0.0, 0.5, 1.0}) {
        const auto r = residualsWith(base, j, v);
        for (std::size_t i = 0; i < r.size(); ++i)
            if (std::abs(r[i] - r0[i]) > 1e-3)
                return true;
    }
    return false;
}

// One pass of a coarse grid per free parameter: a start point away from flat kinks.
void LogFit::scan(std::vector<double>& u, const std::vector<bool>& free) const
{
    double best = cost(u);
    for (std::size_t j = 0; j < u.size(); ++j) {
        if (!free[j])
            continue;
        double bestV = u[j];
        for (int g = 0; g <= 8; ++g) {
            const double c = huberCost(residualsWith(u, j, g / 8.0), m_delta);
            if (c < best * (1 - 1e-9)) {
                best = c;
                bestV = g / 8.0;
            }
        }
        u[j] = bestV;
    }
}

std::vector<std::vector<double>> LogFit::jacobian(std::span<const double> u,
                                                  std::span<const double> r,
                                                  const std::vector<bool>& free) const
{
    constexpr double h = 1e-4;
    std::vector<std::vector<double>> J(u.size());
    for (std::size_t j = 0; j < u.size(); ++j) {
        if (!free[j])
            continue;
        const double step = u[j] + h <= 1 ? h : -h;
        const auto rj = residualsWith({u.begin(), u.end()}, j, u[j] + step);
        J[j].resize(r.size());
        for (std::size_t i = 0; i < r.size(); ++i)
            J[j][i] = (rj[i] - r[i]) / step;
    }
    return J;
}

// Solves A·d = b (n small) by Gaussian elimination with partial pivoting; false if singular.
bool solve(std::vector<std::vector<double>> A, std::vector<double> b, std::vector<double>& d)
{
    const std::size_t n = b.size();
    for (std::size_t c = 0; c < n; ++c) {
        std::size_t piv = c;
        for (std::size_t r = c + 1; r < n; ++r)
            if (std::abs(A[r][c]) > std::abs(A[piv][c]))
                piv = r;
        if (!(std::abs(A[piv][c]) > 1e-300))
            return false;
        std::swap(A[c], A[piv]);
        std::swap(b[c], b[piv]);
        for (std::size_t r = c + 1; r < n; ++r) {
            const double f = A[r][c] / A[c][c];
            for (std::size_t k = c; k < n; ++k)
                A[r][k] -= f * A[c][k];
            b[r] -= f * b[c];
        }
    }
    d.assign(n, 0);
    for (std::size_t c = n; c-- > 0;) {
        double s = b[c];
        for (std::size_t k = c + 1; k < n; ++k)
            s -= A[c][k] * d[k];
        d[c] = s / A[c][c];
    }
    return true;
}

int LogFit::levenbergMarquardt(std::vector<double>& u, const std::vector<bool>& free, int maxIt,
                               bool* converged) const
{
    double lambda = 1e-3;
    auto r = m_pb.residuals(toX(u), false);
    double cost = huberCost(r, m_delta);
    *converged = false;
    int it = 0;
    for (; it < maxIt; ++it) {
        const auto J = jacobian(u, r, free);
        // IRLS weights of the Huber loss: 1 inside delta, delta/|r| outside.
        std::vector<double> w(r.size());
        for (std::size_t i = 0; i < r.size(); ++i)
            w[i] = std::abs(r[i]) <= m_delta ? 1.0 : m_delta / std::abs(r[i]);
        // The active set: free parameters not pressed against a bound by the gradient.
        std::vector<std::size_t> act;
        std::vector<double> g;
        for (std::size_t j = 0; j < u.size(); ++j) {
            if (!free[j])
                continue;
            double gj = 0;
            for (std::size_t i = 0; i < r.size(); ++i)
                gj += J[j][i] * w[i] * r[i];
            if ((u[j] <= 0 && gj > 0) || (u[j] >= 1 && gj < 0))
                continue;
            act.push_back(j);
            g.push_back(gj);
        }
        if (act.empty()) {
            *converged = true;
            break;
        }
        std::vector<std::vector<double>> A(act.size(), std::vector<double>(act.size()));
        for (std::size_t a = 0; a < act.size(); ++a)
            for (std::size_t b = 0; b < act.size(); ++b)
                for (std::size_t i = 0; i < r.size(); ++i)
                    A[a][b] += J[act[a]][i] * w[i] * J[act[b]][i];
        bool accepted = false;
        double change = 0;
        while (lambda < 1e12) {
            auto M = A;
            for (std::size_t a = 0; a < act.size(); ++a)
                M[a][a] += lambda * (A[a][a] + 1e-12);
            std::vector<double> d, neg(g.size());
            for (std::size_t a = 0; a < g.size(); ++a)
                neg[a] = -g[a];
            if (solve(M, neg, d)) {
                std::vector<double> u2 = u;
                for (std::size_t a = 0; a < act.size(); ++a)
                    u2[act[a]] = std::clamp(u[act[a]] + d[a], 0.0, 1.0);
                auto r2 = m_pb.residuals(toX(u2), false);
                const double c2 = huberCost(r2, m_delta);
                if (c2 < cost) {
                    change = cost - c2;
                    u = std::move(u2);
                    r = std::move(r2);
                    cost = c2;
                    lambda = std::max(lambda / 3, 1e-9);
                    accepted = true;
                    break;
                }
            }
            lambda *= 4;
        }
        if (!accepted || change <= 1e-12 * (1 + cost)) {
            *converged = true;
            ++it;
            break;
        }
    }
    return it;
}

FitErrors errorsOf(const FitResult& res, bool held, bool after)
{
    std::vector<double> e;
    std::vector<std::string> n;
    for (const FitRow& r : res.rows)
        if (r.holdout == held) {
            e.push_back(after ? r.error_after : r.error_before);
            n.push_back(r.name);
        }
    return summarizeErrors(e, n);
}

void checkInput(std::span<const MeasuredRun> runs, const FitOptions& opt)
{
    if (runs.empty())
        fitError("no runs given");
    if (!(opt.holdout >= 0 && opt.holdout < 1))
        fitError("the hold-out share must be in [0, 1), not " + std::to_string(opt.holdout));
    if (!(opt.huber_delta > 0))
        fitError("the Huber threshold must be positive");
}

void checkSamples(const Problem& pb, const FitResult& out, std::size_t runs)
{
    if (pb.samples.empty() && !out.failed.empty())
        fitError("none of the " + std::to_string(runs) +
                 " runs can be predicted; the first: " + out.failed.front());
    if (pb.samples.empty())
        fitError("no run has a measured time (step_seconds, tokens_per_second, tflops_per_gpu "
                 "or mfu): peak memory alone identifies no time constant");
}

// Final predictions of every row (fitted and held out) at the fitted values.
void finishRows(const Problem& pb, FitResult& out, std::span<const double> x)
{
    for (const Sample& s : pb.samples) {
        std::vector<double> r;
        pb.appendResiduals(s, pb.step(s, x), r);
        for (std::size_t i = 0; i < s.rows.size(); ++i) {
            FitRow& row = out.rows[s.rows[i]];
            row.holdout = s.holdout;
            row.error_after = std::expm1(r[i]);
            row.predicted_after = row.measured * (1 + row.error_after);
        }
    }
}

} // namespace

FitErrors summarizeErrors(std::span<const double> errors, std::span<const std::string> names)
{
    FitErrors f;
    f.rows = int(errors.size());
    if (errors.empty())
        return f;
    std::vector<double> ape;
    double sum = 0;
    for (std::size_t i = 0; i < errors.size(); ++i) {
        const double a = std::abs(errors[i]);
        ape.push_back(a);
        sum += a;
        if (i == 0 || a > std::abs(f.worst_error)) {
            f.worst_error = errors[i];
            f.worst_name = i < names.size() ? names[i] : std::string();
        }
    }
    f.mape = sum / double(ape.size());
    std::sort(ape.begin(), ape.end());
    const std::size_t m = ape.size() / 2;
    f.median_ape = ape.size() % 2 ? ape[m] : 0.5 * (ape[m - 1] + ape[m]);
    return f;
}

FitResult fitConstants(std::span<const MeasuredRun> runs, const FitOptions& opt,
                       const ModelConstants& start, const MeasuredPerformance* measured)
{
    checkInput(runs, opt);
    FitResult out;
    out.seed = opt.seed;
    Problem pb(runs, start, measured);
    makeSamples(pb, out, runs, start, measured);
    checkSamples(pb, out, runs.size());
    if (opt.holdout > 0 && pb.samples.size() < 2)
        fitError("a hold-out needs at least two predictable runs; there is " +
                 std::to_string(pb.samples.size()));
    splitHoldout(pb.samples, opt.holdout, opt.seed);
    for (Sample& s : pb.samples)
        s.step0 = pb.stepAtStart(s);
    makeParameters(pb, runs, opt, start);
    if (pb.params.empty())
        fitError("no constant chosen to fit");

    LogFit o(pb, opt.huber_delta);
    std::vector<double> u;
    for (const FitParameter& p : pb.params)
        u.push_back((p.value - p.bounds.lower) / (p.bounds.upper - p.bounds.lower));
    std::vector<bool> free(u.size());
    int identified = 0;
    for (std::size_t j = 0; j < u.size(); ++j) {
        free[j] = o.identified(u, j);
        identified += free[j] ? 1 : 0;
    }
    for (const Sample& s : pb.samples)
        out.fit_runs += s.holdout ? 0 : 1;
    out.holdout_runs = int(pb.samples.size()) - out.fit_runs;
    if (identified == 0)
        fitError("none of the chosen constants changes the prediction of any fitted run");
    if (out.fit_runs <= identified)
        fitError(std::to_string(out.fit_runs) + " fitted run" + (out.fit_runs == 1 ? "" : "s") +
                 " cannot determine " + std::to_string(identified) +
                 " constants: give more runs than constants, or fit fewer (--fit)");
    o.scan(u, free);
    out.iterations = o.levenbergMarquardt(u, free, opt.max_iterations, &out.converged);

    const std::vector<double> x = o.toX(u);
    for (std::size_t j = 0; j < u.size(); ++j) {
        FitParameter& p = pb.params[j];
        p.identified = free[j];
        p.value = free[j] ? x[j] : p.start;
        p.at_bound = free[j] && (u[j] <= 1e-9 || u[j] >= 1 - 1e-9);
    }
    std::vector<double> xv;
    for (const FitParameter& p : pb.params)
        xv.push_back(p.value);
    finishRows(pb, out, xv);
    out.parameters = pb.params;
    out.fit_before = errorsOf(out, false, false);
    out.fit_after = errorsOf(out, false, true);
    out.holdout_before = errorsOf(out, true, false);
    out.holdout_after = errorsOf(out, true, true);
    return out;
}

FittedConstants FitResult::constants() const
{
    FittedConstants c;
    for (const FitParameter& p : parameters) {
        if (!p.identified)
            continue;
        if (p.constant == FitConstant::GemmEfficiency)
            c.gemm_efficiency.push_back({p.gpu, p.value});
        else
            c.set(p.constant, p.value);
    }
    c.fit.runs = fit_runs;
    c.fit.holdout_runs = holdout_runs;
    c.fit.mape_before = fit_before.mape;
    c.fit.mape_after = fit_after.mape;
    c.fit.holdout_mape = holdout_after.rows > 0 ? holdout_after.mape : -1;
    c.fit.seed = seed;
    return c;
}

} // namespace paralens
