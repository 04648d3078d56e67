// SPDX-License-Identifier: GPL-3.0-or-later
// The configuration search against an independent brute force: every plan of a small
// problem scored one by one here, with the search space written out again as plain loops.
#include "core/error.h"
#include "core/evaluate.h"
#include "core/search.h"
#include "core/units.h"
#include "core/validate.h"
#include "test_scenarios.h"

#include <QTest>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

using namespace paralens;
using namespace paralens::testmodels;

namespace {

using Clock = std::chrono::steady_clock;

double ms(Clock::duration d)
{
    return std::chrono::duration<double, std::milli>(d).count();
}

/// A model of the given shape with a 32,000-token vocabulary; the other fields keep their
/// defaults.
ModelSpec smallModel(const char* name, int layers, std::int64_t hidden, int heads, int kv_heads,
                     std::int64_t ffn_hidden)
{
    ModelSpec m;
    m.name = name;
    m.layers = layers;
    m.hidden = hidden;
    m.heads = heads;
    m.kv_heads = kv_heads;
    m.ffn_hidden = ffn_hidden;
    m.vocab = 32000;
    return m;
}

/// A 0.5B-parameter GQA model: small enough to brute-force, big enough not to fit everywhere.
ModelSpec tinyDense()
{
    return smallModel("tiny-dense", 8, 2048, 16, 4, 5632);
}

ModelSpec tinyMoe()
{
    ModelSpec m = smallModel("tiny-moe", 4, 1024, 8, 8, 2816);
    m.moe.experts = 8;
    m.moe.top_k = 2;
    m.moe.expert_ffn_hidden = 2816;
    return m;
}

/// Both searches kept the same plans, in the same order, and the same Pareto front.
void checkSameAnswer(const SearchResult& a, const SearchResult& b)
{
    QCOMPARE(a.results.size(), b.results.size());
    for (std::size_t i = 0; i < a.results.size(); ++i)
        QCOMPARE(a.results[i].index, b.results[i].index);
    QCOMPARE(a.pareto.size(), b.pareto.size());
    for (std::size_t i = 0; i < a.pareto.size(); ++i)
        QCOMPARE(a.pareto[i].index, b.pareto[i].index);
}

/// H100 nodes with only `gib` of memory, so that many plans do not fit and pruning matters.
ClusterSpec smallH100(double gib)
{
    ClusterSpec c = h100_sxm();
    c.gpu.memory_gib = gib;
    return c;
}

SearchSpace space(const ModelSpec& m, const ClusterSpec& c, int gpus, int batch, int seq)
{
    SearchSpace sp;
    sp.base.model = m;
    sp.base.cluster = c;
    sp.base.gpus = gpus;
    sp.base.training.global_batch = batch;
    sp.base.training.seq_len = seq;
    return sp;
}

struct Scored
{
    Scenario s;
    double tps = 0, peak = 0;
};

struct Brute
{
    std::uint64_t runnable = 0, feasible = 0;
    std::vector<Scored> fitting;
};

/// Every plan, one by one: the raw cartesian product, reduced to the canonical spelling the
/// search documents (core/search.h), filtered by isRunnable() and scored by evaluate().
Brute bruteForce(const SearchSpace& sp)
{
    Brute out;
    const Scenario& b = sp.base;
    const int G = b.gpus, L = b.model.layers, B = b.training.global_batch;
    const int maxTp = sp.max_tp > 0 ? sp.max_tp : b.cluster.scale_up_domain;
    const Schedule schedules[] = {Schedule::GPipe, Schedule::OneF1B, Schedule::Interleaved1F1B,
                                  Schedule::ZBH1,  Schedule::ZBV,    Schedule::DualPipeV};
    const Recompute recomputes[] = {Recompute::None, Recompute::Selective, Recompute::Full};
    Scenario s = b;
    Estimate e;
    for (int tp = 1; tp <= std::min(G, maxTp); ++tp) {
        if (G % tp || (sp.tp && *sp.tp != tp))
            continue;
        for (int cp = 1; cp <= G / tp; ++cp) {
            if ((G / tp) % cp || (sp.cp && *sp.cp != cp))
                continue;
            for (int pp = 1; pp <= G / (tp * cp); ++pp) {
                if ((G / (tp * cp)) % pp || (sp.pp && *sp.pp != pp))
                    continue;
                const int dp = G / (tp * cp * pp);
                if (sp.dp && *sp.dp != dp)
                    continue;
                const int maxEp = b.model.isMoe() ? b.model.moe.experts : 1;
                for (int ep = 1; ep <= maxEp; ++ep) {
                    if (sp.ep && *sp.ep != ep)
                        continue;
                    for (Schedule sch : schedules)
                        for (int v = 1; v <= L; ++v) {
                            if (pp == 1 && (sch != Schedule::OneF1B || v != 1))
                                continue;
                            if (pp > 1 && sch == Schedule::Interleaved1F1B && v < 2 &&
                                sp.virtual_stages != 1)
                                continue;
                            if ((sp.schedule && *sp.schedule != sch) ||
                                (sp.virtual_stages && *sp.virtual_stages != v))
                                continue;
                            for (int zero = 0; zero <= 3; ++zero)
                                for (int sg = 0; sg <= dp; ++sg) {
                                    if ((zero == 0 && sg != 0) || (zero > 0 && sg == dp))
                                        continue;
                                    if ((sp.zero && *sp.zero != zero) ||
                                        (sp.shard_group && *sp.shard_group != sg))
                                        continue;
                                    for (int off = 0; off <= 1; ++off)
                                        for (int mb = 1; mb <= B; ++mb)
                                            for (Recompute rc : recomputes)
                                                for (int seqp = 0; seqp <= 1; ++seqp) {
                                                    if (seqp && tp == 1 && !sp.sequence_parallel)
                                                        continue;
                                                    if ((sp.micro_batch && *sp.micro_batch != mb) ||
                                                        (sp.recompute && *sp.recompute != rc) ||
                                                        (sp.sequence_parallel &&
                                                         *sp.sequence_parallel != bool(seqp)) ||
                                                        (sp.offload_optimizer &&
                                                         *sp.offload_optimizer != bool(off)))
                                                        continue;
                                                    ParallelPlan& p = s.parallel;
                                                    p = ParallelPlan{};
                                                    p.tp = tp;
                                                    p.cp = cp;
                                                    p.pp = pp;
                                                    p.dp = dp;
                                                    p.ep = ep;
                                                    p.schedule = sch;
                                                    p.virtual_stages = v;
                                                    p.zero = zero;
                                                    p.shard_group = sg;
                                                    p.offload_optimizer = off;
                                                    p.sequence_parallel = seqp;
                                                    s.training.micro_batch = mb;
                                                    s.training.recompute = rc;
                                                    if (!isRunnable(s))
                                                        continue;
                                                    ++out.runnable;
                                                    evaluate(s, e, nullptr, screeningConstants());
                                                    if (!e.fits)
                                                        continue;
                                                    ++out.feasible;
                                                    out.fitting.push_back(
                                                        {s, e.throughput.tokens_per_second,
                                                         e.peak_bytes});
                                                }
                                }
                        }
                }
            }
        }
    }
    std::sort(out.fitting.begin(), out.fitting.end(), [](const Scored& a, const Scored& c) {
        return a.tps != c.tps ? a.tps > c.tps : a.peak < c.peak;
    });
    return out;
}

/// (tokens/s, peak) of the non-dominated fitting plans, ascending memory.
std::vector<std::pair<double, double>> bruteFront(const Brute& br)
{
    std::vector<std::pair<double, double>> pts;
    for (const Scored& x : br.fitting)
        pts.emplace_back(x.peak, x.tps);
    std::sort(pts.begin(), pts.end(), [](auto a, auto b) {
        return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    std::vector<std::pair<double, double>> front;
    double best = -1;
    for (auto [peak, tps] : pts)
        if (tps > best) {
            front.emplace_back(tps, peak);
            best = tps;
        }
    return front;
}

/// `k`: the constants the plans were scored with (screening, or the full model when rescored).
void checkPlansValid(const SearchSpace& sp, const std::vector<SearchPlan>& plans,
                     const ModelConstants& k = screeningConstants())
{
    for (const SearchPlan& p : plans) {
        const Scenario s = scenarioFor(sp, p);
        const auto errors = validate(s);
        QVERIFY2(errors.empty(), errors.empty() ? "" : errors.front().message.c_str());
        Estimate e;
        evaluate(s, e, nullptr, k);
        QVERIFY(e.fits);
        QCOMPARE(e.throughput.tokens_per_second, p.tokens_per_second);
        QCOMPARE(e.peak_bytes, p.peak_bytes);
        QCOMPARE(e.time.step_seconds, p.step_seconds);
        QCOMPARE(e.throughput.mfu, p.mfu);
    }
}

void compareWithBrute(const SearchSpace& sp, const SearchResult& r, const Brute& br, int k)
{
    QCOMPARE(r.evaluated, br.runnable);
    QCOMPARE(r.feasible, br.feasible);
    QCOMPARE(r.scored + r.pruned, r.evaluated);
    QVERIFY(!br.fitting.empty());
    QCOMPARE(r.results.size(), std::min<std::size_t>(std::size_t(k), br.fitting.size()));
    // Best plan: same throughput and memory as the brute force's best (equal doubles: the
    // same evaluate() on the same plan).
    QCOMPARE(r.results.front().tokens_per_second, br.fitting.front().tps);
    QCOMPARE(r.results.front().peak_bytes, br.fitting.front().peak);
    for (std::size_t i = 0; i < r.results.size(); ++i) {
        QCOMPARE(r.results[i].tokens_per_second, br.fitting[i].tps);
        QCOMPARE(r.results[i].peak_bytes, br.fitting[i].peak);
    }
    const auto front = bruteFront(br);
    QCOMPARE(r.pareto.size(), front.size());
    for (std::size_t i = 0; i < front.size(); ++i) {
        QCOMPARE(r.pareto[i].tokens_per_second, front[i].first);
        QCOMPARE(r.pareto[i].peak_bytes, front[i].second);
    }
    checkPlansValid(sp, r.results);
    checkPlansValid(sp, r.pareto);
}

} // namespace

class TestSearch : public QObject
{
    Q_OBJECT
private slots:
    void denseMatchesBruteForce();
    void moeMatchesBruteForce();
    void pruningKeepsTheAnswer();
    void pruningKeepsTheAnswerWithSmallerDtypes();
    void threadCountDoesNotChangeTheAnswer();
    void pinnedDimensionsRespected();
    void paretoFrontNonDominated();
    void topKSortedBestFirst();
    void progressReported();
    void sampleOfFittingPlans();
    void cancelFromCallbackWithin100ms();
    void cancelFromFlagWithin100ms();
    void badProblemNamesField();
    void impossiblePinGivesNoPlans();
    void rescoredPlansEqualEval();
    void oversizedSpaceIsRefused();
};

void TestSearch::oversizedSpaceIsRefused()
{
    const SearchSpace sp = space(tinyDense(), smallH100(6), 16, 32, 2048);
    SearchOptions opt;
    opt.max_plans = 100; // the tiny space has thousands
    try {
        search(sp, opt);
        QFAIL("a space above max_plans must be refused");
    } catch (const InputError& e) {
        QCOMPARE(e.field(), std::string("gpus"));
        QVERIFY(std::string(e.what()).find("more than the limit of 100") != std::string::npos);
    }
}

// With rescoring on (the default), every returned figure is the full evaluate()'s, the
// simulator included, and the lists keep their order and front properties.
void TestSearch::rescoredPlansEqualEval()
{
    const SearchSpace sp = space(tinyDense(), smallH100(6), 16, 32, 2048);
    SearchOptions opt;
    opt.top_k = 25;
    opt.sample = 50;
    const SearchResult r = search(sp, opt);
    QVERIFY(!r.results.empty());
    for (const auto* list : {&r.results, &r.pareto, &r.sample})
        for (const SearchPlan& p : *list) {
            const Estimate e = evaluate(scenarioFor(sp, p));
            QVERIFY(e.fits);
            QCOMPARE(e.throughput.tokens_per_second, p.tokens_per_second);
            QCOMPARE(e.peak_bytes, p.peak_bytes);
            QCOMPARE(e.time.step_seconds, p.step_seconds);
        }
    for (std::size_t i = 1; i < r.results.size(); ++i)
        QVERIFY(!rankedBefore(r.results[i], r.results[i - 1]));
    // The front's fastest member leads the top K, and no front member is faster.
    for (const SearchPlan& p : r.pareto)
        QVERIFY(p.tokens_per_second <= r.results.front().tokens_per_second);
    QCOMPARE(r.pareto.back().tokens_per_second, r.results.front().tokens_per_second);
    for (const SearchPlan& a : r.pareto)
        for (const SearchPlan& b : r.pareto)
            QVERIFY(&a == &b || !dominates(a, b));
}

void TestSearch::denseMatchesBruteForce()
{
    const SearchSpace sp = space(tinyDense(), smallH100(6), 16, 32, 2048);
    SearchOptions opt;
    opt.rescore = false; // compared with the screening brute force
    opt.top_k = 25;
    const SearchResult r = search(sp, opt);
    qInfo("dense: %llu plans, %llu pruned, %llu fit", (unsigned long long)r.evaluated,
          (unsigned long long)r.pruned, (unsigned long long)r.feasible);
    QVERIFY(r.pruned > 0); // the small GPUs make some plans hopeless from their weights alone
    QVERIFY(r.feasible < r.evaluated);
    compareWithBrute(sp, r, bruteForce(sp), opt.top_k);
}

void TestSearch::moeMatchesBruteForce()
{
    const SearchSpace sp = space(tinyMoe(), smallH100(4), 16, 16, 1024);
    SearchOptions opt;
    opt.rescore = false; // compared with the screening brute force
    opt.top_k = 15;
    const SearchResult r = search(sp, opt);
    bool expertParallel = false;
    for (const SearchPlan& p : r.pareto)
        expertParallel = expertParallel || p.parallel.ep > 1;
    for (const SearchPlan& p : r.results)
        expertParallel = expertParallel || p.parallel.ep > 1;
    const Brute br = bruteForce(sp);
    compareWithBrute(sp, r, br, opt.top_k);
    std::uint64_t withEp = 0;
    for (const Scored& x : br.fitting)
        withEp += x.s.parallel.ep > 1;
    QVERIFY(withEp > 0); // EP is really part of the space
}

void TestSearch::pruningKeepsTheAnswer()
{
    const SearchSpace sp = space(tinyDense(), smallH100(5), 16, 32, 2048);
    SearchOptions on, off;
    on.rescore = off.rescore = false;
    on.top_k = off.top_k = 40;
    off.prune = false;
    const SearchResult a = search(sp, on), b = search(sp, off);
    QVERIFY(a.pruned > 0);
    QCOMPARE(b.pruned, std::uint64_t(0));
    QCOMPARE(b.scored, b.evaluated);
    QCOMPARE(a.evaluated, b.evaluated);
    QCOMPARE(a.feasible, b.feasible);
    checkSameAnswer(a, b);
}

// The states' bound must count a plan's own dtypes, or it prunes plans that fit: per-tensor
// FP8 parameters on Blackwell (1 byte per linear weight, fewer than bf16 weights) and
// gradients reduced in bf16 (2 bytes, fewer than Megatron's fp32 main grads).
void TestSearch::pruningKeepsTheAnswerWithSmallerDtypes()
{
    std::uint64_t pruned = 0;
    for (int setting = 0; setting < 2; ++setting) {
        // Capacities from where nothing fits to where everything does, 0.1 GiB apart.
        for (double gib = 2; gib <= 8; gib += 0.1) {
            ClusterSpec c = setting == 0 ? gb200_nvl72() : h100_sxm();
            c.gpu.memory_gib = gib;
            SearchSpace sp = space(tinyDense(), c, 16, 32, 2048);
            if (setting == 0) {
                sp.base.training.precision = Precision::FP8;
                sp.base.training.fp8_recipe = Fp8Recipe::Tensorwise;
                sp.base.training.fp8_param_gather = true;
            } else {
                sp.base.training.grad_reduce_dtype = GradReduceDtype::Bf16;
            }
            SearchOptions on, off;
            on.rescore = off.rescore = false;
            on.top_k = off.top_k = 40;
            off.prune = false;
            const SearchResult a = search(sp, on), b = search(sp, off);
            pruned += a.pruned;
            QCOMPARE(a.feasible, b.feasible);
            checkSameAnswer(a, b);
        }
    }
    QVERIFY(pruned > 0);
}

void TestSearch::threadCountDoesNotChangeTheAnswer()
{
    const SearchSpace sp = space(tinyDense(), smallH100(8), 16, 32, 2048);
    SearchOptions one, four;
    one.rescore = four.rescore = false;
    one.threads = 1;
    four.threads = 4;
    one.top_k = four.top_k = 30;
    const SearchResult a = search(sp, one), b = search(sp, four);
    QCOMPARE(a.threads, 1u);
    QCOMPARE(b.threads, 4u);
    QCOMPARE(a.evaluated, b.evaluated);
    checkSameAnswer(a, b);
}

void TestSearch::pinnedDimensionsRespected()
{
    SearchSpace sp = space(tinyDense(), smallH100(16), 16, 32, 2048);
    sp.tp = 2;
    sp.pp = 2;
    sp.schedule = Schedule::Interleaved1F1B;
    sp.recompute = Recompute::Full;
    sp.zero = 1;
    sp.sequence_parallel = true;
    SearchOptions opt;
    opt.rescore = false; // compared with the screening brute force
    opt.top_k = 50;
    const SearchResult r = search(sp, opt);
    QVERIFY(!r.results.empty());
    for (const auto* list : {&r.results, &r.pareto})
        for (const SearchPlan& p : *list) {
            QCOMPARE(p.parallel.tp, 2);
            QCOMPARE(p.parallel.pp, 2);
            QVERIFY(p.parallel.schedule == Schedule::Interleaved1F1B);
            QVERIFY(p.parallel.virtual_stages >= 2);
            QVERIFY(p.training.recompute == Recompute::Full);
            QCOMPARE(p.parallel.zero, 1);
            QVERIFY(p.parallel.sequence_parallel);
        }
    // The pinned space is exactly the brute force restricted to the pins.
    compareWithBrute(sp, r, bruteForce(sp), opt.top_k);

    SearchSpace mb = space(tinyDense(), smallH100(16), 16, 32, 2048);
    mb.micro_batch = 2;
    mb.cp = 2;
    const SearchResult rm = search(mb);
    QVERIFY(!rm.results.empty());
    for (const SearchPlan& p : rm.results) {
        QCOMPARE(p.training.micro_batch, 2);
        QCOMPARE(p.parallel.cp, 2);
    }
}

void TestSearch::paretoFrontNonDominated()
{
    const SearchSpace sp = space(tinyDense(), smallH100(6), 16, 32, 2048);
    const SearchResult r = search(sp);
    QVERIFY(r.pareto.size() >= 2);
    const double capacity = sp.base.cluster.gpu.memory_gib * units::kGiB;
    for (std::size_t i = 0; i < r.pareto.size(); ++i) {
        QVERIFY(r.pareto[i].peak_bytes <= capacity);
        if (i > 0) {
            QVERIFY(r.pareto[i].peak_bytes > r.pareto[i - 1].peak_bytes);
            QVERIFY(r.pareto[i].tokens_per_second > r.pareto[i - 1].tokens_per_second);
        }
        for (std::size_t j = 0; j < r.pareto.size(); ++j)
            if (i != j)
                QVERIFY(!(r.pareto[j].tokens_per_second >= r.pareto[i].tokens_per_second &&
                          r.pareto[j].peak_bytes <= r.pareto[i].peak_bytes));
    }
    // The fastest plan is on the front (nothing is faster), as its last member.
    QCOMPARE(r.pareto.back().tokens_per_second, r.results.front().tokens_per_second);
    checkPlansValid(sp, r.pareto, ModelConstants{}); // rescored with the full model
}

void TestSearch::topKSortedBestFirst()
{
    const SearchSpace sp = space(tinyDense(), smallH100(12), 16, 32, 2048);
    SearchOptions opt;
    opt.rescore = false; // compared with the screening brute force
    opt.top_k = 7;
    const SearchResult r = search(sp, opt);
    QCOMPARE(r.results.size(), std::size_t(7));
    for (std::size_t i = 1; i < r.results.size(); ++i)
        QVERIFY(rankedBefore(r.results[i - 1], r.results[i]));
    opt.top_k = 0;
    QVERIFY(search(sp, opt).results.empty());
}

void TestSearch::progressReported()
{
    const SearchSpace sp = space(tinyDense(), smallH100(8), 16, 32, 2048);
    SearchOptions opt;
    opt.rescore = false; // compared with the screening brute force
    opt.progress_interval_seconds = 0.001;
    std::vector<double> fractions;
    std::uint64_t lastEvaluated = 0;
    opt.progress = [&](double f, std::uint64_t n) {
        fractions.push_back(f);
        lastEvaluated = n;
        return true;
    };
    const SearchResult r = search(sp, opt);
    QVERIFY(!fractions.empty());
    QCOMPARE(fractions.back(), 1.0);
    QCOMPARE(lastEvaluated, r.evaluated);
    QVERIFY(std::is_sorted(fractions.begin(), fractions.end()));
    QVERIFY(!r.cancelled);
}

void TestSearch::sampleOfFittingPlans()
{
    const SearchSpace sp = space(tinyDense(), smallH100(6), 16, 32, 2048);
    SearchOptions opt;
    opt.rescore = false; // compared with the screening brute force
    opt.sample = 500;
    const SearchResult r = search(sp, opt);
    QVERIFY(r.feasible > 5000);
    // About the requested size (rounding per worker), every member a fitting, valid plan.
    QVERIFY(r.sample.size() >= 495 && r.sample.size() <= 505);
    checkPlansValid(sp, r.sample);
    // Not just the best plans: the sample spans a wide range of throughput.
    double lo = 1e300, hi = 0;
    for (const SearchPlan& p : r.sample) {
        lo = std::min(lo, p.tokens_per_second);
        hi = std::max(hi, p.tokens_per_second);
    }
    QVERIFY(hi > 2 * lo);
    // A sample larger than the fitting plans holds them all.
    opt.sample = 1000000;
    QCOMPARE(std::uint64_t(search(sp, opt).sample.size()), r.feasible);
    opt.sample = 0;
    QVERIFY(search(sp, opt).sample.empty());
}

// A big problem (GPT-3 175B on 1024 A100, seconds of work): cancel as soon as the first
// progress report arrives and time from the request to search() returning.
void TestSearch::cancelFromCallbackWithin100ms()
{
    SearchSpace sp = space(gpt3_175b(), a100_80gb(), 1024, 1536, 2048);
    SearchOptions opt;
    opt.rescore = false; // compared with the screening brute force
    opt.threads = 2;     // about a second of work even on a many-core machine
    opt.progress_interval_seconds = 0.005;
    Clock::time_point requested{};
    int calls = 0;
    opt.progress = [&](double, std::uint64_t) {
        ++calls;
        requested = Clock::now();
        return false;
    };
    const SearchResult r = search(sp, opt);
    const double stopMs = ms(Clock::now() - requested);
    qInfo("cancel from the callback: stopped %.2f ms after the request", stopMs);
    QCOMPARE(calls, 1);
    QVERIFY(r.cancelled);
    QVERIFY2(stopMs < 100, qPrintable(QString("stopped %1 ms after the request").arg(stopMs)));
    QVERIFY(r.evaluated < 4000000);
}

void TestSearch::cancelFromFlagWithin100ms()
{
    SearchSpace sp = space(gpt3_175b(), a100_80gb(), 1024, 1536, 2048);
    std::atomic<bool> cancel{false};
    SearchOptions opt;
    opt.rescore = false; // compared with the screening brute force
    opt.cancel = &cancel;
    opt.threads = 2; // about a second of work even on a many-core machine
    Clock::time_point requested{};
    std::jthread canceller([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        requested = Clock::now();
        cancel = true;
    });
    const SearchResult r = search(sp, opt);
    const auto returned = Clock::now();
    canceller.join();
    const double stopMs = ms(returned - requested);
    qInfo("cancel from the flag: stopped %.2f ms after the request", stopMs);
    QVERIFY(r.cancelled);
    QVERIFY2(stopMs < 100, qPrintable(QString("stopped %1 ms after the request").arg(stopMs)));
}

void TestSearch::badProblemNamesField()
{
    SearchSpace sp = space(tinyDense(), smallH100(8), 0, 32, 2048);
    try {
        search(sp);
        QFAIL("gpus = 0 accepted");
    } catch (const InputError& e) {
        QCOMPARE(QString::fromStdString(e.field()), QString("gpus"));
    }
    sp.base.gpus = 12; // not whole nodes of 8
    try {
        search(sp);
        QFAIL("12 GPUs on 8-GPU nodes accepted");
    } catch (const InputError& e) {
        QCOMPARE(QString::fromStdString(e.field()), QString("gpus"));
    }
}

void TestSearch::impossiblePinGivesNoPlans()
{
    SearchSpace sp = space(tinyDense(), smallH100(8), 16, 32, 2048);
    sp.tp = 3; // does not divide 16 heads nor 16 GPUs
    const SearchResult r = search(sp);
    QCOMPARE(r.evaluated, std::uint64_t(0));
    QVERIFY(r.results.empty());
    QVERIFY(r.pareto.empty());
}

QTEST_APPLESS_MAIN(TestSearch)
#include "test_search.moc"
