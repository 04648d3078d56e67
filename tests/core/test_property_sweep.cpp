// SPDX-License-Identifier: GPL-3.0-or-later
// Property sweep: every preset model × every preset cluster × a grid of plans.
// Valid plans give finite, non-negative figures whose totals equal their parts
// (estimate_invariants.h); invalid plans give named errors; more micro-batches never raise the
// bubble overhead; a higher ZeRO stage never raises the model-state bytes of any stage.

#include "core/evaluate.h"
#include "core/presets.h"
#include "core/scenario_io.h"
#include "core/validate.h"
#include "estimate_invariants.h"

#include <QElapsedTimer>
#include <QTest>

#include <array>
#include <string>

using namespace paralens;

namespace {

Scenario base(const std::string& model, const std::string& hardware)
{
    const PresetLibrary& lib = PresetLibrary::builtin();
    Scenario s = defaultScenario();
    s.model_id = model;
    s.model = *lib.model(model);
    s.hardware_id = hardware;
    s.cluster = *lib.hardware(hardware);
    s.training.seq_len = 4096;
    return s;
}

void setPlan(Scenario& s, int tp, int pp, int dp, int cp, int ep, int microbatches)
{
    ParallelPlan& p = s.parallel;
    p.tp = tp;
    p.pp = pp;
    p.dp = dp;
    p.cp = cp;
    p.ep = ep;
    p.sequence_parallel = tp > 1;
    s.gpus = p.gpus();
    s.training.global_batch = microbatches * s.training.micro_batch * dp;
}

std::string describe(const Scenario& s)
{
    return scenarioToText(s);
}

double modelStates(const StageMemory& m)
{
    return m.parameters + m.gradients + m.optimizer_states;
}

constexpr std::array kSchedules{Schedule::GPipe, Schedule::OneF1B, Schedule::Interleaved1F1B,
                                Schedule::ZBH1,  Schedule::ZBV,    Schedule::DualPipeV};

} // namespace

class TestPropertySweep : public QObject
{
    Q_OBJECT
private slots:
    void validPlansKeepInvariantsInvalidOnesAreNamed()
    {
        const PresetLibrary& lib = PresetLibrary::builtin();
        QVERIFY(lib.modelIds().size() >= 10);
        QVERIFY(lib.hardwareIds().size() >= 9);
        QElapsedTimer timer;
        timer.start();
        int valid = 0, invalid = 0, i = 0;
        Estimate e;
        for (const std::string& model : lib.modelIds())
            for (const std::string& hw : lib.hardwareIds()) {
                Scenario s = base(model, hw);
                for (int tp : {1, 2, 8})
                    for (int pp : {1, 2, 4})
                        for (int cp : {1, 2})
                            for (int ep : {1, 8})
                                for (int dp : {1, 8}) {
                                    // The other dimensions cycle through their values so every
                                    // combination of model and cluster sees all of them.
                                    ++i;
                                    s.parallel.schedule = kSchedules[std::size_t(i % 6)];
                                    s.parallel.virtual_stages =
                                        s.parallel.schedule == Schedule::Interleaved1F1B ? 2
                                        : (s.parallel.schedule == Schedule::ZBV ||
                                           s.parallel.schedule == Schedule::DualPipeV)
                                            ? 2
                                            : 1;
                                    s.parallel.zero = (i / 6) % 4;
                                    s.parallel.offload_optimizer = (i / 24) % 5 == 0;
                                    s.training.recompute = static_cast<Recompute>((i / 3) % 3);
                                    s.training.micro_batch = 1 + (i / 7) % 2;
                                    s.training.precision = static_cast<Precision>((i / 11) % 2);
                                    s.training.framework = static_cast<Framework>((i / 13) % 3);
                                    setPlan(s, tp, pp, dp, cp, ep, 4 * pp);
                                    const auto errors = validate(s);
                                    QCOMPARE(isRunnable(s), errors.empty());
                                    if (!errors.empty()) {
                                        ++invalid;
                                        for (const ValidationError& v : errors) {
                                            QVERIFY2(!v.rule.empty() && !v.message.empty(),
                                                     describe(s).c_str());
                                            QVERIFY2(!v.fields.empty(), v.rule.c_str());
                                            for (const std::string& f : v.fields)
                                                QVERIFY2(!f.empty(), v.rule.c_str());
                                        }
                                        continue;
                                    }
                                    ++valid;
                                    evaluate(s, e);
                                    const std::string broken = invariants::check(s, e);
                                    QVERIFY2(broken.empty(), (broken + "\n" + describe(s)).c_str());
                                }
            }
        qInfo("%d valid and %d invalid plans in %lld ms", valid, invalid,
              static_cast<long long>(timer.elapsed()));
        // Both sides of the sweep are exercised, not just one.
        QVERIFY(valid > 1000);
        QVERIFY(invalid > 1000);
    }

    void moreMicrobatchesNeverRaiseTheBubbleOverhead()
    {
        const PresetLibrary& lib = PresetLibrary::builtin();
        int chains = 0;
        Estimate e;
        for (const std::string& model : lib.modelIds())
            for (const std::string& hw : lib.hardwareIds())
                for (Schedule sched : kSchedules)
                    for (int pp : {2, 4}) {
                        Scenario s = base(model, hw);
                        s.parallel.schedule = sched;
                        s.parallel.virtual_stages = sched == Schedule::OneF1B ||
                                                            sched == Schedule::GPipe ||
                                                            sched == Schedule::ZBH1
                                                        ? 1
                                                        : 2;
                        s.training.micro_batch = 1;
                        double previous = -1;
                        int steps = 0;
                        for (int k : {1, 2, 4, 8, 16}) {
                            setPlan(s, 8, pp, 1, 1, 1, k * pp);
                            if (!isRunnable(s))
                                continue;
                            evaluate(s, e);
                            const double overhead = e.time.bubble_overhead;
                            if (previous >= 0)
                                QVERIFY2(overhead <= previous * (1 + 1e-9) + 1e-12,
                                         (std::to_string(overhead) + " > " +
                                          std::to_string(previous) +
                                          " at m = " + std::to_string(k * pp) + "\n" + describe(s))
                                             .c_str());
                            previous = overhead;
                            ++steps;
                        }
                        chains += steps >= 2;
                    }
        QVERIFY2(chains > 100, std::to_string(chains).c_str());
    }

    void higherZeroStageNeverRaisesModelStateBytes()
    {
        const PresetLibrary& lib = PresetLibrary::builtin();
        int chains = 0;
        Estimate e;
        for (const std::string& model : lib.modelIds())
            for (const std::string& hw : lib.hardwareIds())
                for (Framework fw : {Framework::Megatron, Framework::DeepSpeed, Framework::FSDP})
                    for (int pp : {1, 4}) {
                        Scenario s = base(model, hw);
                        s.training.framework = fw;
                        std::vector<double> previous;
                        int steps = 0;
                        for (int zero = 0; zero <= 3; ++zero) {
                            s.parallel.zero = zero;
                            setPlan(s, 8, pp, 8, 1, s.model.isMoe() ? 8 : 1, 2 * pp);
                            if (!isRunnable(s))
                                continue;
                            evaluate(s, e);
                            std::vector<double> states;
                            for (const StageMemory& m : e.stages)
                                states.push_back(modelStates(m));
                            if (!previous.empty())
                                for (std::size_t r = 0; r < states.size(); ++r)
                                    QVERIFY2(states[r] <= previous[r] * (1 + 1e-12),
                                             ("stage " + std::to_string(r) + " at zero " +
                                              std::to_string(zero) + "\n" + describe(s))
                                                 .c_str());
                            previous = states;
                            ++steps;
                        }
                        chains += steps >= 2;
                    }
        QVERIFY2(chains > 100, std::to_string(chains).c_str());
    }
};

QTEST_GUILESS_MAIN(TestPropertySweep)
#include "test_property_sweep.moc"
