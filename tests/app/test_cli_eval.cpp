// SPDX-License-Identifier: GPL-3.0-or-later
// `paralens eval` and `paralens reference` as a user's script runs them: the binary, its exit
// code, and the JSON keys of docs/cli.md.
#include "cli_runner.h"
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <set>
#include <string>

namespace {

using paralens::testcli::Result;
using paralens::testcli::run;

std::set<std::string> keys(const nlohmann::json& j)
{
    std::set<std::string> k;
    for (auto it = j.begin(); it != j.end(); ++it)
        k.insert(it.key());
    return k;
}

const QString kExample = QStringLiteral(PARALENS_SOURCE_DIR "/resources/examples/"
                                                            "llama3-70b-64xh100.paralens.json");

} // namespace

class TestCliEval : public QObject
{
    Q_OBJECT
private slots:
    void jsonHasExactlyDesignKeys()
    {
        const Result r = run({"eval", kExample, "--json"});
        QCOMPARE(r.code, 0);
        const auto j = nlohmann::json::parse(r.out.toStdString());
        using S = std::set<std::string>;
        QVERIFY(keys(j) == (S{"gpus", "fits", "memory", "time", "throughput", "warnings"}));
        QVERIFY(keys(j["memory"]) == (S{"capacity_bytes", "peak_bytes", "peak_allocated_bytes",
                                        "peak_reserved_bytes", "stages"}));
        QVERIFY(keys(j["time"]) == (S{"step_seconds", "compute_seconds", "bubble_fraction",
                                      "bubble_overhead", "comm"}));
        QVERIFY(keys(j["time"]["comm"]) == (S{"tp", "cp", "ep", "pp", "dp"}));
        QVERIFY(keys(j["throughput"]) ==
                (S{"tokens_per_second", "model_flops_per_step", "tflops_per_gpu", "mfu", "hfu"}));
        QVERIFY(j["warnings"].is_array());
        QCOMPARE(j["gpus"].get<int>(), 64);
        const auto& stages = j["memory"]["stages"];
        QCOMPARE(int(stages.size()), 4); // pp 4 in the example
        double peak = 0;
        for (const auto& st : stages) {
            QVERIFY(keys(st) ==
                    (S{"stage", "parameters", "gradients", "optimizer_states", "activations",
                       "comm_buffers", "runtime_overhead", "total", "inflight_microbatches",
                       "embedding", "lm_head", "mtp_layers", "stored_layers"}));
            // The example runs interleaved 1F1B (looped): embedding on stage 0, LM head on the
            // last.
            QCOMPARE(st["embedding"].get<bool>(), st["stage"].get<int>() == 0);
            QCOMPARE(st["lm_head"].get<bool>(), st["stage"].get<int>() == 3);
            const double sum = st["parameters"].get<double>() + st["gradients"].get<double>() +
                               st["optimizer_states"].get<double>() +
                               st["activations"].get<double>() + st["comm_buffers"].get<double>() +
                               st["runtime_overhead"].get<double>();
            QVERIFY(std::abs(sum - st["total"].get<double>()) <= 1e-6 * sum);
            peak = std::max(peak, st["total"].get<double>());
        }
        QCOMPARE(j["memory"]["peak_bytes"].get<double>(), peak);
        // PyTorch's allocated peak leaves out the CUDA context and NCCL; reserved adds the cache.
        const double allocated = j["memory"]["peak_allocated_bytes"].get<double>();
        QVERIFY(allocated > 0 && allocated < peak);
        QVERIFY(j["memory"]["peak_reserved_bytes"].get<double>() >= allocated);
        QVERIFY(j["throughput"]["tokens_per_second"].get<double>() > 0);
        QVERIFY(j["time"]["step_seconds"].get<double>() > 0);
    }

    void tableIsReadable()
    {
        const Result r = run({"eval", kExample});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.contains("Step time"));
        QVERIFY(r.out.contains(" ms"));
        QVERIFY(r.out.contains("GiB"));
        QVERIFY(r.out.contains("MFU"));
    }

    void planLineNamesRecomputeModules()
    {
        // Megatron's module list beside "selective recompute" when it is not the default.
        QTemporaryDir dir;
        const QString path = dir.filePath("m.paralens.json");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"model":"llama3-8b","hardware":"h100-sxm","gpus":8,
                    "parallel":{"tp":1,"pp":1,"dp":8},
                    "training":{"recompute":"selective","recompute_modules":["mlp","layernorm"]}})");
        f.close();
        Result r = run({"eval", path});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains("selective recompute (layernorm, mlp),"), qPrintable(r.out));
        r = run({"eval", kExample});
        QVERIFY(!r.out.contains("recompute ("));
        // Full recompute of some layers names the count.
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(R"({"model":"llama3-8b","hardware":"h100-sxm","gpus":8,
                    "parallel":{"tp":1,"pp":1,"dp":8},
                    "training":{"recompute":"full","recompute_num_layers":12}})");
        f.close();
        r = run({"eval", path});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains("full recompute (12 layers a chunk),"), qPrintable(r.out));
    }

    void badInputNamesTheProblem()
    {
        Result r = run({"eval", "/nonexistent/x.paralens.json"});
        QVERIFY(r.code != 0);
        QVERIFY(r.err.startsWith("error: "));
        QVERIFY(r.err.contains("x.paralens.json"));

        QTemporaryDir dir;
        const QString path = dir.filePath("bad.paralens.json");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"model":"llama3-70b","hardware":"h100-sxm","gpus":24,
                    "parallel":{"tp":3,"pp":1,"dp":8}})");
        f.close();
        r = run({"eval", path, "--json"});
        QVERIFY(r.code != 0);
        QVERIFY(r.err.startsWith("error: "));
        QVERIFY(r.err.split('\n').front().contains("parallel.tp"));

        r = run({"eval"});
        QVERIFY(r.code != 0);
        QVERIFY(r.err.startsWith("error: "));
    }

    void referenceReportsMeanError()
    {
        const Result r = run({"reference", "--json"});
        QCOMPARE(r.code, 0);
        const auto j = nlohmann::json::parse(r.out.toStdString());
        QVERIFY(j["count"].get<int>() >= 25);
        double sum = 0;
        for (const auto& run : j["runs"]) {
            const double p = run["predicted"].get<double>(), pub = run["published"].get<double>();
            QVERIFY(p > 0);
            QVERIFY(std::abs(run["error"].get<double>() - (p - pub) / pub) < 1e-9);
            sum += std::abs(run["error"].get<double>());
        }
        QVERIFY(std::abs(j["mean_absolute_error"].get<double>() - sum / j["count"].get<int>()) <
                1e-9);
        const Result t = run({"reference"});
        QCOMPARE(t.code, 0);
        QVERIFY(t.out.contains("Mean absolute error"));
    }
};

QTEST_GUILESS_MAIN(TestCliEval)
#include "test_cli_eval.moc"
