// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/search.h"
#include "core/error.h"
#include "core/evaluate.h"
#include "core/framework.h"
#include "core/gpu_family.h"
#include "core/kernel_time.h"
#include "core/memory.h"
#include "core/params.h"
#include "core/plan_options.h"
#include "core/units.h"
#include "core/validate.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace paralens {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<int> divisorsOf(int n)
{
    std::vector<int> d;
    for (int i = 1; i <= n; ++i)
        if (n % i == 0)
            d.push_back(i);
    return d;
}

template <typename T> bool allowed(const std::optional<T>& pin, T value)
{
    return !pin || *pin == value;
}

/// The outer part of a plan: everything that fixes the layer split and the stage parameters.
/// Workers take one item at a time and loop over the inner dimensions.
struct Item
{
    int tp, cp, pp, dp, ep, v;
    Schedule schedule;
    std::uint64_t first_index; ///< enumeration index of the item's first inner plan
    std::uint32_t inner;       ///< index into the Inner lists (one per tp, cp, pp)
};

/// The inner dimensions of one item, decided by dp, tp and the pins.
struct Inner
{
    std::vector<std::pair<int, int>> zero_groups; ///< (zero stage, shard group)
    std::vector<char> offload;
    std::vector<int> micro_batches;
    std::vector<Recompute> recompute;
    std::vector<char> sp;
    std::uint64_t count() const
    {
        return std::uint64_t(zero_groups.size()) * offload.size() * micro_batches.size() *
               recompute.size() * sp.size();
    }
};

Inner innerFor(const SearchSpace& sp, int tp, int dp)
{
    Inner in;
    const int B = sp.base.training.global_batch;
    for (int z = 0; z <= 3; ++z) {
        if (!allowed(sp.zero, z))
            continue;
        if (z == 0) {
            // The shard group means nothing without sharding: one spelling (0), and none when a
            // shard group is pinned (the user asked for sharded plans).
            if (!sp.shard_group || *sp.shard_group == 0)
                in.zero_groups.emplace_back(0, 0);
            continue;
        }
        if (sp.shard_group) {
            in.zero_groups.emplace_back(z, *sp.shard_group);
            continue;
        }
        in.zero_groups.emplace_back(z, 0); // the whole DP group
        for (int g : divisorsOf(dp))
            if (g < dp)
                in.zero_groups.emplace_back(z, g); // hybrid sharding
    }
    for (char o : {char(0), char(1)})
        if (allowed(sp.offload_optimizer, bool(o)))
            in.offload.push_back(o);
    if (B % dp == 0)
        for (int b : divisorsOf(B / dp))
            if (allowed(sp.micro_batch, b))
                in.micro_batches.push_back(b);
    for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full})
        if (allowed(sp.recompute, r))
            in.recompute.push_back(r);
    if (sp.sequence_parallel)
        in.sp.push_back(char(*sp.sequence_parallel));
    else {
        in.sp.push_back(0);
        if (tp > 1)
            in.sp.push_back(1);
    }
    return in;
}

/// (schedule, virtual stages) pairs for a pipeline depth, canonical and pinned.
std::vector<std::pair<Schedule, int>> schedulesFor(const SearchSpace& sp, int pp)
{
    std::vector<std::pair<Schedule, int>> out;
    if (pp == 1) {
        // No pipeline: the schedule only names the micro-batch order; 1f1b is the canonical one.
        out.emplace_back(sp.schedule.value_or(Schedule::OneF1B), sp.virtual_stages.value_or(1));
        return out;
    }
    const int layers = sp.base.model.layers;
    for (Schedule s : kAllSchedules) {
        if (!allowed(sp.schedule, s))
            continue;
        // max_virtual_stages caps the interleaved v tried, unless the plan is pinned to one.
        const bool pinned = sp.schedule == Schedule::Interleaved1F1B && sp.virtual_stages;
        std::vector<int> vs =
            virtualStageDegrees(s, pp, layers, pinned ? 0 : sp.max_virtual_stages);
        // v = 1 is plain 1f1b; interleaved takes it only when both the schedule and v = 1 are
        // pinned.
        if (pinned && *sp.virtual_stages == 1)
            vs.insert(vs.begin(), 1);
        for (int v : vs)
            if (allowed(sp.virtual_stages, v))
                out.emplace_back(s, v);
    }
    return out;
}

bool listed(const std::vector<int>& values, int v)
{
    return std::find(values.begin(), values.end(), v) != values.end();
}

std::vector<Item> enumerateItems(const SearchSpace& sp, std::vector<Inner>& inners,
                                 std::uint64_t& total)
{
    const Scenario& b = sp.base;
    const ModelSpec& m = b.model;
    const int gpus = b.gpus;
    // A pinned TP is tried even above the limit.
    const std::int64_t maxTp =
        sp.tp ? gpus : (sp.max_tp > 0 ? sp.max_tp : b.cluster.scale_up_domain);
    // Micro-batches are searched inside: DP needs only to divide the global batch.
    const std::vector<int> dps = dpDegrees(b.training.global_batch, 1, 1);
    std::map<int, std::vector<std::pair<Schedule, int>>> schedules; // per pp
    std::vector<Item> items;
    total = 0;
    for (int tp : tpDegrees(m, gpus, maxTp)) {
        if (!allowed(sp.tp, tp))
            continue;
        for (int cp : cpDegrees(b.training.seq_len, gpus / tp)) {
            if (!allowed(sp.cp, cp))
                continue;
            for (int pp : ppDegrees(m.layers, gpus / (tp * cp), 1)) {
                const int dp = gpus / (tp * cp * pp);
                if (!allowed(sp.pp, pp) || !allowed(sp.dp, dp) || !listed(dps, dp))
                    continue;
                auto choices = schedules.find(pp);
                if (choices == schedules.end())
                    choices = schedules.emplace(pp, schedulesFor(sp, pp)).first;
                Inner in = innerFor(sp, tp, dp);
                const std::uint64_t inner = in.count();
                if (inner == 0)
                    continue;
                const auto innerIndex = std::uint32_t(inners.size());
                inners.push_back(std::move(in));
                for (int ep : epDegrees(m, expertRanks(tp, cp, dp, b.parallel.expert_tp))) {
                    if (!allowed(sp.ep, ep))
                        continue;
                    for (const auto& [sched, v] : choices->second) {
                        items.push_back(Item{tp, cp, pp, dp, ep, v, sched, total, innerIndex});
                        total += inner;
                    }
                }
            }
        }
    }
    return items;
}

/// Top K (a heap whose front is the worst kept plan) and the Pareto front of one thread.
struct Keeper
{
    std::size_t k = 10;
    std::vector<SearchPlan> heap;
    std::vector<SearchPlan> front; ///< ascending peak_bytes and tokens/s

    bool wantsTop(double tps, double peak, std::uint64_t index) const
    {
        if (k == 0)
            return false;
        if (heap.size() < k)
            return true;
        SearchPlan probe;
        probe.tokens_per_second = tps;
        probe.peak_bytes = peak;
        probe.index = index;
        return rankedBefore(probe, heap.front());
    }
    void addTop(const SearchPlan& p)
    {
        if (heap.size() < k) {
            heap.push_back(p);
            std::push_heap(heap.begin(), heap.end(), rankedBefore);
        } else {
            std::pop_heap(heap.begin(), heap.end(), rankedBefore);
            heap.back() = p;
            std::push_heap(heap.begin(), heap.end(), rankedBefore);
        }
    }
    /// First front member with peak >= `peak`.
    std::vector<SearchPlan>::iterator lowerPeak(double peak)
    {
        return std::lower_bound(front.begin(), front.end(), peak,
                                [](const SearchPlan& a, double x) { return a.peak_bytes < x; });
    }
    bool frontRejects(const SearchPlan& c)
    {
        auto lo = lowerPeak(c.peak_bytes);
        // Only the fastest member with less memory, or the one with equal memory, can
        // dominate c (the front is sorted by memory and by speed).
        return (lo != front.begin() && dominates(*(lo - 1), c)) ||
               (lo != front.end() && dominates(*lo, c));
    }
    void addFront(const SearchPlan& c)
    {
        if (frontRejects(c))
            return;
        auto lo = lowerPeak(c.peak_bytes);
        auto hi = lo;
        while (hi != front.end() && dominates(c, *hi))
            ++hi;
        lo = front.erase(lo, hi);
        front.insert(lo, c);
    }
};

/// Everything a worker thread owns: no allocation per plan once warmed up.
struct Worker
{
    Scenario sc;
    Estimate est;
    std::vector<StageLayers> layers;
    std::vector<StageParams> params;
    Keeper keep;
    std::uint64_t evaluated = 0, scored = 0, pruned = 0, feasible = 0;
    std::vector<SearchPlan> sample; ///< reservoir (Vitter's algorithm R)
    std::size_t sample_size = 0;
    std::uint64_t rng = 0x9E3779B97F4A7C15ull;

    std::uint64_t random()
    {
        rng ^= rng << 13; // xorshift64
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return rng;
    }
};

struct Shared
{
    const SearchSpace* space = nullptr;
    const SearchOptions* options = nullptr;
    const std::vector<Item>* items = nullptr;
    const std::vector<Inner>* inners = nullptr;
    std::atomic<std::size_t> next{0};
    std::atomic<std::uint64_t> done_plans{0};
    std::atomic<std::uint64_t> evaluated{0};
    std::atomic<bool> stop{false};
    std::atomic<unsigned> running{0};
    std::mutex mutex;
    std::condition_variable finished;

    bool stopping() const
    {
        return stop.load(std::memory_order_relaxed) ||
               (options->cancel && options->cancel->load(std::memory_order_relaxed));
    }
};

/// Lower bound on the peak bytes of any plan of this item with the given ZeRO settings: the
/// largest stage's parameters + gradients + optimizer states + the CUDA context. Every other
/// term of a stage's memory (activations, buffers, temporaries) is >= 0, so a plan whose bound
/// exceeds the capacity cannot fit. The shard sizes are the largest the plan allows
/// (shard group × cp for both dense and expert states), so the bound never overestimates.
double stateBound(const Worker& w, int pp, int zero, int shard_group, int dp, int cp, bool offload,
                  const FrameworkConventions& fw, const ModelConstants& k)
{
    const double shard = double(shard_group > 0 ? shard_group : dp) * cp;
    // FP8 parameters smaller than the bf16 weights (per-tensor on Blackwell) lower the states.
    const double fp8Less =
        zero <= 2 ? std::min(0.0, fp8WeightExtraBytes(fw, w.sc.training.fp8_recipe,
                                                      isBlackwell(w.sc.cluster.gpu.name)))
                  : 0.0;
    double worst = 0;
    for (int r = 0; r < pp; ++r) {
        const StageParams& sp = w.params[std::size_t(r)];
        const double bytes = modelStateBytes(sp.dense, fw, zero, shard, offload).total() +
                             modelStateBytes(sp.expert, fw, zero, shard, offload).total() +
                             fp8Less * linearWeights(sp);
        worst = std::max(worst, bytes);
    }
    return worst + k.cuda_context_bytes;
}

// The stage split and parameters of the item's plan, for the memory bound; false when the
// layers cannot be split (then nothing is pruned).
bool splitStages(Worker& w, const Item& it, const FrameworkConventions& fw,
                 const ModelConstants& constants)
{
    const std::size_t pp = std::size_t(it.pp);
    if (w.layers.size() < pp) {
        w.layers.resize(pp);
        w.params.resize(pp);
    }
    const Scenario& sc = w.sc;
    if (!splitLayers(sc.model, sc.parallel, fw.split, std::span(w.layers.data(), pp)))
        return false;
    for (std::size_t r = 0; r < pp; ++r)
        w.params[r] =
            stageParameters(sc.model, sc.parallel, w.layers[r], constants.vocab_divisible_by);
    return true;
}

// Files a scored plan that fits into the top K, the front and the sample, where it belongs.
void keepPlan(Worker& w, std::uint64_t id)
{
    SearchPlan p;
    p.tokens_per_second = w.est.throughput.tokens_per_second;
    p.peak_bytes = w.est.peak_bytes;
    p.index = id;
    const bool top = w.keep.wantsTop(p.tokens_per_second, p.peak_bytes, id);
    const bool front = !w.keep.frontRejects(p);
    std::size_t slot = w.sample_size;
    if (w.sample_size > 0)
        slot = w.sample.size() < w.sample_size ? w.sample.size()
                                               : std::size_t(w.random() % w.feasible);
    const bool sampled = slot < w.sample_size;
    if (!top && !front && !sampled)
        return;
    p.parallel = w.sc.parallel;
    p.training = w.sc.training;
    p.mfu = w.est.throughput.mfu;
    p.step_seconds = w.est.time.step_seconds;
    if (top)
        w.keep.addTop(p);
    if (front)
        w.keep.addFront(p);
    if (sampled) {
        if (slot == w.sample.size())
            w.sample.push_back(p);
        else
            w.sample[slot] = p;
    }
}

// One plan, w.sc as set: checked, pruned or scored and kept.
void runPlan(const SearchOptions& opt, Worker& w, std::uint64_t id, bool hopeless,
             std::uint64_t& evaluated)
{
    if (!isRunnable(w.sc))
        return;
    ++evaluated;
    if (hopeless) {
        ++w.pruned;
        return;
    }
    evaluate(w.sc, w.est, opt.measured, opt.screening);
    ++w.scored;
    if (!w.est.fits)
        return;
    ++w.feasible;
    keepPlan(w, id);
}

// The micro-batch, recompute and sequence-parallel loops of one (zero, group, offload);
// false when the search was stopped.
bool runTraining(Shared& sh, Worker& w, const Inner& inner, bool hopeless, std::uint64_t& index,
                 std::uint64_t& evaluated)
{
    Scenario& sc = w.sc;
    for (int mb : inner.micro_batches) {
        sc.training.micro_batch = mb;
        for (Recompute rc : inner.recompute) {
            sc.training.recompute = rc;
            for (char seqp : inner.sp) {
                if (sh.stopping())
                    return false;
                sc.parallel.sequence_parallel = seqp != 0;
                runPlan(*sh.options, w, index++, hopeless, evaluated);
            }
        }
    }
    return true;
}

void runItem(Shared& sh, Worker& w, const Item& it)
{
    const SearchOptions& opt = *sh.options;
    const ModelConstants& constants = opt.screening;
    Scenario& sc = w.sc;
    ParallelPlan& pl = sc.parallel;
    pl = ParallelPlan{};
    pl.tp = it.tp;
    pl.cp = it.cp;
    pl.pp = it.pp;
    pl.dp = it.dp;
    pl.ep = it.ep;
    pl.virtual_stages = it.v;
    pl.schedule = it.schedule;

    const Inner& inner = (*sh.inners)[it.inner];
    const FrameworkConventions fw = conventions(sc.training.framework, sc.training.optimizer);
    const bool split = opt.prune && splitStages(w, it, fw, constants);
    const double capacity = sc.cluster.gpu.memory_gib * units::kGiB;
    std::uint64_t index = it.first_index;
    std::uint64_t evaluated = 0;
    for (const auto& [zero, group] : inner.zero_groups) {
        pl.zero = zero;
        pl.shard_group = group;
        // The plan's own dtypes (gradient reduce dtype, FP8 weights): the bound must not count
        // more bytes than the evaluation will.
        const FrameworkConventions planFw = split ? conventions(sc.training, pl) : fw;
        for (char off : inner.offload) {
            pl.offload_optimizer = off != 0;
            const bool hopeless = split && stateBound(w, it.pp, zero, group, it.dp, it.cp, off != 0,
                                                      planFw, constants) > capacity * (1 + 1e-9);
            if (!runTraining(sh, w, inner, hopeless, index, evaluated))
                return;
        }
    }
    w.evaluated += evaluated;
    sh.evaluated.fetch_add(evaluated, std::memory_order_relaxed);
    sh.done_plans.fetch_add(inner.count(), std::memory_order_relaxed);
}

void workerMain(Shared& sh, Worker& w)
{
    const auto& items = *sh.items;
    for (;;) {
        if (sh.stopping())
            break;
        const std::size_t i = sh.next.fetch_add(1, std::memory_order_relaxed);
        if (i >= items.size())
            break;
        runItem(sh, w, items[i]);
    }
    std::lock_guard lock(sh.mutex);
    if (--sh.running == 0)
        sh.finished.notify_all();
}

void checkProblem(const SearchSpace& space)
{
    Scenario s = space.base;
    s.parallel = ParallelPlan{};
    s.parallel.dp = std::max(1, s.gpus);
    s.training.micro_batch = 1;
    s.training.recompute_num_layers = 0;
    for (const ValidationError& e : validate(s)) {
        // Batch divisibility depends on the plan; everything else is the problem's own.
        if (e.rule == "global_batch_multiple" || e.rule == "microbatches_at_least_one")
            continue;
        throw InputError(e.fields.empty() ? std::string() : e.fields.front(), e.message);
    }
}

} // namespace

bool rankedBefore(const SearchPlan& a, const SearchPlan& b)
{
    if (a.tokens_per_second != b.tokens_per_second)
        return a.tokens_per_second > b.tokens_per_second;
    if (a.peak_bytes != b.peak_bytes)
        return a.peak_bytes < b.peak_bytes;
    return a.index < b.index;
}

bool dominates(const SearchPlan& a, const SearchPlan& b)
{
    if (a.tokens_per_second < b.tokens_per_second || a.peak_bytes > b.peak_bytes)
        return false;
    if (a.tokens_per_second > b.tokens_per_second || a.peak_bytes < b.peak_bytes)
        return true;
    return a.index < b.index;
}

Scenario scenarioFor(const SearchSpace& space, const SearchPlan& plan)
{
    Scenario s = space.base;
    s.parallel = plan.parallel;
    s.training = plan.training;
    return s;
}

ModelConstants screeningConstants()
{
    ModelConstants k;
    k.simulate_pipeline = false;
    return k;
}

namespace {

// Full evaluate() of a kept plan; false when it no longer fits.
bool rescorePlan(const SearchSpace& space, const SearchOptions& options, SearchPlan& p,
                 Estimate& est)
{
    evaluate(scenarioFor(space, p), est, options.measured);
    p.tokens_per_second = est.throughput.tokens_per_second;
    p.peak_bytes = est.peak_bytes;
    p.mfu = est.throughput.mfu;
    p.step_seconds = est.time.step_seconds;
    return est.fits;
}

void rescoreAll(const SearchSpace& space, const SearchOptions& options, SearchResult& r)
{
    Estimate est;
    auto rescoreList = [&](std::vector<SearchPlan>& plans) {
        std::erase_if(plans, [&](SearchPlan& p) { return !rescorePlan(space, options, p, est); });
    };
    rescoreList(r.results);
    rescoreList(r.sample);
    rescoreList(r.pareto);
    // Once simulated, a top-K plan can overtake a front member and the reverse: both lists
    // are drawn again from their union (each plan once). The random sample stays out, so the
    // answer does not depend on it.
    std::vector<SearchPlan> all = r.results;
    for (const SearchPlan& p : r.pareto)
        if (std::none_of(all.begin(), all.end(),
                         [&](const SearchPlan& q) { return q.index == p.index; }))
            all.push_back(p);
    const std::size_t k = r.results.size();
    r.results = all;
    std::sort(r.results.begin(), r.results.end(), rankedBefore);
    if (r.results.size() > k)
        r.results.resize(k);
    std::sort(all.begin(), all.end(), [](const SearchPlan& a, const SearchPlan& b) {
        return a.peak_bytes != b.peak_bytes ? a.peak_bytes < b.peak_bytes : rankedBefore(a, b);
    });
    std::vector<SearchPlan> front;
    for (const SearchPlan& p : all)
        if (front.empty() || p.tokens_per_second > front.back().tokens_per_second)
            front.push_back(p);
    r.pareto = std::move(front);
}

} // namespace

namespace {

void setUpWorkers(std::vector<Worker>& workers, const SearchSpace& space,
                  const SearchOptions& options)
{
    for (Worker& w : workers) {
        w.sc = space.base;
        // Its recompute modes are whole-model ones (search.h): no layer count is kept.
        w.sc.training.recompute_num_layers = 0;
        w.keep.k = std::size_t(std::max(0, options.top_k));
        w.keep.heap.reserve(w.keep.k);
        w.keep.front.reserve(256);
        w.sample_size = std::size_t(std::max(0, options.sample));
        w.sample.reserve(w.sample_size);
        w.rng += 0x632BE59BD9B4E019ull * (1 + std::size_t(&w - workers.data()));
    }
}

// Runs the workers to the end (or the cancel) and reports progress from this thread.
void runWorkers(Shared& sh, std::vector<Worker>& workers, std::uint64_t total)
{
    const SearchOptions& options = *sh.options;
    std::vector<std::jthread> threads;
    threads.reserve(workers.size());
    for (Worker& w : workers)
        threads.emplace_back([&sh, &w] { workerMain(sh, w); });

    const auto interval =
        std::chrono::duration<double>(std::max(0.001, options.progress_interval_seconds));
    std::unique_lock lock(sh.mutex);
    while (sh.running > 0) {
        sh.finished.wait_for(lock, interval, [&] { return sh.running == 0; });
        if (sh.running == 0 || !options.progress || sh.stopping())
            continue;
        lock.unlock();
        const double frac = total ? double(sh.done_plans.load()) / double(total) : 1.0;
        if (!options.progress(std::min(1.0, frac), sh.evaluated.load()))
            sh.stop = true;
        lock.lock();
    }
}

// The workers' counts, top K, fronts and samples, merged into the result.
void mergeWorkers(const std::vector<Worker>& workers, const SearchOptions& options,
                  SearchResult& result)
{
    Keeper all;
    all.k = std::size_t(std::max(0, options.top_k));
    for (const Worker& w : workers) {
        result.evaluated += w.evaluated;
        result.scored += w.scored;
        result.pruned += w.pruned;
        result.feasible += w.feasible;
        for (const SearchPlan& p : w.keep.heap)
            if (all.wantsTop(p.tokens_per_second, p.peak_bytes, p.index))
                all.addTop(p);
        for (const SearchPlan& p : w.keep.front)
            all.addFront(p);
    }
    // Each worker's reservoir is a uniform sample of its own fitting plans; take from each in
    // proportion to how many it saw.
    if (options.sample > 0 && result.feasible > 0) {
        const double share = std::min(1.0, double(options.sample) / double(result.feasible));
        for (const Worker& w : workers) {
            const auto take =
                std::min(w.sample.size(), std::size_t(std::llround(share * double(w.feasible))));
            result.sample.insert(result.sample.end(), w.sample.begin(), w.sample.begin() + take);
        }
    }
    result.results = std::move(all.heap);
    std::sort(result.results.begin(), result.results.end(), rankedBefore);
    result.pareto = std::move(all.front);
}

} // namespace

SearchResult search(const SearchSpace& space, const SearchOptions& options)
{
    const auto start = Clock::now();
    checkProblem(space);

    SearchResult result;
    std::uint64_t total = 0;
    std::vector<Inner> inners;
    const std::vector<Item> items = enumerateItems(space, inners, total);
    if (total > options.max_plans)
        throw InputError("gpus", "the search space has " + std::to_string(total) +
                                     " plans, more than the limit of " +
                                     std::to_string(options.max_plans) +
                                     ": pin some dimensions (e.g. --tp, --pp, --micro-batch)");

    unsigned n = options.threads > 0 ? options.threads : std::thread::hardware_concurrency();
    n = std::max(1u, std::min<unsigned>(n, unsigned(std::max<std::size_t>(1, items.size()))));
    result.threads = n;

    Shared sh;
    sh.space = &space;
    sh.options = &options;
    sh.items = &items;
    sh.inners = &inners;
    sh.running = n;
    std::vector<Worker> workers(n);
    setUpWorkers(workers, space, options);
    runWorkers(sh, workers, total);
    result.cancelled = sh.stopping();
    mergeWorkers(workers, options, result);
    if (options.rescore)
        rescoreAll(space, options, result);
    result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (options.progress && !result.cancelled)
        options.progress(1.0, result.evaluated);
    return result;
}

} // namespace paralens
