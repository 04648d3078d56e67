// SPDX-License-Identifier: GPL-3.0-or-later
// The built-in measured-runs files (resources/reference/*.paralens-runs.json): they load, every
// run is predicted, each file holds the rows of its source tables, and one torchtitan row's
// tokens/s converts to TFLOP/s and MFU by the FLOP count worked out here by hand.
#include "core/accuracy.h"
#include "core/error.h"
#include "core/evaluate.h"
#include "core/reference.h"

#include <QTest>
#include <array>

#include <cmath>
#include <map>

using namespace paralens;

namespace {

bool near(double a, double b, double rel = 1e-9)
{
    return std::abs(a - b) <= rel * std::max(std::abs(a), std::abs(b));
}

// "reference/x.paralens-runs.json:12" -> "reference/x.paralens-runs.json"
std::string fileOf(const MeasuredRun& r)
{
    return r.origin.substr(0, r.origin.find(':'));
}

const MeasuredRun& byName(const RunSet& set, const std::string& name)
{
    for (const MeasuredRun& r : set.runs)
        if (r.name == name)
            return r;
    throw InputError("", "no run named " + name);
}

} // namespace

class TestReferenceRuns : public QObject
{
    Q_OBJECT
private slots:
    void everyFileHoldsItsTablesRows()
    {
        const RunSet set = builtinReferenceRuns();
        std::map<std::string, int> count;
        for (const MeasuredRun& r : set.runs)
            ++count[fileOf(r)];
        // Rows of the source tables, counted there (docs/cli.md lists the sources).
        const std::map<std::string, int> expected = {
            {"reference/korthikanti2022.json", 2},
            {"reference/llama3-2024-table4.json", 3},
            {"reference/narayanan2021-table1.json", 10},
            {"reference/narayanan2021-table2.json", 12},
            {"reference/narayanan2021-sec5.json", 1},       // §5.1: GPT-3 175B on 1,024 A100
            {"reference/megatron-core-moe-readme.json", 1}, // Mixtral 8x7B, 468 TFLOP/s
            // Dec 2024 Tables 1-6: 3 + 4 + 3 + 2 + 2 + 4; June 2025: 2 models x 3 precisions x
            // (vanilla, async) TP.
            {"reference/torchtitan-h100.paralens-runs.json", 18 + 12},
            {"reference/torchtitan-h200-trainy.paralens-runs.json", 2}, // 4 and 8 nodes
            // torchao's float8 training tables: H100 bf16, tensorwise, rowwise; MI300X bf16,
            // tensorwise, rowwise_with_gw_hp, rowwise; B200 bf16, tensorwise, two mxfp8, rowwise.
            {"reference/torchao-float8-training.paralens-runs.json", 3 + 4 + 5},
            // H100 tables: large scale 18, 8-64 GPUs 52, FP8 7.
            {"reference/mosaic-llm-foundry-h100.paralens-runs.json", 18 + 52 + 7},
            // A100 80GB table: 61 rows less the two pure-bf16 70B rows.
            {"reference/mosaic-llm-foundry-a100.paralens-runs.json", 61 - 2},
            {"reference/megatron-lm-h100-weak-scaling.paralens-runs.json", 9}, // 1.7B ... 462B
            {"reference/nemo-24.07-h100-fp8.paralens-runs.json", 12}, // every pre-training row
            // 26.04.01: 70B H100 FP8 and GB200 MXFP8, 405B H100 FP8 and GB200 FP8; 25.11: 8B on
            // B200 and GB200, 405B on B200.
            {"reference/megatron-bridge-llama3.paralens-runs.json", 4 + 3},
            {"reference/megascale-2024-table2.paralens-runs.json", 8}, // the Megatron-LM rows
            {"reference/bloom-176b.paralens-runs.json", 1},
            {"reference/mtnlg-530b.paralens-runs.json", 3}, // 280, 350, 420 DGX A100 servers
            // Qwen3 30B and 235B (Megatron-Bridge 26.04.01), DeepSeek-V3 (DeepSeek's report;
            // Megatron-Bridge 25.09 on 1,024 H100).
            {"reference/moe-published.json", 3 + 1},
            // NVIDIA dgxc-benchmarking v25.01: 8B and 70B at their smallest and largest scale,
            // 405B at 32 (proxy), 576 and 2,304 GPUs; BF16 and FP8 each.
            {"reference/dgxc-benchmarking-llama3.1-h100.paralens-runs.json", 2 * (2 + 2 + 3)},
            // IBM fms-fsdp README at 5e522b4 (blog Table 1): Llama 2 7B/13B/34B/70B on 128 A100
            // and 96 H100.
            {"reference/fms-fsdp-ibm.paralens-runs.json", 4 * 2},
            // OLMo-core README: 7e58d1289's four models in BF16 and FP8, 41400c46f's 1B in both,
            // c2be557a1's MFU table (1B, 7B, 13B).
            {"reference/olmo-core-h100.paralens-runs.json", 4 * 2 + 2 + 3},
            // AMD's MI325X 8-node rows as AMD-AGI/Primus's projection blog prints them: Llama 3.1
            // 8B and 70B in FP8, 70B in BF16 (12 of 80 layers recomputed).
            {"reference/amd-instinct-training.paralens-runs.json", 3},
            // Megatron-Bridge 25.09 / 25.11 rows whose plan, batch or FP8 recipe the file above
            // does not hold: 70B and 405B on H100, MXFP8 8B on GB200 and B200, 405B on B200,
            // 70B and 405B on GB200 (25.09).
            {"reference/megatron-bridge-llama3-25.09-25.11.paralens-runs.json", 2 + 3 + 2},
            // dgxc-benchmarking GPT-3 175B: 128 and 2,048 H100, BF16 and FP8, releases v25.04
            // (VP 6) and v25.01 (VP 12).
            {"reference/dgxc-benchmarking-gpt3-175b-h100.paralens-runs.json", 2 * 2 * 2},
            // dgxc-benchmarking v25.04 (NeMo 25.02.01) on H100, the plans v25.01 did not run:
            // 70B FP8 t4 p8 v5 at 64 and 2,048 GPUs; 405B BF16 and FP8, the 8-layer proxy on 32
            // GPUs and t8 p8 c2 v8 at 512 and 2,048.
            {"reference/dgxc-benchmarking-llama3.1-h100-v25.04.paralens-runs.json", 2 + 2 * 3},
            // dgxc-benchmarking Nemotron-4 15B and 340B, smallest and largest scale, BF16 and FP8:
            // v25.01 (both models), v25.02 (15B), v25.04 (both) on H100; v25.05 340B on GB200,
            // weak and strong scaling.
            {"reference/dgxc-benchmarking-nemotron.paralens-runs.json", 8 + 4 + 8 + 8},
            // dgxc-benchmarking MoE: Grok-1 314B on 8 (proxy) and 2,048 H100 (v25.04) and on 128
            // and 512 GB200 (v25.05), BF16 and FP8; DeepSeek-V3 BF16 on 1,024 H100 and 128 and
            // 512 GB200 (v25.05).
            {"reference/dgxc-benchmarking-moe.paralens-runs.json", 4 + 4 + 3},
            // dgxc-benchmarking v25.05 Llama 3.1 405B on 128 and 512 GB200, BF16 and FP8.
            {"reference/dgxc-benchmarking-llama3.1-405b-gb200.paralens-runs.json", 2 * 2},
            // A torchtitan blog on 8 GB200 (Jan 2026): Table 1's 21 Llama 3.1 8B rows (the
            // Qwen3-32B rows' recompute mode is not determinable).
            {"reference/torchtitan-gb200-blog.paralens-runs.json", 21},
            // NeMo's long-sequence tables, the With-CP configurations: Llama 2 7B FP8 on 4 to
            // 1,024 H100 at 4K to 1M tokens (NeMo 24.03.01); Llama 3 8B FP8 on 2 to 256 B200 at
            // 8K to 1M (NeMo 25.04.rc2).
            {"reference/nemo-long-sequence.paralens-runs.json", 9 + 8},
            // torchtitan on AWS p5 (700 W H100 SXM), Llama 3 8B on 32 GPUs: the AWS blog's four
            // rows (Oct 2024) and awsome-distributed-training's eager row (Mar 2025).
            {"reference/aws-torchtitan-p5-h100.paralens-runs.json", 4 + 1},
            // IBM fms-fsdp's torch.compile table (ed74fd5): the 7B rows on both clusters (the
            // larger models' selective fraction is not given).
            {"reference/fms-fsdp-ibm-compile.paralens-runs.json", 2},
            // NeMo 2.0's performance summaries, the table parts the stored pages hold: 25.02 on
            // DGX-B200 (7 of 8 rows; Mixtral-8x22B's cells are swapped), 25.04 on DGX-GB200 (6:
            // not Mixtral-8x22B, nor Nemotron-340B, which dgxc-benchmarking holds), 25.07 on
            // DGX-GB200 (2: Llama 3 8B and the 70B Megatron-FSDP plan).
            {"reference/nemo-25.02-performance-summary.paralens-runs.json", 7},
            {"reference/nemo-25.04-performance-summary.paralens-runs.json", 6},
            {"reference/nemo-25.07-performance-summary.paralens-runs.json", 2},
            // Megatron-LM's Llama example README, its FP8 table: 8B, 70B and 405B on H100.
            {"reference/megatron-lm-llama-example.paralens-runs.json", 3},
            // Megatron-Bridge MoE rows (DeepSeek-V3, Qwen3-30B-A3B, Qwen3-235B-A22B): 26.04.01 on
            // B200/GB200 (6), 25.11 on GB200 (3; its H100/B200 rows are a regression its
            // neighbours contradict), 25.09 Qwen3 with token drop (9).
            {"reference/megatron-bridge-moe.paralens-runs.json", 6 + 3 + 9},
            // AMD's MLPerf Training v5.1 Llama 3.1 8B submissions, 8 MI355X and 8 MI350X (the
            // partners' runs of the same configuration are not repeated).
            {"reference/amd-mlperf-training-v5.1.paralens-runs.json", 2},
            // Megatron-Bridge 26.02-26.08: each plan's latest container only, where no later
            // row of it is held already (405B GB200 and H100 at 26.06, DeepSeek-V3 GB200 at
            // 26.08 and B200 at 26.04, Qwen3-30B H100 at 26.02.01 and 26.06, Qwen3-235B GB200
            // at 26.02.01).
            {"reference/megatron-bridge-26.paralens-runs.json", 7},
        };
        for (const auto& [file, n] : expected)
            QVERIFY2(
                count[file] == n,
                qPrintable(
                    QString("%1: %2 runs, expected %3").arg(file.c_str()).arg(count[file]).arg(n)));
        QCOMPARE(count.size(), expected.size());
    }

    void mtNlgStepTimesGiveThePapersTflops()
    {
        // Smith et al. 2022 §2.4: 60.1, 50.2 and 44.4 s per iteration on 280, 350 and 420
        // servers are 126, 121 and 113 TFLOP/s per GPU. Narayanan Eq. 3 (with recompute) on
        // B 1920, s 2048, L 105, h 20480, V 50257 gives them back to the paper's rounding.
        const RunSet set = builtinReferenceRuns();
        const double B = 1920, s = 2048, L = 105, h = 20480, V = 50257;
        const double flops = 96 * B * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h));
        const std::array<std::pair<const char*, double>, 3> rows{{
            {"MT-NLG 530B, 2240 A100, t8 p35 d8, gb 1920", 126},
            {"MT-NLG 530B, 2800 A100, t8 p35 d10, gb 1920", 121},
            {"MT-NLG 530B, 3360 A100, t8 p35 d12, gb 1920", 113},
        }};
        for (const auto& [name, tflops] : rows) {
            const MeasuredRun& r = byName(set, name);
            QCOMPARE(r.measured.front().metric, RunMetric::StepSeconds);
            const double perGpu = flops / (r.measured.front().value * r.scenario.gpus) / 1e12;
            QVERIFY2(std::abs(perGpu - tflops) < 1.0, name);
            QCOMPARE(r.scenario.parallel.tp * r.scenario.parallel.pp * r.scenario.parallel.dp,
                     r.scenario.gpus);
        }
    }

    void dgxcStepTimesGiveTheReadmesTokens()
    {
        // The READMEs' throughput rows are 8,192 x GBS / step time, printed to the token: the
        // step times and batches read in must give them back.
        const RunSet set = builtinReferenceRuns();
        const std::array<std::pair<const char*, double>, 4> rows{{
            {"Llama 3.1 8B, 128 H100, t1 p1 c2, gb 2048, BF16 (NeMo 24.09)", 1280704},
            {"Llama 3.1 70B, 64 H100, t4 p4 c2 v5, gb 128, FP8 (NeMo 24.09)", 95239},
            {"Llama 3.1 405B (7 layers), 32 H100, t8 p1 c2, gb 126, BF16 (NeMo 24.09)", 116632},
            {"Llama 3.1 405B, 2304 H100, t8 p9 c2 v7, gb 1008, FP8 (NeMo 24.09)", 668626},
        }};
        for (const auto& [name, tokens] : rows) {
            const MeasuredRun& r = byName(set, name);
            QCOMPARE(r.measured.front().metric, RunMetric::StepSeconds);
            const Scenario& s = r.scenario;
            const double perStep = double(s.training.seq_len) * s.training.global_batch;
            QVERIFY2(std::abs(perStep / r.measured.front().value - tokens) <= 1.0, name);
            const ParallelPlan& p = s.parallel;
            QCOMPARE(p.tp * p.pp * p.cp * p.dp, s.gpus);
        }
    }

    // Runs that ran fit: Megatron-Bridge's and Qwen's FP8 runs with FP8 parameters (their
    // recipes' fp8_param_gather) on 80 GB H100, whose FP8 linears save 1-byte inputs
    // (docs/formulas.md §3.2); with bf16 inputs they read 82.0-83.1 GiB.
    void measuredFp8RunsFit()
    {
        const RunSet set = builtinReferenceRuns();
        for (const char* name :
             {"LLAMA3_70B DGX-H100 x64, FP8, t4 p8 c1 v5, mb 1 gb 256 (26.04.01)",
              "Qwen3-235B-A22B, 256 H100, FP8, t2 p8 v4 ep32 etp1, alltoall + EP overlap"}) {
            const Scenario& s = byName(set, name).scenario;
            QVERIFY2(s.training.fp8_param_gather, name);
            Estimate e;
            evaluate(s, e);
            QVERIFY2(e.fits, name);
        }
    }

    // The PyTorch FSDP tables print tokens per second per GPU; the files hold the job's rate.
    // Each figure below is read off its table (fms-fsdp README 5e522b4, OLMo-core READMEs
    // 7e58d1289 and 41400c46f), not off the files.
    void pytorchFsdpRowsAreTheTablesPerGpuFigures()
    {
        const RunSet set = builtinReferenceRuns();
        const std::array<std::pair<const char*, double>, 6> rows{{
            {"Llama 2 7B, 128 A100, HSDP, No AC, mb 2, s 4096", 3700},
            {"Llama 2 70B, 128 A100, FSDP, Full AC, mb 2, s 4096", 370},
            {"Llama 2 7B, 96 H100, HSDP, No AC, mb 2, s 4096", 7500},
            {"Llama 2 70B, 96 H100, FSDP, Full AC, mb 2, s 4096", 800},
            {"OLMo2-13B, 8 H100, HSDP (shard 8), compile, fp8, mb 1 gb 2048 (README 7e58d1289)",
             5500},
            {"OLMo-1B, 8 H100, FSDP, compile, bf16, mb 4 gb 1024 (README 41400c46f)", 44000},
        }};
        for (const auto& [name, perGpu] : rows) {
            const MeasuredRun& r = byName(set, name);
            QCOMPARE(r.measured.front().metric, RunMetric::TokensPerSecond);
            QVERIFY2(near(r.measured.front().value / r.scenario.gpus, perGpu), name);
            // One micro-batch per step in both codebases' loops: the global batch is the
            // micro-batch on every GPU.
            QVERIFY2(r.scenario.training.global_batch % r.scenario.gpus == 0, name);
        }
        // OLMo-core's float8 rows ran faster than their BF16 twins, and so does the model.
        for (const char* model : {"OLMo2-1B", "OLMo2-7B", "Llama3-8B", "OLMo2-13B"}) {
            const std::string tail = ", 8 H100, HSDP (shard 8), compile, ";
            const std::string size = std::string(model) == "OLMo2-1B"    ? "mb 8 gb 1024"
                                     : std::string(model) == "OLMo2-13B" ? "mb 1 gb 2048"
                                                                         : "mb 2 gb 1024";
            const MeasuredRun& bf =
                byName(set, model + tail + "bf16, " + size + " (README 7e58d1289)");
            const MeasuredRun& f8 =
                byName(set, model + tail + "fp8, " + size + " (README 7e58d1289)");
            QVERIFY2(f8.measured.front().value > bf.measured.front().value, model);
            Estimate eb, e8;
            evaluate(bf.scenario, eb);
            evaluate(f8.scenario, e8);
            QVERIFY2(e8.throughput.tokens_per_second > eb.throughput.tokens_per_second, model);
        }
    }

    void everyRunIsPredicted()
    {
        const RunSet set = builtinReferenceRuns();
        const AccuracyReport rep = validateRuns(set.runs, ModelConstants{});
        QCOMPARE(rep.summary.failed, 0);
        for (const RunResult& row : rep.rows)
            QVERIFY2(row.failure.empty() && std::isfinite(row.predicted) && row.predicted > 0,
                     (row.name + ": " + row.failure).c_str());
        // Every run names where its figure comes from; every file says what it assumes.
        for (const MeasuredRun& r : set.runs)
            QVERIFY2(!r.source.empty(), r.name.c_str());
        int runsFiles = 0;
        for (const std::string& a : set.assumptions)
            runsFiles += a.find(".paralens-runs.json: ") != std::string::npos;
        QVERIFY(runsFiles >= 1);
    }

    void tokensConvertToFlopsByHand()
    {
        // torchtitan Dec 2024 Table 1, FSDP eager: 5,762 tokens/s per GPU on 8 GPUs.
        const RunSet set = builtinReferenceRuns();
        const MeasuredRun& r = byName(set, "Llama 3.1 8B, 8 H100, FSDP 8, eager");
        QCOMPARE(r.measured.front().metric, RunMetric::TokensPerSecond);
        QCOMPARE(r.measured.front().value, 5762.0 * 8);
        QCOMPARE(r.measured.back().metric, RunMetric::PeakMemoryGib);
        QCOMPARE(r.measured.back().value, 82.4);

        // Llama 3 8B: L 32, h 4096, 8 KV heads of 128, SwiGLU ffn 14336, vocabulary 128,256.
        const double L = 32, h = 4096, kv = 8 * 128, ffn = 14336, V = 128256, s = 8192;
        const double weights = L * (h * (h + 2 * kv) + h * h + 3 * h * ffn) + h * V;
        const double full = 6 * weights + 12 * s * h * L; // per token, whole s^2 score matrix
        const double causal = full - 6 * s * h * L;       // half the score and A·V matmuls
        QVERIFY(near(full, 57.91e9, 1e-3));

        // The benchmark says this model reaches 33 % (eager) to 39 % (compiled) MFU of the SXM
        // peak: 5,762 and 6,667 tokens/s per GPU at the full count over 989 TF.
        QVERIFY(std::abs(5762 * full / 989e12 - 0.337) < 0.001);
        QVERIFY(std::abs(6667 * full / 989e12 - 0.390) < 0.001);

        // The report converts the predicted step the same way.
        Estimate e;
        evaluate(r.scenario, e);
        const auto predict = [&](RunMetric m, MeasuredFlops f) {
            return predictMeasurement(r.scenario, {m, 1, f, MemoryKind::Reserved}, e);
        };
        const double tokens = predict(RunMetric::TokensPerSecond, MeasuredFlops::Full);
        QVERIFY(near(tokens, 16 * 8192 / e.time.step_seconds));
        QVERIFY(near(predict(RunMetric::TflopsPerGpu, MeasuredFlops::Full),
                     tokens * full / 8 / 1e12, 1e-6));
        QVERIFY(near(predict(RunMetric::TflopsPerGpu, MeasuredFlops::Causal),
                     tokens * causal / 8 / 1e12, 1e-6));
        // MFU against this cluster's own peak: NVIDIA's datasheet H100 SXM5 (989.4 TF at 700 W)
        // and NVL (835.5 TF at 400 W) interpolated log-linearly in power to the 500 W cap.
        const double peak500 =
            989.4 * std::pow(835.5 / 989.4, std::log(7.0 / 5) / std::log(7.0 / 4));
        QVERIFY(std::abs(peak500 - 893.5) < 0.5);
        QCOMPARE(r.scenario.cluster.gpu.bf16_tflops, 893.5);
        QVERIFY(
            near(predict(RunMetric::Mfu, MeasuredFlops::Full), tokens * full / 8 / 893.5e12, 1e-6));
    }

    void publishedFlopRatesFollowFromTheTokensByHand()
    {
        // NeMo 24.07, Llama 2 7B on 8 H100: 16,934 tokens/s and 780 model TFLOP/s per GPU. The
        // stored tokens/s times Megatron's full count (worked out here) gives the published rate.
        const RunSet set = builtinReferenceRuns();
        const MeasuredRun& r =
            byName(set, "LLAMA2-7B, 8 H100, t1 p1 c1 v1, mb 1 gb 128, s 4096, FP8");
        QCOMPARE(r.measured.front().value, 16934.0 * 8);
        const double L = 32, h = 4096, ffn = 11008, V = 32000, s = 4096;
        const double full = 6 * (L * (4 * h * h + 3 * h * ffn) + h * V) + 12 * s * h * L;
        QVERIFY(std::abs(r.measured.front().value / 8 * full / 1e12 / 780 - 1) < 0.002);

        // Megatron-Bridge 26.04.01, Llama 3.1 405B on 1,024 H100: 328 tokens/s and 827 TFLOP/s
        // per GPU, by the causal count (half the score matrix).
        const MeasuredRun& b =
            byName(set, "LLAMA3.1_405B DGX-H100 x1024, FP8, t8 p8 c2 v8, mb 1 gb 1536 (26.04.01)");
        QCOMPARE(b.measured.front().value, 328.0 * 1024);
        const double L4 = 126, h4 = 16384, kv4 = 8 * 128, f4 = 53248, V4 = 128256, s4 = 8192;
        const double w4 = L4 * (2 * h4 * h4 + 2 * h4 * kv4 + 3 * h4 * f4) + h4 * V4;
        const double causal4 = 6 * w4 + 6 * s4 * h4 * L4;
        QVERIFY(std::abs(328 * causal4 / 1e12 / 827 - 1) < 0.002);
        // The recipe's split: the embedding and the loss count as pipeline layers.
        QCOMPARE(b.scenario.parallel.first_stage_layers, 15);
        QCOMPARE(b.scenario.parallel.last_stage_layers, 15);
    }

    void fileSourceAndNotesApplyToItsRuns()
    {
        const char* text = R"({"source": "paper, Table 9", "notes": "assumed: mb 1",
            "runs": [
              {"name": "a", "scenario": {"model": "llama3-8b", "hardware": "h100-sxm", "gpus": 8,
               "parallel": {"dp": 8}, "training": {"seq_len": 4096, "global_batch": 8}},
               "measured": {"step_seconds": 1.5}},
              {"name": "b", "scenario": {"model": "llama3-8b", "hardware": "h100-sxm", "gpus": 8,
               "parallel": {"dp": 8}, "training": {"seq_len": 4096, "global_batch": 8}},
               "measured": {"step_seconds": 1.6}, "source": "own log"}]})";
        const RunSet set =
            parseRunsText(text, "t.paralens-runs.json", "", PresetLibrary::builtin());
        QCOMPARE(set.runs.size(), std::size_t(2));
        QCOMPARE(set.runs[0].source, std::string("paper, Table 9"));
        QCOMPARE(set.runs[1].source, std::string("own log")); // a run's own source wins
        QCOMPARE(set.assumptions, std::vector<std::string>{"assumed: mb 1"});
        // Still strict: a file-level key of the wrong type or an unknown one is an error.
        QVERIFY_THROWS_EXCEPTION(InputError, parseRunsText(R"({"source": 3, "runs": []})", "t.json",
                                                           "", PresetLibrary::builtin()));
        QVERIFY_THROWS_EXCEPTION(InputError, parseRunsText(R"({"sources": "x", "runs": []})",
                                                           "t.json", "", PresetLibrary::builtin()));
    }

    void publicationFilesAreNotReadAsRunsFiles()
    {
        QVERIFY(isRunsFile("reference/torchtitan-h100.paralens-runs.json"));
        QVERIFY(!isRunsFile("reference/narayanan2021-table1.json"));
        QVERIFY(!isRunsFile("paralens-runs.json.bak"));
        for (const ReferenceRun& r : referenceRuns())
            QVERIFY(!isRunsFile(r.file));
    }
};

QTEST_APPLESS_MAIN(TestReferenceRuns)
#include "test_reference_runs.moc"
