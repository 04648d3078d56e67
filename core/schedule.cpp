// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/schedule.h"

#include "core/error.h"

#include <algorithm>
#include <string>

namespace paralens {
namespace {

std::string str(std::int64_t v)
{
    return std::to_string(v);
}

/// Appends ops for one device; keeps the (device) fixed.
class Emitter
{
public:
    Emitter(std::vector<PipelineOp>& ops, int device) : m_ops(ops), m_device(device) {}
    void f(int mb, int chunk = 0) { push(mb, chunk, OpKind::F); }
    void b(int mb, int chunk = 0) { push(mb, chunk, OpKind::B); }
    void w(int mb, int chunk = 0) { push(mb, chunk, OpKind::W); }

private:
    void push(int mb, int chunk, OpKind kind)
    {
        m_ops.push_back({m_device, mb, static_cast<std::int16_t>(chunk), kind});
    }
    std::vector<PipelineOp>& m_ops;
    int m_device;
};

// GPipe (Huang et al. 2019; Narayanan et al. 2021 §2.2.1): every forward, then every backward.
void gpipe(Emitter e, int m)
{
    for (int i = 0; i < m; ++i)
        e.f(i);
    for (int i = 0; i < m; ++i)
        e.b(i);
}

// 1F1B / PipeDream-Flush (Narayanan et al. 2021 §2.2.1; Megatron-LM
// forward_backward_pipelining_without_interleaving): p − r − 1 warm-up forwards, then one
// forward and one backward alternately, then the remaining backwards.
void oneF1B(Emitter e, int p, int m, int r)
{
    const int warmup = std::min(p - r - 1, m);
    for (int i = 0; i < warmup; ++i)
        e.f(i);
    for (int k = 0; k < m - warmup; ++k) {
        e.f(warmup + k);
        e.b(k);
    }
    for (int k = m - warmup; k < m; ++k)
        e.b(k);
}

// ZB-H1 (Qi et al. 2023, "Zero Bubble Pipeline Parallelism", §3.1 and Fig. 3): the 1F1B order
// with the backward split into B (input gradient) and W (weight gradient). Rank r (0-based)
// keeps r weight-gradient passes pending during the steady phase, so every rank holds the same
// activations as 1F1B (p − r) plus r·M_W; in the cool-down every B is followed by one W, which
// fills the gap while the next gradient travels upstream; the pending W's close the tail.
void zbH1(Emitter e, int p, int m, int r)
{
    const int warmup = std::min(p - r - 1, m);
    int nextW = 0;
    for (int i = 0; i < warmup; ++i)
        e.f(i);
    for (int k = 0; k < m - warmup; ++k) {
        e.f(warmup + k);
        e.b(k);
        if (k + 1 - nextW > r)
            e.w(nextW++);
    }
    for (int k = m - warmup; k < m; ++k) {
        e.b(k);
        e.w(nextW++);
    }
    while (nextW < m)
        e.w(nextW++);
}

// Interleaved 1F1B (Narayanan et al. 2021 §2.2.2; Megatron-LM
// forward_backward_pipelining_with_interleaving, get_schedule_table and
// get_pp_rank_microbatches): chunk-micro-batches run in groups of G micro-batches per chunk;
// the k-th forward is table[k], the k-th backward is table[k] with the chunk order reversed.
// Warm-up 2·(p − r − 1) + (v − 1)·G forwards, capped at m·v.
void interleaved(Emitter e, int p, int m, int v, int g, int r, std::vector<PipelineOp>& table)
{
    table.clear();
    for (int first = 0; first < m; first += g) {
        const int last = first + g >= m ? m : first + g;
        for (int c = 0; c < v; ++c)
            for (int mb = first; mb < last; ++mb)
                table.push_back({0, mb, static_cast<std::int16_t>(c), OpKind::F});
    }
    const int total = m * v;
    const int warmup = interleavedWarmup(p, m, v, g, r);
    const auto fwd = [&](int k) { e.f(table[k].microbatch, table[k].chunk); };
    const auto bwd = [&](int k) { e.b(table[k].microbatch, v - 1 - table[k].chunk); };
    for (int k = 0; k < warmup; ++k)
        fwd(k);
    for (int k = 0; k < total - warmup; ++k) {
        fwd(k + warmup);
        bwd(k);
    }
    for (int k = total - warmup; k < total; ++k)
        bwd(k);
}

// ZB-V (Qi et al. 2024, "Pipeline Parallelism with Controllable Memory", and the handcrafted
// ZB-V order in sail-sg/zero-bubble-pipeline-parallelism, megatron/core/pipeline_parallel/
// handcrafted_zb_v): chunk 0 of rank r is model stage r, chunk 1 is 2p − 1 − r. Warm-up
// 2(p − r) − 1 chunk-0 forwards, r (F1, F0) pairs, p − r (F1 B1 W1) groups; steady (F0 B0 W0
// F1 B1 W1); cool-down r (B0 B1) pairs, p − r (B0 W0) pairs, then the pending W's. The order
// is built for max(m, 2p − 1) micro-batches and the extra ones are dropped, as upstream does.
void zbV(Emitter e, int p, int m, int r)
{
    const int n = std::max(2 * p - 1, m);
    int f0 = 0, f1 = 0, b0 = 0, b1 = 0;
    // Ops of padded micro-batches (>= m) are skipped.
    auto F = [&](int mb, int c) {
        if (mb < m)
            e.f(mb, c);
    };
    auto B = [&](int mb, int c) {
        if (mb < m)
            e.b(mb, c);
    };
    auto W = [&](int mb, int c) {
        if (mb < m)
            e.w(mb, c);
    };
    for (int i = 0; i < 2 * (p - r) - 1; ++i)
        F(f0++, 0);
    for (int i = 0; i < r; ++i) {
        F(f1++, 1);
        F(f0++, 0);
    }
    for (int i = 0; i < p - r; ++i) {
        F(f1++, 1);
        B(b1, 1);
        W(b1++, 1);
    }
    while (f1 < f0 || f0 < n) {
        if (f0 < n)
            F(f0++, 0);
        B(b0, 0);
        W(b0++, 0);
        F(f1++, 1);
        B(b1, 1);
        W(b1++, 1);
    }
    int w0 = b0, w1 = b1;
    for (int i = 0; i < r; ++i) {
        B(b0++, 0);
        B(b1++, 1);
    }
    for (int i = 0; i < p - r; ++i) {
        B(b0++, 0);
        W(w0++, 0);
    }
    while (w1 < b1)
        W(w1++, 1);
    while (w0 < b0)
        W(w0++, 0);
}

// DualPipeV (deepseek-ai/DualPipe, dualpipe/dualpipev.py, DualPipeV.step; DeepSeek-V3 report
// §3.2.1 for DualPipe): the V layout of ZB-V, eight phases per rank. A backward "with zero
// bubble" emits B and queues its W (run later, FIFO); a plain backward emits B immediately
// followed by its W. forward_backward_chunk pairs (overlapped compute on the GPU) are run
// back to back here: F, then B.
void dualPipeV(Emitter e, int p, int m, int r, std::vector<PipelineOp>& wQueue)
{
    wQueue.clear();
    std::size_t wHead = 0;
    int f[2] = {0, 0}, b[2] = {0, 0};
    auto F = [&](int c) { e.f(f[c]++, c); };
    auto B = [&](int c, bool zb) {
        const int mb = b[c]++;
        e.b(mb, c);
        if (zb)
            wQueue.push_back({0, mb, static_cast<std::int16_t>(c), OpKind::W});
        else
            e.w(mb, c);
    };
    auto W = [&]() {
        const PipelineOp& op = wQueue[wHead++];
        e.w(op.microbatch, op.chunk);
    };
    for (int i = 0; i < (p - r - 1) * 2; ++i) // step 1: nF0
        F(0);
    for (int i = 0; i < r + 1; ++i) { // step 2: nF0F1
        F(0);
        F(1);
    }
    for (int i = 0; i < p - r - 1; ++i) { // step 3: nB1W1F1 (zero bubble)
        B(1, true);
        W();
        F(1);
    }
    for (int i = 0; i < m - 2 * p + r + 1; ++i) { // step 4: nF0B1F1B0
        F(0);
        B(1, false);
        F(1);
        B(0, false);
    }
    for (int i = 0; i < p - r - 1; ++i) { // step 5: nB1F1B0
        B(1, false);
        F(1);
        B(0, false);
    }
    bool zb = false; // step 6: nB1B0, the second half with zero bubble
    const int step6 = r + 1;
    for (int i = 0; i < step6; ++i) {
        if (i == step6 / 2 && r % 2 == 1)
            zb = true;
        B(1, zb);
        if (i == step6 / 2 && r % 2 == 0)
            zb = true;
        B(0, zb);
    }
    for (int i = 0; i < p - r - 1; ++i) { // step 7: nWB0 (zero bubble)
        W();
        B(0, true);
    }
    while (wHead < wQueue.size()) // step 8: nW
        W();
}

[[noreturn]] void bad(const char* field, const std::string& message)
{
    throw InputError(field, message);
}

// Megatron: p <= G <= m and the last group (m mod G) is empty or at least p; with a shorter
// last group the static order deadlocks (a chunk-1 forward waits for a chunk-0 forward
// queued behind it). G = 0 picks the smallest valid G >= p.
void validateGroups(const ScheduleParams& s)
{
    const int g = interleavedGroupSize(s.stages, s.microbatches, s.group_size);
    if (g < s.stages || g > s.microbatches)
        bad("parallel.microbatch_group",
            "interleaved-1f1b micro-batch group must satisfy pp <= G <= m (G = " + str(g) +
                ", pp = " + str(s.stages) + ", m = " + str(s.microbatches) + ")");
    const int rest = s.microbatches % g;
    if (rest != 0 && rest < s.stages)
        bad("training.global_batch",
            "interleaved-1f1b: micro-batches mod group (" + str(s.microbatches) + " mod " + str(g) +
                " = " + str(rest) + ") must be 0 or at least pp = " + str(s.stages));
}

// The schedule's chunk rule (plan_options.h), with a message that names the schedule.
void validateChunks(const ScheduleParams& s)
{
    const auto name = [&] { return std::string(toString(s.kind)); }; // error paths only
    switch (traitsOf(s.kind).chunks) {
    case ChunkRule::One:
        if (s.virtual_stages != 1)
            bad("parallel.virtual_stages", name() + " runs one model chunk per GPU; " +
                                               "parallel.virtual_stages must be 1 (got " +
                                               str(s.virtual_stages) + ")");
        break;
    case ChunkRule::Two:
        if (s.virtual_stages != 2)
            bad("parallel.virtual_stages", name() + " places two model chunks per GPU in a V; " +
                                               "parallel.virtual_stages must be 2 (got " +
                                               str(s.virtual_stages) + ")");
        break;
    case ChunkRule::Free:
        if (s.virtual_stages < 2)
            bad("parallel.virtual_stages",
                name() + " needs parallel.virtual_stages >= 2 (got " + str(s.virtual_stages) + ")");
        break;
    }
}

void validate(const ScheduleParams& s)
{
    if (s.stages < 1)
        bad("parallel.pp", "parallel.pp must be at least 1 (got " + str(s.stages) + ")");
    if (s.microbatches < 1)
        bad("training.global_batch",
            "the pipeline needs at least one micro-batch (got " + str(s.microbatches) + ")");
    validateChunks(s);
    const int perStage = traitsOf(s.kind).microbatches_per_stage;
    if (s.microbatches < minMicrobatches(s.kind, s.virtual_stages, s.stages))
        bad("training.global_batch",
            std::string(toString(s.kind)) + " needs at least " +
                (perStage > 1 ? str(perStage) + "·pp" : std::string("as many")) + " micro-batches" +
                (perStage > 1 ? "" : " as pipeline stages") + " (m = " + str(s.microbatches) +
                ", pp = " + str(s.stages) + ")");
    if (s.kind == Schedule::Interleaved1F1B)
        validateGroups(s);
    const std::int64_t ops = scheduleOpCount(s);
    if (ops > kMaxPipelineOps)
        bad("training.global_batch",
            "pipeline plan has " + str(ops) + " ops (pp × virtual stages × micro-batches × " +
                "passes), above the simulator's limit of " + str(kMaxPipelineOps));
}

} // namespace

int interleavedGroupSize(int stages, int microbatches, int group_size)
{
    if (group_size > 0)
        return group_size;
    for (int g = stages; g < microbatches; ++g)
        if (microbatches % g == 0 || microbatches % g >= stages)
            return g;
    return std::max(stages, microbatches);
}

int interleavedWarmup(int stages, int microbatches, int virtual_stages, int group_size, int rank)
{
    const std::int64_t g = interleavedGroupSize(stages, microbatches, group_size);
    const std::int64_t w = 2LL * (stages - rank - 1) + (virtual_stages - 1LL) * g;
    return static_cast<int>(std::min<std::int64_t>(w, std::int64_t(microbatches) * virtual_stages));
}

ScheduleParams scheduleParamsFor(const ParallelPlan& plan, int microbatches)
{
    ScheduleParams sp;
    sp.kind = effectiveSchedule(plan.schedule, plan.virtual_stages);
    sp.stages = plan.pp;
    sp.microbatches = microbatches;
    sp.virtual_stages = sp.kind == plan.schedule ? plan.virtual_stages : 1;
    return sp;
}

std::int64_t scheduleOpCount(const ScheduleParams& s)
{
    const int passes = traitsOf(s.kind).split_backward ? 3 : 2; // F, B (and W)
    return std::int64_t(std::max(s.stages, 0)) * std::max(s.virtual_stages, 0) *
           std::max(s.microbatches, 0) * passes;
}

void ScheduleBuilder::build(const ScheduleParams& params, PipelineSchedule& out)
{
    validate(params);
    const int p = params.stages, m = params.microbatches, v = params.virtual_stages;
    const ScheduleTraits traits = traitsOf(params.kind);
    out.kind = params.kind;
    out.stages = p;
    out.microbatches = m;
    out.chunks = v;
    out.group_size = params.kind == Schedule::Interleaved1F1B
                         ? interleavedGroupSize(p, m, params.group_size)
                         : 0;
    out.split_backward = traits.split_backward;
    out.layout = traits.layout;
    out.ops.clear();
    out.ops.reserve(static_cast<std::size_t>(scheduleOpCount(params)));
    out.stage_offset.assign(static_cast<std::size_t>(p) + 1, 0);
    for (int r = 0; r < p; ++r) {
        Emitter e(out.ops, r);
        switch (params.kind) {
        case Schedule::GPipe:
            gpipe(e, m);
            break;
        case Schedule::OneF1B:
            oneF1B(e, p, m, r);
            break;
        case Schedule::ZBH1:
            zbH1(e, p, m, r);
            break;
        case Schedule::Interleaved1F1B:
            interleaved(e, p, m, v, out.group_size, r, m_scratch);
            break;
        case Schedule::ZBV:
            zbV(e, p, m, r);
            break;
        case Schedule::DualPipeV:
            dualPipeV(e, p, m, r, m_scratch);
            break;
        }
        out.stage_offset[r + 1] = static_cast<std::int64_t>(out.ops.size());
    }
}

PipelineSchedule buildSchedule(const ScheduleParams& params)
{
    PipelineSchedule s;
    ScheduleBuilder().build(params, s);
    return s;
}

} // namespace paralens
