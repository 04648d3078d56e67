// SPDX-License-Identifier: GPL-3.0-or-later
// `paralens validate` as a user's script runs it, on runs files and CSVs the test writes: the
// table and summary, the JSON keys, failed runs listed, and exit codes.
#include "cli_runner.h"
#include "core/evaluate.h"
#include "core/scenario_io.h"

#include <QDir>
#include <QFile>
#include <QTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <set>

using paralens::testcli::Result;

namespace {

std::set<std::string> keys(const nlohmann::json& j)
{
    std::set<std::string> k;
    for (auto it = j.begin(); it != j.end(); ++it)
        k.insert(it.key());
    return k;
}

void write(const QString& path, const QByteArray& text)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(text);
}

const char* kScenario = R"({"model": "llama3-8b", "hardware": "h100-sxm", "gpus": 8,
  "parallel": {"tp": 2, "pp": 1, "dp": 4},
  "training": {"seq_len": 4096, "micro_batch": 1, "global_batch": 64}})";

const char* kCsvHeader = "# GPUs,global batch,micro batch,hidden size,attention heads,# layers,"
                         "sequence length,tensor parallelism,data parallelism,"
                         "pipeline parallelism,iteration time (ms)\n";

} // namespace

class TestCliValidate : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_runs;
    double m_step = 0;

private slots:
    void initTestCase()
    {
        write(m_dir.filePath("eight.paralens.json"), kScenario);
        m_step = paralens::evaluate(paralens::parseScenario(kScenario, "s")).time.step_seconds;
        QVERIFY(m_step > 0);
        // "slow" measured 1.25 × the prediction (−20 %), "bad" cannot run (tp 3 on 32 heads).
        const std::string runs =
            R"({"runs": [
  {"name": "slow", "path": "eight.paralens.json",
   "measured": {"step_seconds": )" +
            std::to_string(m_step * 1.25) + R"(}, "source": "test"},
  {"name": "bad", "scenario": {"model": "llama3-8b", "hardware": "h100-sxm", "gpus": 24,
   "parallel": {"tp": 3, "pp": 1, "dp": 8}}, "measured": {"step_seconds": 1}}
]})";
        m_runs = m_dir.filePath("t.paralens-runs.json");
        write(m_runs, QByteArray::fromStdString(runs));
    }

    void jsonHasTheDesignKeys()
    {
        const Result r = paralens::testcli::run({"validate", m_runs, "--json"});
        QCOMPARE(r.code, 0);
        const auto j = nlohmann::json::parse(r.out.toStdString());
        using S = std::set<std::string>;
        QVERIFY(keys(j) == (S{"summary", "groups", "stacks", "runs"}));
        QVERIFY(keys(j["summary"]) == (S{"runs", "failed", "mape", "median_ape", "worst"}));
        QVERIFY(keys(j["summary"]["worst"]) == (S{"name", "error"}));
        QCOMPARE(j["summary"]["runs"].get<int>(), 1);
        QCOMPARE(j["summary"]["failed"].get<int>(), 1);
        QCOMPARE(j["runs"].size(), std::size_t(2));
        const auto& slow = j["runs"][0];
        QVERIFY(keys(slow) == (S{"name", "metric", "measured", "predicted", "error"}));
        QCOMPARE(slow["metric"].get<std::string>(), std::string("step_seconds"));
        // std::to_string kept 6 decimals of the measured time: the error is −20 % to ~1e-5.
        QVERIFY(std::abs(slow["error"].get<double>() + 0.2) < 1e-4);
        QVERIFY(std::abs(j["summary"]["mape"].get<double>() - 0.2) < 1e-4);
        const auto& bad = j["runs"][1];
        QVERIFY(keys(bad) == (S{"name", "metric", "measured", "failed"}));
        QVERIFY(bad["failed"].get<std::string>().find("parallel.tp") != std::string::npos);
        // One stack: Megatron (the default framework) on Hopper, the failed run left out. A
        // step measured 1.25 x the prediction: the model says it runs 25 % faster.
        QCOMPARE(j["stacks"].size(), std::size_t(1));
        const auto& st = j["stacks"][0];
        QVERIFY(keys(st) == (S{"framework", "gpu_family", "runs", "mape", "mean_signed"}));
        QCOMPARE(st["framework"].get<std::string>(), std::string("megatron"));
        QCOMPARE(st["gpu_family"].get<std::string>(), std::string("Hopper"));
        QCOMPARE(st["runs"].get<int>(), 1);
        QVERIFY(std::abs(st["mape"].get<double>() - 0.2) < 1e-4);
        QVERIFY(std::abs(st["mean_signed"].get<double>() - 0.25) < 1e-4);
    }

    void textHasTableSummaryAndFailures()
    {
        const Result r = paralens::testcli::run({"validate", m_runs});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.contains("slow"));
        QVERIFY(r.out.contains("-20.0 %"));
        QVERIFY(r.out.contains("bad"));
        QVERIFY(r.out.contains("failed: "));
        QVERIFY(r.out.contains("1 runs predicted, 1 failed"));
        QVERIFY(r.out.contains("Mean absolute error (MAPE) over 1 runs: 20.0 %"));
        QVERIFY(r.out.contains("worst: slow, -20.0 %"));
        QVERIFY(r.out.contains("By stack (framework on GPU family)"));
        QVERIFY(r.out.contains("megatron on Hopper: 1 runs, MAPE 20.0 %, +25.0 %"));
    }

    void csvWithHardware()
    {
        const QString csv = m_dir.filePath("m.csv");
        write(csv, QByteArray(kCsvHeader) + "8,64,8,1024,16,24,1024,1,4,2,372\n"
                                            "8,64,8,1024,16,24,1024,2,2,2,300\n"
                                            "8,64,8,1024,16,24,1024,4,1,2,250\n");
        const QString file =
            QStringLiteral(PARALENS_SOURCE_DIR "/resources/examples/vtrain-a100-cluster.json");
        for (const QString& hw : {file, QStringLiteral("a100-80gb")}) {
            const Result r = paralens::testcli::run({"validate", csv, "--hardware", hw});
            QVERIFY2(r.code == 0, qPrintable(r.err));
            QVERIFY(r.out.contains("Assumptions:"));
            QVERIFY(r.out.contains("vocabulary 50257"));
            QVERIFY(r.out.contains("3 runs predicted, 0 failed"));
            QVERIFY(r.out.contains("GPT L24 h1024 a16 on 8 GPUs: 3 runs, Spearman"));
            QVERIFY(r.out.contains("the plan ranked best by the model"));
        }
        const Result j = paralens::testcli::run(
            {"validate", csv, "--hardware", "a100-80gb", "--json", "--group-by", "none"});
        QCOMPARE(j.code, 0);
        const auto doc = nlohmann::json::parse(j.out.toStdString());
        QCOMPARE(doc["groups"].size(), std::size_t(1));
        const auto& g = doc["groups"][0];
        QVERIFY(keys(g) == (std::set<std::string>{"key", "runs", "spearman", "best_plan_rank",
                                                  "best_plan_slowdown"}));
        QCOMPARE(g["runs"].get<int>(), 3);
        const int rank = g["best_plan_rank"].get<int>();
        QVERIFY(rank >= 1 && rank <= 3);
        QVERIFY(g["best_plan_slowdown"].get<double>() >= 0);
        // Two files make one report.
        const Result both =
            paralens::testcli::run({"validate", csv, m_runs, "--hardware", "a100-80gb", "--json"});
        QCOMPARE(both.code, 0);
        QCOMPARE(nlohmann::json::parse(both.out.toStdString())["runs"].size(), std::size_t(5));
    }

    void unreadableInputFails()
    {
        const QString broken = m_dir.filePath("broken.paralens-runs.json");
        write(broken, "{\"runs\": [{\"name\": \"a\", \"scenario\": {},\n \"measured\": "
                      "{\"step_seconds\": -2}}]}");
        Result r = paralens::testcli::run({"validate", broken});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.startsWith("error: " + broken + ":2:"), qPrintable(r.err));

        const QString csv = m_dir.filePath("n.csv");
        write(csv, QByteArray(kCsvHeader) + "8,16,8,1024,16,24,1024,1,4,2,372\n");
        r = paralens::testcli::run({"validate", csv});
        QCOMPARE(r.code, 1);
        QVERIFY(r.err.contains("--hardware"));
        r = paralens::testcli::run({"validate", csv, "--hardware", "no-such-gpu"});
        QCOMPARE(r.code, 1);
        QVERIFY(r.err.contains("no-such-gpu"));
        r = paralens::testcli::run(
            {"validate", m_dir.filePath("absent.csv"), "--hardware", "a100-80gb"});
        QCOMPARE(r.code, 1);
        QVERIFY(r.err.contains("cannot open"));
    }

    void usageErrors()
    {
        QCOMPARE(paralens::testcli::run({"validate"}).code, 2);
        QCOMPARE(paralens::testcli::run({"validate", m_runs, "--group-by", "colour"}).code, 2);
        const Result h = paralens::testcli::run({"validate", "--help"});
        QCOMPARE(h.code, 0);
        QVERIFY(h.out.contains("paralens validate"));
        QVERIFY(h.out.contains("--hardware"));
        QVERIFY(paralens::testcli::run({"--help"}).out.contains("validate"));
    }

    void referenceIsTheSameReport()
    {
        const Result r = paralens::testcli::run({"reference", "--json"});
        QCOMPARE(r.code, 0);
        const auto j = nlohmann::json::parse(r.out.toStdString());
        for (const char* k : {"summary", "groups", "runs"})
            QVERIFY(j.contains(k));
        QCOMPARE(j["summary"]["failed"].get<int>(), 0);
        QCOMPARE(j["summary"]["runs"].get<int>(), j["count"].get<int>());
        // Every speed figure belongs to exactly one stack: the stacks' counts add up to the
        // rows that are not peak memory.
        int speed = 0, stacked = 0;
        for (const auto& row : j["runs"])
            speed += row["metric"].get<std::string>() != "peak_memory_gib";
        for (const auto& st : j["stacks"])
            stacked += st["runs"].get<int>();
        QCOMPARE(stacked, speed);
        QVERIFY(j["stacks"].size() >= 6); // Megatron, DeepSpeed, FSDP; A100 to Instinct
        const Result t = paralens::testcli::run({"reference"});
        QCOMPARE(t.code, 0);
        QVERIFY(t.out.contains("Mean absolute error (MAPE)"));
        QVERIFY(t.out.contains("Narayanan et al. 2021"));
        QVERIFY(t.out.contains("fsdp on Hopper: "));
    }
};

QTEST_GUILESS_MAIN(TestCliValidate)
#include "test_cli_validate.moc"
