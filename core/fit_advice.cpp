// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/fit_advice.h"
#include "core/evaluate.h"
#include "core/plan_options.h"
#include "core/scenario_io.h"
#include "core/validate.h"

#include <algorithm>
#include <numeric>

namespace paralens {
namespace {

std::vector<MemoryShare> termsOf(const StageMemory& st)
{
    const double total = st.total();
    std::vector<MemoryShare> t{{MemoryTerm::Parameters, st.parameters, 0},
                               {MemoryTerm::Gradients, st.gradients, 0},
                               {MemoryTerm::OptimizerStates, st.optimizer_states, 0},
                               {MemoryTerm::Activations, st.activations, 0},
                               {MemoryTerm::CommBuffers, st.comm_buffers, 0},
                               {MemoryTerm::RuntimeOverhead, st.runtime_overhead, 0}};
    for (MemoryShare& m : t)
        m.share = total > 0 ? m.bytes / total : 0;
    std::stable_sort(t.begin(), t.end(),
                     [](const MemoryShare& a, const MemoryShare& b) { return a.bytes > b.bytes; });
    return t;
}

int currentValue(const Scenario& s, PlanSetting k)
{
    switch (k) {
    case PlanSetting::Zero:
        return s.parallel.zero;
    case PlanSetting::Recompute:
        return s.training.recomputedPerChunk() > 0 ? kRecomputeSomeLayers
                                                   : int(s.training.recompute);
    case PlanSetting::MicroBatch:
        return s.training.micro_batch;
    case PlanSetting::Offload:
        return s.parallel.offload_optimizer ? 1 : 0;
    case PlanSetting::TP:
        return s.parallel.tp;
    case PlanSetting::PP:
        return s.parallel.pp;
    case PlanSetting::CP:
        return s.parallel.cp;
    }
    return 0;
}

void addMoves(std::vector<PlanChange>& out, const Scenario& s, PlanSetting k,
              const std::vector<int>& values)
{
    const int from = currentValue(s, k);
    for (int v : values)
        if (v != from)
            out.push_back({k, from, v});
}

/// Every single-setting move worth trying: all ZeRO stages and recompute modes, the smaller
/// micro-batches (activations shrink with b), offload on, and each TP / PP / CP degree the
/// model allows on this GPU count (independent of the other two, so pairs of them combine).
std::vector<PlanChange> singleMoves(const Scenario& s)
{
    const ParallelPlan& p = s.parallel;
    std::vector<PlanChange> m;
    addMoves(m, s, PlanSetting::Zero, {0, 1, 2, 3});
    addMoves(m, s, PlanSetting::Recompute,
             {int(Recompute::None), int(Recompute::Selective), int(Recompute::Full)});
    std::vector<int> smaller;
    for (int b = 1; b < s.training.micro_batch; ++b)
        if (s.training.micro_batch % b == 0)
            smaller.push_back(b);
    addMoves(m, s, PlanSetting::MicroBatch, smaller);
    if (!p.offload_optimizer)
        m.push_back({PlanSetting::Offload, 0, 1});
    const std::int64_t perCp = gpusLeft(s.gpus, p.cp);
    addMoves(m, s, PlanSetting::TP,
             tpDegrees(s.model, perCp, std::max(s.cluster.scale_up_domain, p.tp)));
    addMoves(m, s, PlanSetting::PP, ppDegrees(s.model.layers, perCp, 1));
    addMoves(m, s, PlanSetting::CP, cpDegrees(s.training.seq_len, gpusLeft(s.gpus, p.tp)));
    return m;
}

void setValue(Scenario& s, const PlanChange& c)
{
    ParallelPlan& p = s.parallel;
    switch (c.setting) {
    case PlanSetting::Zero:
        p.zero = c.to;
        break;
    case PlanSetting::Recompute:
        s.training.recompute = Recompute(c.to);
        s.training.recompute_num_layers = 0; // the move is to the mode over every layer
        break;
    case PlanSetting::MicroBatch:
        s.training.micro_batch = c.to;
        break;
    case PlanSetting::Offload:
        p.offload_optimizer = c.to != 0;
        break;
    case PlanSetting::TP:
        p.tp = c.to;
        p.sequence_parallel = c.to > 1; // Megatron's recommended pairing; saves activations
        break;
    case PlanSetting::PP:
        p.pp = c.to;
        break;
    case PlanSetting::CP:
        p.cp = c.to;
        break;
    }
}

int largestDivisorAtMost(int n, int limit)
{
    for (int d = std::min(n, limit); d > 1; --d)
        if (n % d == 0)
            return d;
    return 1;
}

/// Makes the other settings agree with the changed ones: DP from the GPU count, a shard group
/// and EP that divide the new groups, a micro-batch that divides the new batch share, 1F1B
/// when the schedule cannot run on the new pipeline. False when no such plan runs.
bool rebalance(Scenario& s, bool microBatchChosen)
{
    ParallelPlan& p = s.parallel;
    const std::int64_t dp = gpusLeft(s.gpus, std::int64_t(p.tp) * p.pp * p.cp);
    if (dp < 1)
        return false;
    p.dp = int(dp);
    if (p.shard_group > 0 && (p.shard_group >= p.dp || p.dp % p.shard_group != 0))
        p.shard_group = 0;
    if (p.ep > 1) {
        const std::int64_t ranks = expertRanks(p.tp, p.cp, p.dp, p.expert_tp);
        const std::vector<int> eps = epDegrees(s.model, ranks);
        int best = 1;
        for (int e : eps)
            if (e <= p.ep)
                best = e;
        p.ep = best;
    }
    TrainingSettings& t = s.training;
    if (t.global_batch % p.dp != 0)
        return false;
    if (t.global_batch % (t.micro_batch * p.dp) != 0) {
        if (microBatchChosen)
            return false;
        t.micro_batch = largestDivisorAtMost(t.global_batch / p.dp, t.micro_batch);
    }
    if (p.pp == 1 && usesChunks(p.schedule))
        p = withSchedule(p, Schedule::OneF1B);
    if (isRunnable(s))
        return true;
    if (p.schedule == Schedule::OneF1B)
        return false;
    p = withSchedule(p, Schedule::OneF1B); // e.g. interleaving whose v no longer divides
    return isRunnable(s);
}

struct Candidate
{
    Scenario scenario;
    std::vector<PlanChange> changes;
    double screened_tps = 0;
};

/// The plan with `changes` applied and rebalanced, screened; false when it does not run or fit.
bool tryPlan(const Scenario& base, std::vector<PlanChange> changes, const ModelConstants& k,
             const MeasuredPerformance* measured, Estimate& est, std::vector<Candidate>& out,
             int& tried)
{
    Scenario s = base;
    bool mb = false;
    for (const PlanChange& c : changes) {
        setValue(s, c);
        mb = mb || c.setting == PlanSetting::MicroBatch;
    }
    if (!rebalance(s, mb))
        return false;
    ++tried;
    evaluate(s, est, measured, k);
    if (!est.fits)
        return false;
    for (const Candidate& c : out) // two routes to one plan: keep the first (fewer changes)
        if (c.scenario.parallel == s.parallel && c.scenario.training == s.training)
            return false;
    out.push_back({std::move(s), std::move(changes), est.throughput.tokens_per_second});
    return true;
}

std::vector<Candidate> screenCandidates(const Scenario& s, const FitAdviceOptions& o, int& tried)
{
    const std::vector<PlanChange> singles = singleMoves(s);
    const ModelConstants k = screeningConstants();
    Estimate est;
    std::vector<Candidate> out;
    for (const PlanChange& c : singles)
        tryPlan(s, {c}, k, o.measured, est, out, tried);
    for (std::size_t i = 0; i < singles.size(); ++i)
        for (std::size_t j = i + 1; j < singles.size(); ++j)
            if (singles[i].setting != singles[j].setting)
                tryPlan(s, {singles[i], singles[j]}, k, o.measured, est, out, tried);
    return out;
}

bool fasterFirst(const FitSuggestion& a, const FitSuggestion& b)
{
    if (a.tokens_per_second != b.tokens_per_second)
        return a.tokens_per_second > b.tokens_per_second;
    return a.changes.size() < b.changes.size();
}

FitSuggestion suggestionFor(const Scenario& from, const Candidate& c, const Estimate& e)
{
    FitSuggestion f;
    f.scenario = c.scenario;
    f.changes = c.changes;
    for (const PlanChange& ch : c.changes)
        f.summary += (f.summary.empty() ? "" : ", ") + describe(ch);
    const std::string also = consequences(from, c.scenario, c.changes);
    if (!also.empty())
        f.summary += " (" + also + ")";
    f.tokens_per_second = e.throughput.tokens_per_second;
    f.peak_bytes = e.peak_bytes;
    f.step_seconds = e.time.step_seconds;
    f.mfu = e.throughput.mfu;
    return f;
}

/// The settings a suggestion changes, as a bit set.
unsigned kindOf(const FitSuggestion& f)
{
    unsigned k = 0;
    for (const PlanChange& c : f.changes)
        k |= 1u << unsigned(c.setting);
    return k;
}

/// At most kPerKind suggestions changing the same settings (the fastest of them), so that the
/// list offers different ways out rather than eight CP degrees of one.
std::vector<FitSuggestion> varied(std::vector<FitSuggestion> sorted)
{
    constexpr int kPerKind = 2;
    std::vector<FitSuggestion> out;
    std::vector<std::pair<unsigned, int>> seen;
    for (FitSuggestion& f : sorted) {
        const unsigned k = kindOf(f);
        auto it =
            std::find_if(seen.begin(), seen.end(), [k](const auto& e) { return e.first == k; });
        if (it == seen.end())
            it = seen.insert(seen.end(), {k, 0});
        if (it->second++ < kPerKind)
            out.push_back(std::move(f));
    }
    return out;
}

/// Full evaluate() of the fastest screened candidates (and the fastest single change), keeping
/// those that still fit and validate; fastest first, at most max_suggestions.
std::vector<FitSuggestion> rescore(const Scenario& from, std::vector<Candidate> cands,
                                   const FitAdviceOptions& o)
{
    std::stable_sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
        return a.screened_tps > b.screened_tps;
    });
    const std::size_t keep = std::size_t(std::max(1, o.max_suggestions)) * 4;
    std::vector<FitSuggestion> out;
    std::optional<FitSuggestion> bestSingle;
    Estimate est;
    for (std::size_t i = 0; i < cands.size(); ++i) {
        const bool single = cands[i].changes.size() == 1;
        if (i >= keep && (!single || bestSingle))
            continue;
        evaluate(cands[i].scenario, est, o.measured);
        if (!est.fits || !validate(cands[i].scenario).empty())
            continue;
        FitSuggestion f = suggestionFor(from, cands[i], est);
        if (single && (!bestSingle || fasterFirst(f, *bestSingle)))
            bestSingle = f;
        if (i < keep)
            out.push_back(std::move(f));
    }
    std::stable_sort(out.begin(), out.end(), fasterFirst);
    out = varied(std::move(out));
    const std::size_t max = std::size_t(std::max(1, o.max_suggestions));
    if (out.size() > max)
        out.resize(max);
    const auto isSingle = [](const FitSuggestion& f) { return f.changes.size() == 1; };
    if (bestSingle && std::none_of(out.begin(), out.end(), isSingle)) {
        if (out.size() == max)
            out.pop_back();
        out.push_back(*bestSingle); // slower than the rest, so it sorts last
    }
    return out;
}

std::string onOff(int v)
{
    return v ? "on" : "off";
}

} // namespace

std::string_view toString(MemoryTerm t)
{
    switch (t) {
    case MemoryTerm::Parameters:
        return "parameters";
    case MemoryTerm::Gradients:
        return "gradients";
    case MemoryTerm::OptimizerStates:
        return "optimizer states";
    case MemoryTerm::Activations:
        return "activations";
    case MemoryTerm::CommBuffers:
        return "communication buffers";
    case MemoryTerm::RuntimeOverhead:
        return "runtime overhead";
    }
    return "";
}

std::string describe(const PlanChange& c)
{
    const std::string arrow = std::to_string(c.from) + " → " + std::to_string(c.to);
    switch (c.setting) {
    case PlanSetting::Zero:
        return "ZeRO " + arrow;
    case PlanSetting::Recompute: {
        auto name = [](int v) {
            return v == kRecomputeSomeLayers ? std::string("full (some layers)")
                                             : std::string(toString(Recompute(v)));
        };
        return "recompute " + name(c.from) + " → " + name(c.to);
    }
    case PlanSetting::MicroBatch:
        return "micro-batch " + arrow;
    case PlanSetting::Offload:
        return "optimizer offload " + onOff(c.to);
    case PlanSetting::TP:
        return "TP " + arrow;
    case PlanSetting::PP:
        return "PP " + arrow;
    case PlanSetting::CP:
        return "CP " + arrow;
    }
    return "";
}

std::string consequences(const Scenario& from, const Scenario& to,
                         const std::vector<PlanChange>& changes)
{
    const auto chosen = [&](PlanSetting k) {
        return std::any_of(changes.begin(), changes.end(),
                           [k](const PlanChange& c) { return c.setting == k; });
    };
    const ParallelPlan& a = from.parallel;
    const ParallelPlan& b = to.parallel;
    std::vector<std::string> parts;
    const auto arrow = [](int x, int y) { return std::to_string(x) + " → " + std::to_string(y); };
    if (a.dp != b.dp)
        parts.push_back("DP " + arrow(a.dp, b.dp));
    if (!chosen(PlanSetting::MicroBatch) && from.training.micro_batch != to.training.micro_batch)
        parts.push_back("micro-batch " + arrow(from.training.micro_batch, to.training.micro_batch));
    if (a.sequence_parallel != b.sequence_parallel)
        parts.push_back("SP " + onOff(b.sequence_parallel));
    if (a.schedule != b.schedule)
        parts.push_back("schedule " + std::string(toString(b.schedule)));
    if (a.ep != b.ep)
        parts.push_back("EP " + arrow(a.ep, b.ep));
    if (a.shard_group != b.shard_group)
        parts.push_back("shard group whole DP");
    std::string out;
    for (const std::string& p : parts)
        out += (out.empty() ? "" : ", ") + p;
    return out;
}

FitAdvice adviseFit(const Scenario& s, const FitAdviceOptions& options)
{
    FitAdvice a;
    if (!isRunnable(s))
        return a;
    a.runnable = true;
    Estimate est;
    evaluate(s, est, options.measured);
    a.fits = est.fits;
    a.capacity_bytes = est.capacity_bytes;
    a.peak_bytes = est.peak_bytes;
    a.worst_stage = est.peak_stage;
    for (const StageMemory& st : est.stages)
        if (st.stage == est.peak_stage)
            a.terms = termsOf(st);
    if (a.fits)
        return a;
    a.suggestions = rescore(s, screenCandidates(s, options, a.candidates), options);
    return a;
}

} // namespace paralens
