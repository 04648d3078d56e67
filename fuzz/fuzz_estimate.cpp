// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: the estimate of any scenario that validates. The first byte chooses how the
// rest becomes a scenario: even = scenario JSON text (parseScenario), odd = bytes decoded into a
// preset model and cluster with a plan and training settings (reaches deep plan space fast).
// When validate() is empty, evaluate() must not throw and its Estimate must satisfy
// tests/core/estimate_invariants.h (finite, non-negative, totals = sum of parts, ...).

#include "core/error.h"
#include "core/evaluate.h"
#include "core/presets.h"
#include "core/scenario_io.h"
#include "core/validate.h"
#include "tests/core/estimate_invariants.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>

using namespace paralens;

namespace {

template <typename T> T pick(FuzzedDataProvider& in, std::initializer_list<T> values)
{
    return *(values.begin() + in.ConsumeIntegralInRange<std::size_t>(0, values.size() - 1));
}

Scenario decode(FuzzedDataProvider& in)
{
    const PresetLibrary& lib = PresetLibrary::builtin();
    static const std::vector<std::string> models = lib.modelIds();
    static const std::vector<std::string> hardware = lib.hardwareIds();
    Scenario s = defaultScenario();
    s.model_id = models[in.ConsumeIntegralInRange<std::size_t>(0, models.size() - 1)];
    s.model = *lib.model(s.model_id);
    s.hardware_id = hardware[in.ConsumeIntegralInRange<std::size_t>(0, hardware.size() - 1)];
    s.cluster = *lib.hardware(s.hardware_id);
    if (in.ConsumeBool()) { // a custom variant of the model
        s.model_id.clear();
        s.model.layers = in.ConsumeIntegralInRange(1, 160);
        if (in.ConsumeBool())
            s.model.kv_heads = pick(in, {1, 2, 4, 8, s.model.heads});
    }
    ParallelPlan& p = s.parallel;
    p.tp = pick(in, {1, 2, 4, 8, 16, 3, 64});
    p.pp = in.ConsumeIntegralInRange(1, 32);
    p.dp = in.ConsumeIntegralInRange(1, 128);
    p.cp = pick(in, {1, 1, 2, 4, 3});
    p.ep = pick(in, {1, 1, 2, 4, 8, 16, 64});
    p.sequence_parallel = in.ConsumeBool();
    p.virtual_stages = in.ConsumeIntegralInRange(1, 8);
    p.schedule = static_cast<Schedule>(in.ConsumeIntegralInRange(0, 5));
    p.zero = in.ConsumeIntegralInRange(0, 3);
    p.shard_group = in.ConsumeBool() ? 0 : in.ConsumeIntegralInRange(1, 128);
    p.offload_optimizer = in.ConsumeBool();
    if (in.ConsumeBool()) {
        p.first_stage_layers = in.ConsumeIntegralInRange(0, 40);
        p.last_stage_layers = in.ConsumeIntegralInRange(0, 40);
    }
    TrainingSettings& t = s.training;
    t.seq_len = pick(in, {512, 2048, 4096, 8192, 32768, 131072, 1, 3});
    t.micro_batch = in.ConsumeIntegralInRange(1, 8);
    const int m = in.ConsumeIntegralInRange(1, 512);
    t.global_batch =
        in.ConsumeBool() ? m * t.micro_batch * p.dp : in.ConsumeIntegralInRange(1, 1000000000);
    t.precision = static_cast<Precision>(in.ConsumeIntegralInRange(0, 1));
    t.recompute = static_cast<Recompute>(in.ConsumeIntegralInRange(0, 2));
    t.flash_attention = in.ConsumeBool();
    t.optimizer = static_cast<Optimizer>(in.ConsumeIntegralInRange(0, 1));
    t.framework = static_cast<Framework>(in.ConsumeIntegralInRange(0, 2));
    t.attention_kernel = static_cast<AttentionKernel>(in.ConsumeIntegralInRange(0, 3));
    t.cross_entropy = static_cast<CrossEntropy>(in.ConsumeIntegralInRange(0, 3));
    t.optimizer_impl = static_cast<OptimizerImpl>(in.ConsumeIntegralInRange(0, 3));
    s.gpus = in.ConsumeBool() ? p.gpus() : in.ConsumeIntegralInRange(1, 4096);
    return s;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 1)
        return 0;
    Scenario s;
    if ((data[0] & 1) == 0) {
        try {
            s = parseScenario(std::string_view(reinterpret_cast<const char*>(data + 1), size - 1),
                              "fuzz.paralens.json");
        } catch (const InputError&) {
            return 0;
        }
    } else {
        FuzzedDataProvider in(data + 1, size - 1);
        s = decode(in);
    }
    const std::vector<ValidationError> errors = validate(s);
    if (isRunnable(s) != errors.empty()) {
        std::fprintf(stderr, "isRunnable disagrees with validate:\n%s\n",
                     scenarioToText(s).c_str());
        std::abort();
    }
    if (!errors.empty()) {
        for (const ValidationError& v : errors)
            if (v.rule.empty() || v.fields.empty() || v.message.empty())
                std::abort();
        return 0;
    }
    Estimate e;
    PipelineTimeline timeline;
    try {
        evaluate(s, e, nullptr, ModelConstants{}, (data[0] & 2) ? &timeline : nullptr);
    } catch (const std::exception& ex) {
        std::fprintf(stderr, "evaluate threw on a valid scenario: %s\n%s\n", ex.what(),
                     scenarioToText(s).c_str());
        std::abort();
    }
    if (const std::string broken = invariants::check(s, e); !broken.empty()) {
        std::fprintf(stderr, "invariant broken: %s\n%s\n", broken.c_str(),
                     scenarioToText(s).c_str());
        std::abort();
    }
    return 0;
}
