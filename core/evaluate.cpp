// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/evaluate.h"
#include "core/flops.h"
#include "core/framework.h"
#include "core/kernel_time.h"
#include "core/memory.h"
#include "core/moe_dispatch.h"
#include "core/params.h"
#include "core/pipeline_cost.h"
#include "core/time.h"
#include "core/topology.h"
#include "core/units.h"

#include <algorithm>
#include <array>
#include <cstdio>

namespace paralens {
namespace {

// Per-thread scratch: grows to the largest pp seen, then never allocates again.
struct Scratch
{
    std::vector<StageLayers> layers;
    std::vector<StageParams> params;
    std::vector<StageTimes> times;
    std::vector<double> inflight;
    void resize(std::size_t p)
    {
        if (layers.size() < p) {
            layers.resize(p);
            params.resize(p);
            times.resize(p);
            inflight.resize(p);
        }
    }
};

constexpr std::array<std::pair<Warning, std::string_view>, 7> kWarnings{{
    {Warning::TpCrossesNodes, "TP group crosses the scale-up domain: tensor-parallel collectives "
                              "run over the scale-out network"},
    {Warning::BubbleAbove20, "pipeline bubble above 20 % of the step"},
    {Warning::EpCrossesNodes, "EP group crosses the scale-up domain: all-to-alls run over the "
                              "scale-out network"},
    {Warning::CpCrossesNodes, "CP group crosses the scale-up domain: the K/V ring runs over the "
                              "scale-out network"},
    {Warning::DoesNotFit, "does not fit: a stage needs more memory than the GPU has"},
    {Warning::LowMicrobatches,
     "fewer micro-batches than pipeline stages: the pipeline never fills"},
    {Warning::Uncalibrated, "a calibration profile is named but was not loaded: datasheet figures "
                            "used"},
}};

// The idle share of the step above which the bubble warning shows (its text says 20 %).
constexpr double kBubbleWarningFraction = 0.20;

// The sizes every formula divides by or multiplies with must be positive; validate() checks
// much more, but evaluate() must stay finite and non-negative even without it.
bool positiveSizes(const Scenario& s)
{
    const ParallelPlan& p = s.parallel;
    const TrainingSettings& t = s.training;
    const ModelSpec& m = s.model;
    return p.tp > 0 && p.pp > 0 && p.dp > 0 && p.cp > 0 && p.ep > 0 && p.virtual_stages > 0 &&
           t.seq_len > 0 && t.micro_batch > 0 && t.global_batch > 0 && m.layers > 0 &&
           m.hidden > 0 && m.heads > 0 && m.kv_heads >= 0 && m.head_dim >= 0 && m.ffn_hidden >= 0 &&
           m.vocab > 0 && m.moe.experts >= 0 && m.moe.top_k >= 0 && m.moe.expert_ffn_hidden >= 0 &&
           m.moe.shared_experts >= 0 && m.moe.first_dense_layers >= 0 && m.mla.q_lora_rank >= 0 &&
           m.mla.kv_lora_rank >= 0 && m.mla.qk_nope_head_dim >= 0 && m.mla.qk_rope_head_dim >= 0 &&
           m.mla.v_head_dim >= 0 && m.mtp_layers >= 0 && s.cluster.gpu.memory_gib >= 0;
}

// Parameters per GPU of every stage; an identical middle stage copies its neighbour's.
void stageParams(const Scenario& s, const ModelConstants& k, std::span<const StageLayers> layers,
                 std::span<StageParams> params)
{
    const LayerParams dl = denseLayerParams(s.model), ml = moeLayerParams(s.model);
    for (std::size_t r = 0; r < layers.size(); ++r) {
        const StageLayers& st = layers[r];
        const StageLayers* prev = r > 0 ? &layers[r - 1] : nullptr;
        if (prev && !st.first && !st.last && !prev->first && !prev->last &&
            st.layers == prev->layers && st.moe_layers == prev->moe_layers)
            params[r] = params[r - 1];
        else
            params[r] = stageParameters(s.model, s.parallel, st, dl, ml, k.vocab_divisible_by);
    }
}

// Tokens per second, model and hardware FLOPs per step, and their utilisation of the dense peak
// of the training precision (docs/formulas.md §2.3).
void fillThroughput(const Scenario& s, const ModelConstants& k, Estimate& out)
{
    const TrainingSettings& tr = s.training;
    Throughput& th = out.throughput;
    const double step = out.time.step_seconds;
    const double gpus = std::max(1, out.gpus);
    const StepFlops flops =
        stepFlops(s.model, tr.global_batch, tr.seq_len, tr.recompute,
                  paddedVocab(s.model.vocab, s.parallel.tp, k.vocab_divisible_by),
                  tr.framework == Framework::Megatron ? tr.recompute_modules
                                                      : std::uint8_t{kRecomputeCoreAttn},
                  opLevelCheckpointing(tr));
    th.model_flops_per_step = flops.model;
    th.hardware_flops_per_step = flops.hardware;
    // Full recompute with a layer count repeats only the layers it does not leave stored.
    if (tr.recomputedPerChunk() > 0) {
        int dense = 0, moe = 0;
        for (const StageMemory& st : out.stages) {
            dense += st.stored_layers - st.stored_moe_layers;
            moe += st.stored_moe_layers;
        }
        th.hardware_flops_per_step -=
            layersForwardFlopsPerStep(s.model, tr.global_batch, tr.seq_len, dense, moe);
    }
    const bool fp8 = tr.precision == Precision::FP8 && s.cluster.gpu.fp8_tflops > 0;
    const double peak =
        (fp8 ? s.cluster.gpu.fp8_tflops : s.cluster.gpu.bf16_tflops) * kFlopsPerTflop;
    if (step > 0) {
        th.tokens_per_second = out.tokens_per_step / step;
        th.tflops_per_gpu = th.model_flops_per_step / (step * gpus) / kFlopsPerTflop;
        th.mfu = peak > 0 ? th.model_flops_per_step / (step * gpus * peak) : 0;
        th.hfu = peak > 0 ? th.hardware_flops_per_step / (step * gpus * peak) : 0;
    } else {
        th.tokens_per_second = th.tflops_per_gpu = th.mfu = th.hfu = 0;
    }
}

void fillWarnings(const Scenario& s, const Topology& topo, bool measured, Estimate& out)
{
    auto warn = [&](Warning w, bool on) {
        if (on)
            out.warnings |= static_cast<std::uint32_t>(w);
    };
    const int p = std::max(1, s.parallel.pp);
    warn(Warning::TpCrossesNodes, topo.tp.span == Span::ScaleOut);
    // The dispatcher's group: EP for alltoall, expert TP × EP for allgather and DeepEP.
    const bool a2a = moeDispatcher(s.parallel, s.training.framework) == MoeDispatcher::AllToAll;
    warn(Warning::EpCrossesNodes,
         s.model.isMoe() && (a2a ? topo.ep : topo.tp_ep).span == Span::ScaleOut);
    warn(Warning::CpCrossesNodes, topo.cp.span == Span::ScaleOut);
    warn(Warning::BubbleAbove20, out.time.bubble_fraction > kBubbleWarningFraction);
    warn(Warning::DoesNotFit, !out.fits);
    warn(Warning::LowMicrobatches, p > 1 && out.microbatches < p);
    warn(Warning::Uncalibrated, !s.calibration.empty() && !measured);
}

} // namespace

void evaluate(const Scenario& s, Estimate& out, const MeasuredPerformance* measured)
{
    static const ModelConstants defaults;
    evaluate(s, out, measured, defaults);
}

Estimate evaluate(const Scenario& s)
{
    Estimate e;
    evaluate(s, e);
    return e;
}

void evaluate(const Scenario& s, Estimate& out, const MeasuredPerformance* measured,
              const ModelConstants& given, PipelineTimeline* timeline)
{
    // A profile's fitted constants replace the given ones (a copy on the stack: no allocation).
    ModelConstants fitted;
    if (measured) {
        fitted = given;
        measured->adjustConstants(s.cluster.gpu.name, fitted);
    }
    const ModelConstants& k = measured ? fitted : given;
    thread_local Scratch scratch;
    const ParallelPlan& pl = s.parallel;
    const TrainingSettings& tr = s.training;
    const int p = std::max(1, pl.pp);
    scratch.resize(std::size_t(p));
    const std::span<StageLayers> layers(scratch.layers.data(), std::size_t(p));
    const std::span<StageParams> params(scratch.params.data(), std::size_t(p));
    const std::span<StageTimes> times(scratch.times.data(), std::size_t(p));
    const std::span<double> inflight(scratch.inflight.data(), std::size_t(p));

    out.gpus = pl.gpus();
    out.calibrated = measured != nullptr;
    out.warnings = 0;
    out.microbatches = safeMicrobatches(tr, pl);
    out.tokens_per_step = double(tr.global_batch) * tr.seq_len;
    out.capacity_bytes = std::max(0.0, s.cluster.gpu.memory_gib) * units::kGiB;

    const FrameworkConventions fw = conventions(tr, pl);
    if (!positiveSizes(s) ||
        !splitLayers(s.model, pl, fw.split, layers, std::max(0, tr.recomputedPerChunk()))) {
        // Not runnable (validate() names why): an empty estimate that does not fit.
        out.stages.clear();
        out.fits = false;
        out.peak_bytes = 0;
        out.peak_stage = 0;
        out.peak_allocated_bytes = out.peak_reserved_bytes = 0;
        out.time = TimeBreakdown{};
        out.throughput = Throughput{};
        return;
    }
    stageParams(s, k, layers, params);
    const Topology topo = placeGroups(pl, s.cluster);

    StepInputs in;
    in.scenario = &s;
    in.framework = &fw;
    in.constants = &k;
    in.topology = &topo;
    in.layers = layers;
    in.params = params;
    in.measured = measured;
    in.timeline = timeline;
    stepTime(in, times, inflight, out);
    stageMemory(s, fw, k, layers, params, inflight, out);

    out.peak_bytes = 0;
    out.peak_stage = 0;
    out.peak_allocated_bytes = out.peak_reserved_bytes = 0;
    for (const StageMemory& st : out.stages) {
        if (st.total() > out.peak_bytes) {
            out.peak_bytes = st.total();
            out.peak_stage = st.stage;
        }
        out.peak_allocated_bytes = std::max(out.peak_allocated_bytes, st.allocated());
        out.peak_reserved_bytes = std::max(out.peak_reserved_bytes, st.reserved());
    }
    out.fits = out.peak_bytes <= out.capacity_bytes;
    fillThroughput(s, k, out);
    fillWarnings(s, topo, measured != nullptr, out);
}

std::string_view warningText(Warning w)
{
    for (const auto& [k, text] : kWarnings)
        if (k == w)
            return text;
    return "unknown warning";
}

std::vector<std::string> warningTexts(const Estimate& e)
{
    std::vector<std::string> out;
    for (const auto& [w, text] : kWarnings)
        if (e.has(w)) {
            std::string line(text);
            if (w == Warning::DoesNotFit && !e.stages.empty()) {
                char buf[160];
                std::snprintf(buf, sizeof buf,
                              "does not fit: stage %d needs %.1f GiB per GPU, the GPU has %.1f GiB",
                              e.peak_stage, e.peak_bytes / units::kGiB,
                              e.capacity_bytes / units::kGiB);
                line = buf;
            }
            out.push_back(std::move(line));
        }
    return out;
}

} // namespace paralens
