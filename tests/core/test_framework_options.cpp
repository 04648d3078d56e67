// SPDX-License-Identifier: GPL-3.0-or-later
// frameworkOptions() names the framework settings the model reads for a plan: the oracle is
// the step time itself. A setting it calls live changes the step time of some plan; one it
// calls dead changes nothing for that plan.
#include "core/evaluate.h"
#include "core/framework_options.h"
#include "test_scenarios.h"

#include <QTest>

#include <functional>

using namespace paralens;
using namespace paralens::testmodels;

namespace {

double stepSeconds(const Scenario& s)
{
    return evaluate(s).time.step_seconds;
}

/// Whether flipping the setting (`edit`) changes the scenario's step time.
bool matters(const Scenario& s, const std::function<void(Scenario&)>& edit)
{
    Scenario t = s;
    edit(t);
    return stepSeconds(t) != stepSeconds(s);
}

Scenario plan(Framework f, int tp, int zero, Precision p = Precision::BF16)
{
    Scenario s = scenario(llama3_8b(), h100_sxm(), tp, 1, 8 / tp, 64, 8192);
    s.parallel.zero = zero;
    s.training.framework = f;
    s.training.flash_attention = true;
    s.training.precision = p;
    return s;
}

} // namespace

class TestFrameworkOptions : public QObject
{
    Q_OBJECT
private slots:
    void compileOnlyForFsdp()
    {
        auto on = [](Scenario& s) { s.training.compile = true; };
        for (Framework f : {Framework::Megatron, Framework::DeepSpeed}) {
            const Scenario s = plan(f, 1, 1);
            QVERIFY(!frameworkOptions(s).compile);
            QVERIFY(!matters(s, on));
        }
        const Scenario fsdp = plan(Framework::FSDP, 1, 3);
        QVERIFY(frameworkOptions(fsdp).compile);
        QVERIFY(matters(fsdp, on));
    }

    void recomputeModulesOnlyForMegatronSelective()
    {
        // Recomputing the MLP as well (its GEMMs again in the backward) moves the step of a
        // Megatron plan with selective recompute; under full or no recompute the list is not
        // read, and the other frameworks have none.
        auto mlp = [](Scenario& s) {
            s.training.recompute_modules = kRecomputeCoreAttn | kRecomputeMlp;
        };
        Scenario s = plan(Framework::Megatron, 1, 1);
        s.training.recompute = Recompute::Selective;
        QVERIFY(frameworkOptions(s).recompute_modules);
        QVERIFY(matters(s, mlp));
        for (Recompute r : {Recompute::None, Recompute::Full}) {
            s.training.recompute = r;
            QVERIFY(!frameworkOptions(s).recompute_modules);
            QVERIFY(!matters(s, mlp));
        }
        for (Framework f : {Framework::DeepSpeed, Framework::FSDP}) {
            Scenario o = plan(f, 1, 1);
            o.training.recompute = Recompute::Selective;
            QVERIFY(!frameworkOptions(o).recompute_modules);
        }
    }

    void fsdpVersionOnlyWhenFsdpShards()
    {
        auto v1 = [](Scenario& s) { s.training.fsdp_version = 1; };
        const Scenario megatron = plan(Framework::Megatron, 1, 3);
        QVERIFY(!frameworkOptions(megatron).fsdp_version);
        QVERIFY(!matters(megatron, v1));
        const Scenario ddp = plan(Framework::FSDP, 1, 1);
        QVERIFY(!frameworkOptions(ddp).fsdp_version);
        QVERIFY(!matters(ddp, v1));
        for (int zero : {2, 3}) {
            const Scenario s = plan(Framework::FSDP, 1, zero);
            QVERIFY(frameworkOptions(s).fsdp_version);
            QVERIFY(matters(s, v1));
        }
        // Backward prefetch needs gathers in backward (ZeRO 3, resharded after forward; not
        // under PP's default); the reshard policy needs ZeRO 3.
        auto none = [](Scenario& s) {
            s.training.fsdp_backward_prefetch = FsdpBackwardPrefetch::None;
        };
        auto never = [](Scenario& s) {
            s.training.fsdp_reshard_after_forward = ReshardAfterForward::Never;
        };
        const Scenario z2 = plan(Framework::FSDP, 1, 2);
        QVERIFY(!frameworkOptions(z2).fsdp_prefetch);
        QVERIFY(!matters(z2, none));
        QVERIFY(!frameworkOptions(z2).fsdp_reshard);
        QVERIFY(!matters(z2, never));
        const Scenario z3 = plan(Framework::FSDP, 1, 3);
        QVERIFY(frameworkOptions(z3).fsdp_prefetch);
        QVERIFY(matters(z3, none));
        QVERIFY(frameworkOptions(z3).fsdp_reshard);
        QVERIFY(matters(z3, never));
        Scenario kept = z3;
        never(kept);
        QVERIFY(!frameworkOptions(kept).fsdp_prefetch);
        QVERIFY(!matters(kept, none));
    }

    // FP8 parameter gathers: Megatron's FP8 parameters (the DP gather moves 1 byte per linear
    // weight, zero 1 with DP > 1) and FSDP's float8 all-gather (zero 3, tensorwise) move the
    // step time; BF16, DeepSpeed and FSDP's rowwise recipes gather nothing in FP8.
    void fp8ParamsOnlyWhereAGatherMovesFp8()
    {
        auto on = [](Scenario& s) { s.training.fp8_param_gather = true; };
        for (const Scenario& s : {plan(Framework::Megatron, 1, 1, Precision::FP8),
                                  plan(Framework::FSDP, 1, 3, Precision::FP8)}) {
            QVERIFY(frameworkOptions(s).fp8_param_gather);
            QVERIFY(matters(s, on));
        }
        Scenario rowwise = plan(Framework::FSDP, 1, 3, Precision::FP8);
        rowwise.training.fp8_recipe = Fp8Recipe::Rowwise;
        for (const Scenario& s : {plan(Framework::Megatron, 1, 1), rowwise,
                                  plan(Framework::DeepSpeed, 1, 1, Precision::FP8)}) {
            QVERIFY(!frameworkOptions(s).fp8_param_gather);
            QVERIFY(!matters(s, on));
        }
    }

    void fp8RecipeOnlyWithFp8AndTpOverlapOnlyWithTp()
    {
        auto rowwise = [](Scenario& s) { s.training.fp8_recipe = Fp8Recipe::Rowwise; };
        const Scenario bf16 = plan(Framework::Megatron, 2, 1);
        QVERIFY(!frameworkOptions(bf16).fp8_recipe);
        QVERIFY(!matters(bf16, rowwise));
        const Scenario fp8 = plan(Framework::Megatron, 2, 1, Precision::FP8);
        QVERIFY(frameworkOptions(fp8).fp8_recipe);
        QVERIFY(matters(fp8, rowwise));

        auto overlap = [](Scenario& s) { s.parallel.tp_comm_overlap = true; };
        QVERIFY(!frameworkOptions(plan(Framework::Megatron, 1, 1)).tp_comm_overlap);
        QVERIFY(!matters(plan(Framework::Megatron, 1, 1), overlap));
        QVERIFY(frameworkOptions(bf16).tp_comm_overlap);
        QVERIFY(matters(bf16, overlap));
        // Without sequence parallelism there is nothing to split (TP's all-reduces stay).
        Scenario noSp = bf16;
        noSp.parallel.sequence_parallel = false;
        QVERIFY(!frameworkOptions(noSp).tp_comm_overlap);
        QVERIFY(!matters(noSp, overlap));
    }
};

QTEST_APPLESS_MAIN(TestFrameworkOptions)
#include "test_framework_options.moc"
