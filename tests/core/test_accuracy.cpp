// SPDX-License-Identifier: GPL-3.0-or-later
// validateRuns and spearman against hand-computed figures: errors of runs whose "measured" value
// is the model's own prediction scaled by a known factor, textbook rank correlations, the rank of
// the model's best plan in a group whose measurements the test chose.
#include "core/accuracy.h"
#include "core/accuracy_plot.h"
#include "core/evaluate.h"
#include "core/gpu_family.h"
#include "core/kernel_time.h"
#include "core/reference.h"
#include "core/validate.h"
#include "test_scenarios.h"

#include <QTest>

#include <cmath>
#include <set>

using namespace paralens;
using namespace paralens::testmodels;

namespace {

// GPT 1.7B of Narayanan Table 1 on 8 A100 (tp 2, dp 4): runnable and quick to evaluate.
Scenario gptOn8(int tp = 2)
{
    Scenario s = scenario(gpt(24, 2304, 24), a100_80gb(), tp, 1, 8 / tp, 64, 2048);
    s.training.recompute = Recompute::Full;
    return s;
}

MeasuredRun run(const std::string& name, const Scenario& s, RunMetric metric, double value,
                MeasuredFlops flops = MeasuredFlops::Full)
{
    MeasuredRun r;
    r.name = name;
    r.scenario = s;
    r.measured.push_back({metric, value, flops, MemoryKind::Allocated});
    return r;
}

bool near(double a, double b, double rel = 1e-9)
{
    return std::abs(a - b) <= rel * std::max(std::abs(a), std::abs(b));
}

} // namespace

class TestAccuracy : public QObject
{
    Q_OBJECT
private slots:
    void spearmanTextbook()
    {
        // Wikipedia "Spearman's rank correlation coefficient", IQ against hours of TV per week:
        // Σd² = 194, ρ = 1 − 6·194 / (10·(10² − 1)) = −29/165.
        const std::vector<double> iq{106, 100, 86, 101, 99, 103, 97, 113, 112, 110};
        const std::vector<double> tv{7, 27, 2, 50, 28, 29, 20, 12, 6, 17};
        QVERIFY(near(spearman(iq, tv), -29.0 / 165.0));
        QVERIFY(near(spearman(tv, iq), -29.0 / 165.0));
    }

    void spearmanWithTies()
    {
        // x ranks 1, 2.5, 2.5, 4; y ranks 1, 3, 2, 4. Pearson of the ranks:
        // Σ dx·dy = 4.5, Σ dx² = 4.5, Σ dy² = 5 → 4.5 / √22.5 = 3/√10.
        const std::vector<double> x{1, 2, 2, 3}, y{1, 3, 2, 4};
        QVERIFY(near(spearman(x, y), 3 / std::sqrt(10.0)));
    }

    void spearmanEdges()
    {
        const std::vector<double> a{1, 2, 3, 4}, up{10, 20, 300, 4000}, down{9, 7, 5, 1},
            flat{2, 2, 2, 2};
        QVERIFY(near(spearman(a, up), 1));
        QVERIFY(near(spearman(a, down), -1));
        QCOMPARE(spearman(a, flat), 0.0);
        QCOMPARE(spearman(std::vector<double>{1}, std::vector<double>{2}), 0.0);
        QCOMPARE(spearman(std::vector<double>{}, std::vector<double>{}), 0.0);
    }

    void knownErrors()
    {
        // Measured = predicted × 1.25 for a time, × 0.8 for a rate: −20 % and +25 % exactly.
        const Scenario s = gptOn8();
        QVERIFY(isRunnable(s));
        const Estimate e = evaluate(s);
        std::vector<MeasuredRun> runs{
            run("slow", s, RunMetric::StepSeconds, e.time.step_seconds * 1.25),
            run("rate", s, RunMetric::TokensPerSecond, e.throughput.tokens_per_second * 0.8)};
        const AccuracyReport rep = validateRuns(runs, ModelConstants{});
        QCOMPARE(int(rep.rows.size()), 2);
        QVERIFY(near(rep.rows[0].error, -0.2));
        QVERIFY(near(rep.rows[1].error, 0.25));
        QVERIFY(near(rep.rows[0].predicted, e.time.step_seconds));
        QCOMPARE(rep.summary.runs, 2);
        QCOMPARE(rep.summary.failed, 0);
        QVERIFY(near(rep.summary.mape, 0.225));
        QVERIFY(near(rep.summary.median_ape, 0.225)); // mean of the two middle values
        QCOMPARE(rep.summary.worst_name, std::string("rate"));
        QVERIFY(near(rep.summary.worst_error, 0.25));
        // The breakdown is the estimate's.
        QVERIFY(near(rep.rows[0].step_seconds, e.time.step_seconds));
        QVERIFY(near(rep.rows[0].compute_seconds, e.time.compute_seconds));
        QVERIFY(near(rep.rows[0].comm_seconds, e.time.exposed.total()));
    }

    void medianOfOdd()
    {
        const Scenario s = gptOn8();
        const double step = evaluate(s).time.step_seconds;
        // Errors −50 %, +100 %, +25 %: |e| sorted 0.25, 0.5, 1 → median 0.5, mean 7/12.
        std::vector<MeasuredRun> runs{run("a", s, RunMetric::StepSeconds, step * 2),
                                      run("b", s, RunMetric::StepSeconds, step / 2),
                                      run("c", s, RunMetric::StepSeconds, step / 1.25)};
        const AccuracySummary sum = validateRuns(runs, ModelConstants{}).summary;
        QVERIFY(near(sum.median_ape, 0.5));
        QVERIFY(near(sum.mape, 7.0 / 12.0));
        QCOMPARE(sum.worst_name, std::string("b"));
        QVERIFY(near(sum.worst_error, 1.0));
    }

    void flopConventionsByHand()
    {
        // GPT shapes (ffn 4h, MHA, plain MLP): model FLOPs are Korthikanti Eq. 7,
        // 72·B·L·s·h²·(1 + s/(6h) + V/(12hL)); causal halves the 12·T·s·h·L score term;
        // Narayanan Eq. 3 is 96·B·s·L·h²·(1 + s/(6h) + V/(16Lh)).
        const Scenario s = gptOn8();
        const double B = 64, sq = 2048, L = 24, h = 2304, V = 51200, gpus = 8;
        const double eq7 = 72 * B * L * sq * h * h * (1 + sq / (6 * h) + V / (12 * h * L));
        const double causal = eq7 - 6 * (B * sq) * sq * h * L;
        const double eq3 = 96 * B * sq * L * h * h * (1 + sq / (6 * h) + V / (16 * L * h));
        std::vector<MeasuredRun> runs{
            run("full", s, RunMetric::TflopsPerGpu, 100, MeasuredFlops::Full),
            run("causal", s, RunMetric::TflopsPerGpu, 100, MeasuredFlops::Causal),
            run("eq3", s, RunMetric::TflopsPerGpu, 100, MeasuredFlops::NarayananEq3),
            run("mfu", s, RunMetric::Mfu, 0.5, MeasuredFlops::Full)};
        const AccuracyReport rep = validateRuns(runs, ModelConstants{});
        const double step = rep.rows[0].step_seconds;
        QVERIFY(step > 0);
        QVERIFY(near(rep.rows[0].predicted, eq7 / (step * gpus) / 1e12, 1e-6));
        QVERIFY(near(rep.rows[1].predicted, causal / (step * gpus) / 1e12, 1e-6));
        QVERIFY(near(rep.rows[2].predicted, eq3 / (step * gpus) / 1e12, 1e-6));
        QVERIFY(near(rep.rows[3].predicted, eq7 / (step * gpus) / 1e12 / 312, 1e-6));
    }

    void memoryIsThePeak()
    {
        const Scenario s = gptOn8();
        const Estimate e = evaluate(s);
        std::vector<MeasuredRun> runs{run("mem", s, RunMetric::PeakMemoryGib, 20),
                                      run("reserved", s, RunMetric::PeakMemoryGib, 20)};
        runs[1].measured[0].memory = MemoryKind::Reserved;
        const AccuracyReport rep = validateRuns(runs, ModelConstants{});
        // torch.cuda.max_memory_allocated sees neither the CUDA context nor NCCL's buffers;
        // max_memory_reserved adds what the caching allocator keeps cached.
        QVERIFY(near(rep.rows[0].predicted, e.peak_allocated_bytes / 1073741824.0));
        QVERIFY(near(rep.rows[1].predicted, e.peak_reserved_bytes / 1073741824.0));
        QVERIFY(e.peak_allocated_bytes < e.peak_bytes);
        QVERIFY(e.peak_reserved_bytes >= e.peak_allocated_bytes);
        QVERIFY(rep.groups.empty()); // memory is not a speed: nothing to rank
    }

    void failedRunsAreListed()
    {
        Scenario bad = gptOn8();
        bad.parallel.tp = 5; // 24 heads are not divisible by 5; 5·1·1 ≠ 8 GPUs
        bad.parallel.dp = 1;
        const Scenario good = gptOn8();
        const double step = evaluate(good).time.step_seconds;
        std::vector<MeasuredRun> runs{run("bad", bad, RunMetric::StepSeconds, 1.0),
                                      run("good", good, RunMetric::StepSeconds, step)};
        const AccuracyReport rep = validateRuns(runs, ModelConstants{});
        QCOMPARE(int(rep.rows.size()), 2);
        QCOMPARE(rep.rows[0].name, std::string("bad"));
        QVERIFY(!rep.rows[0].failure.empty());
        // The message is validate()'s.
        QVERIFY(!validate(bad).empty());
        QVERIFY(rep.rows[0].failure.find(validate(bad).front().message) != std::string::npos);
        QCOMPARE(rep.rows[0].measured, 1.0);
        QVERIFY(rep.rows[1].failure.empty());
        QCOMPARE(rep.summary.runs, 1);
        QCOMPARE(rep.summary.failed, 1);
        QVERIFY(rep.summary.mape < 1e-12); // the good run was measured as predicted
    }

    void bestPlanRankByHand()
    {
        // Four plans of one model on 8 GPUs. Sorted by the model's predicted speed A > B > C > D,
        // they are given measured steps 1.1, 1.0, 0.9, 1.3 s (same tokens per step, so speed is
        // 1/step). Measured order: C (0.9) > B > A (1.1) > D: the model's best plan A is measured
        // rank 3, 1.1/0.9 − 1 = 22.2 % slower than C. Ranks (ascending speed) predicted D1 C2 B3
        // A4, measured D1 A2 B3 C4: Σd² = 8, ρ = 1 − 6·8/(4·15) = 0.2.
        std::vector<Scenario> plans;
        for (int tp : {1, 2, 4, 8})
            plans.push_back(gptOn8(tp));
        std::vector<std::pair<double, std::size_t>> bySpeed;
        for (std::size_t i = 0; i < plans.size(); ++i) {
            plans[i].model.name = "same model";
            QVERIFY(isRunnable(plans[i]));
            bySpeed.push_back({evaluate(plans[i]).time.step_seconds, i});
        }
        std::sort(bySpeed.begin(), bySpeed.end()); // fastest predicted first
        for (std::size_t i = 1; i < bySpeed.size(); ++i)
            QVERIFY(bySpeed[i].first > bySpeed[i - 1].first); // distinct predictions
        const double measured[] = {1.1, 1.0, 0.9, 1.3};
        const char* names[] = {"A", "B", "C", "D"};
        std::vector<MeasuredRun> runs;
        for (std::size_t k = 0; k < 4; ++k)
            runs.push_back(
                run(names[k], plans[bySpeed[k].second], RunMetric::StepSeconds, measured[k]));
        const AccuracyReport rep = validateRuns(runs, ModelConstants{});
        QCOMPARE(int(rep.groups.size()), 1);
        const GroupSummary& g = rep.groups[0];
        QCOMPARE(g.key, std::string("same model on 8 GPUs"));
        QCOMPARE(g.runs, 4);
        QCOMPARE(g.best_plan_rank, 3);
        QVERIFY(near(g.best_plan_slowdown, 1.1 / 0.9 - 1));
        QVERIFY(near(g.spearman, 0.2));
        QCOMPARE(g.best_plan, std::string("A"));
        QCOMPARE(g.measured_best, std::string("C"));
    }

    void groupsNeedTwoRunsAndFollowTheKey()
    {
        const Scenario a = gptOn8(2), b = gptOn8(4);
        Scenario other = gptOn8(2);
        other.model.name = "another";
        std::vector<MeasuredRun> runs{run("a", a, RunMetric::StepSeconds, 1),
                                      run("b", b, RunMetric::StepSeconds, 2),
                                      run("c", other, RunMetric::StepSeconds, 1)};
        runs[0].scenario.model.name = runs[1].scenario.model.name = "gpt";
        auto rep = validateRuns(runs, ModelConstants{});
        QCOMPARE(int(rep.groups.size()), 1); // "another" has one run only
        QCOMPARE(rep.groups[0].key, std::string("gpt on 8 GPUs"));
        rep = validateRuns(runs, ModelConstants{}, nullptr, GroupBy::None);
        QCOMPARE(int(rep.groups.size()), 1);
        QCOMPARE(rep.groups[0].runs, 3);
        rep = validateRuns(runs, ModelConstants{}, nullptr, GroupBy::Gpus);
        QCOMPARE(rep.groups[0].key, std::string("8 GPUs"));
        // Runs of different batch sizes rank by tokens per second, not by step time: twice the
        // batch in 1.5× the time is the faster plan.
        Scenario big = a;
        big.training.global_batch *= 2;
        std::vector<MeasuredRun> batches{run("small", a, RunMetric::StepSeconds, 1.0),
                                         run("big", big, RunMetric::StepSeconds, 1.5)};
        batches[1].scenario.model.name = batches[0].scenario.model.name;
        const auto g = validateRuns(batches, ModelConstants{}).groups;
        QCOMPARE(int(g.size()), 1);
        QCOMPARE(g[0].measured_best, std::string("big"));
    }

    void groupByNames()
    {
        for (GroupBy g : {GroupBy::ModelAndGpus, GroupBy::Model, GroupBy::Gpus, GroupBy::Hardware,
                          GroupBy::Source, GroupBy::None})
            QCOMPARE(parseGroupBy(toString(g)), std::optional<GroupBy>(g));
        QVERIFY(!parseGroupBy("plan"));
        QCOMPARE(metricName(RunMetric::TokensPerSecond), std::string_view("tokens_per_second"));
    }

    void gpuFamiliesByName()
    {
        QCOMPARE(gpuFamily("A100-SXM4-80GB"), std::string_view("A100"));
        QCOMPARE(gpuFamily("H100 96GB HBM2e 500W"), std::string_view("Hopper"));
        QCOMPARE(gpuFamily("NVIDIA H200"), std::string_view("Hopper"));
        QCOMPARE(gpuFamily("GB200"), std::string_view("Blackwell"));
        QCOMPARE(gpuFamily("MI325X"), std::string_view("Instinct"));
        QCOMPARE(gpuFamily("V100-SXM2-32GB"), std::string_view("other"));
    }

    // The evidence the built-in runs give a plan: the speed rows of its framework on its GPU
    // family, whatever the model. Four rows by hand, one peak-memory row that must not count.
    void stackAccuracyFollowsFrameworkAndGpuFamily()
    {
        auto runOn = [](Framework fw, const char* gpu) {
            MeasuredRun r;
            r.scenario.training.framework = fw;
            r.scenario.cluster.gpu.name = gpu;
            return r;
        };
        const std::vector<MeasuredRun> runs = {
            runOn(Framework::FSDP, "H100-SXM5-80GB"), runOn(Framework::FSDP, "H200"),
            runOn(Framework::Megatron, "H100-SXM5-80GB"), runOn(Framework::FSDP, "A100-SXM4-80GB"),
            runOn(Framework::FSDP, "H100-SXM5-80GB")};
        auto row = [](std::size_t i, RunMetric m, double measured, double predicted, double step) {
            RunResult r;
            r.metric = m;
            r.measured = measured;
            r.predicted = predicted;
            r.error = (predicted - measured) / measured;
            r.step_seconds = step;
            r.run_index = i;
            return r;
        };
        AccuracyReport rep;
        // Tokens/s 20 % and 10 % high (the model is that much fast); a step 5 % short (fast by
        // 1 / 0.95 − 1); tokens/s 10 % low; a memory row.
        rep.rows = {row(0, RunMetric::TokensPerSecond, 100, 120, 1.0),
                    row(1, RunMetric::TokensPerSecond, 100, 110, 2.0),
                    row(2, RunMetric::StepSeconds, 1.0, 0.95, 0.95),
                    row(3, RunMetric::TokensPerSecond, 100, 90, 3.0),
                    row(4, RunMetric::PeakMemoryGib, 50, 80, 1.0)};
        Scenario s;
        s.training.framework = Framework::FSDP;
        s.cluster.gpu.name = "H100 96GB HBM2e 500W";
        SimilarAccuracy a = stackAccuracy(rep, runs, s);
        QCOMPARE(a.runs, 2);
        QVERIFY(near(a.mape, 0.15));
        QVERIFY(near(a.mean_fast, 0.15));
        s.training.framework = Framework::Megatron;
        a = stackAccuracy(rep, runs, s);
        QCOMPARE(a.runs, 1);
        QVERIFY(near(a.mape, 0.05));
        QVERIFY(near(a.mean_fast, 1 / 0.95 - 1));
        s.training.framework = Framework::FSDP;
        s.cluster.gpu.name = "A100-SXM4-40GB";
        a = stackAccuracy(rep, runs, s);
        QCOMPARE(a.runs, 1);
        QVERIFY(near(a.mean_fast, -0.1));
        s.training.framework = Framework::DeepSpeed;
        QCOMPARE(stackAccuracy(rep, runs, s).runs, 0);

        // Every stack at once, ordered by framework, then family; the memory row's stack (FSDP
        // on Hopper, run 4) has speed rows of its own, so no stack comes from memory alone.
        const std::vector<StackAccuracy> all = accuracyByStack(rep, runs);
        QCOMPARE(all.size(), std::size_t(3));
        QVERIFY(all[0].framework == Framework::Megatron);
        QCOMPARE(all[0].family, std::string_view("Hopper"));
        QCOMPARE(all[0].accuracy.runs, 1);
        QVERIFY(all[1].framework == Framework::FSDP);
        QCOMPARE(all[1].family, std::string_view("A100"));
        QVERIFY(near(all[1].accuracy.mean_fast, -0.1));
        QCOMPARE(all[2].family, std::string_view("Hopper"));
        QCOMPARE(all[2].accuracy.runs, 2);
        QVERIFY(near(all[2].accuracy.mape, 0.15));
        rep.rows.resize(4);
        rep.rows.push_back(row(4, RunMetric::PeakMemoryGib, 50, 80, 1.0));
        rep.rows.erase(rep.rows.begin(), rep.rows.begin() + 2); // FSDP on Hopper: memory only
        QCOMPARE(accuracyByStack(rep, runs).size(), std::size_t(2));
        QVERIFY(accuracyByStack(AccuracyReport{}, runs).empty());
    }

    void referenceRunsAreOneDataSet()
    {
        const RunSet set = builtinReferenceRuns();
        const auto refs = referenceRuns();
        // The publication files first; the measured-runs files follow (test_reference_runs).
        QVERIFY(set.runs.size() > refs.size());
        std::set<std::string> files; // one note per publication file that has notes
        for (const auto& r : refs)
            if (!r.notes.empty())
                files.insert(r.file);
        QVERIFY(set.assumptions.size() > files.size());
        QVERIFY(files.size() >= 4);
        const AccuracyReport rep = validateRuns(set.runs, ModelConstants{});
        QCOMPARE(rep.summary.failed, 0);
        Estimate e;
        for (std::size_t i = 0; i < refs.size(); ++i) {
            QCOMPARE(set.runs[i].name, refs[i].name);
            QCOMPARE(set.runs[i].origin, refs[i].file);
            QCOMPARE(set.runs[i].measured.size(), std::size_t(1));
            const Measurement& m = set.runs[i].measured[0];
            evaluate(refs[i].scenario, e);
            if (refs[i].metric == "tokens_per_second_per_gpu") { // compared for the whole job
                const double gpus = refs[i].scenario.gpus;
                QVERIFY(m.metric == RunMetric::TokensPerSecond);
                QCOMPARE(m.value, refs[i].published * gpus);
                QVERIFY(near(rep.rows[i].predicted, predictedMetric(refs[i], e) * gpus));
                continue;
            }
            QCOMPARE(m.metric, refs[i].metric == "mfu" ? RunMetric::Mfu : RunMetric::TflopsPerGpu);
            QCOMPARE(m.value, refs[i].published);
            QVERIFY(near(rep.rows[i].predicted, predictedMetric(refs[i], e)));
            if (refs[i].convention == FlopsConvention::NarayananEq3) {
                // Narayanan Eq. 3 by hand for this row.
                const Scenario& s = refs[i].scenario;
                const double B = s.training.global_batch, sq = s.training.seq_len,
                             L = s.model.layers, h = double(s.model.hidden),
                             V = double(s.model.vocab);
                const double f = 96 * B * sq * L * h * h * (1 + sq / (6 * h) + V / (16 * L * h));
                QVERIFY(
                    near(rep.rows[i].predicted, f / (e.time.step_seconds * s.gpus) / 1e12, 1e-9));
            }
        }
    }
};

QTEST_APPLESS_MAIN(TestAccuracy)
#include "test_accuracy.moc"
