// SPDX-License-Identifier: GPL-3.0-or-later
// paralens search as scripts see it: the built binary run as a subprocess.
#include "cli_runner.h"
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

namespace {

using paralens::testcli::Result;
using paralens::testcli::run;

const QStringList kProblem{"search",   "--model",   "llama3-8b", "--hardware",
                           "h100-sxm", "--gpus",    "16",        "--global-batch",
                           "32",       "--seq-len", "4096"};

} // namespace

class TestCliSearch : public QObject
{
    Q_OBJECT
private slots:
    void jsonKeys()
    {
        const Result r = run(kProblem + QStringList{"--top", "5", "--json"});
        QCOMPARE(r.code, 0);
        QVERIFY(r.err.isEmpty());
        const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
        for (const char* key : {"evaluated", "feasible", "seconds", "results"})
            QVERIFY2(j.contains(key), key);
        QVERIFY(j["evaluated"].toDouble() > 1000);
        QVERIFY(j["feasible"].toDouble() <= j["evaluated"].toDouble());
        QVERIFY(j["seconds"].toDouble() >= 0);
        const QJsonArray results = j["results"].toArray();
        QCOMPARE(results.size(), 5);
        double previous = 1e300;
        for (const auto& v : results) {
            const QJsonObject o = v.toObject();
            for (const char* key :
                 {"parallel", "training", "tokens_per_second", "mfu", "peak_bytes", "step_seconds"})
                QVERIFY2(o.contains(key), key);
            const QJsonObject p = o["parallel"].toObject();
            // tp·pp·dp·cp = 16 GPUs; within the 80 GiB of an H100; best first.
            QCOMPARE(p["tp"].toInt() * p["pp"].toInt() * p["dp"].toInt() * p["cp"].toInt(), 16);
            QVERIFY(o["peak_bytes"].toDouble() <= 80.0 * 1073741824.0);
            QCOMPARE(o["training"].toObject()["global_batch"].toInt(), 32);
            QCOMPARE(o["training"].toObject()["seq_len"].toInt(), 4096);
            const double tps = o["tokens_per_second"].toDouble();
            QVERIFY(tps <= previous);
            previous = tps;
            // tokens/s · step = tokens per step = 32 · 4096.
            QVERIFY(qAbs(tps * o["step_seconds"].toDouble() - 32.0 * 4096) < 1e-6 * 32 * 4096);
        }
    }

    void pinsRespected()
    {
        const Result r =
            run(kProblem + QStringList{"--tp", "4", "--pp", "2", "--zero", "1", "--recompute",
                                       "full", "--top", "20", "--json"});
        QCOMPARE(r.code, 0);
        const QJsonArray results =
            QJsonDocument::fromJson(r.out.toUtf8()).object()["results"].toArray();
        QVERIFY(!results.isEmpty());
        for (const auto& v : results) {
            const QJsonObject p = v.toObject()["parallel"].toObject();
            QCOMPARE(p["tp"].toInt(), 4);
            QCOMPARE(p["pp"].toInt(), 2);
            QCOMPARE(p["zero"].toInt(), 1);
            QCOMPARE(v.toObject()["training"].toObject()["recompute"].toString(), QString("full"));
        }
    }

    void readableTable()
    {
        const Result r = run(kProblem + QStringList{"--top", "3"});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.contains("tokens/s"));
        QVERIFY(r.out.contains("Pareto front"));
        QVERIFY(r.out.contains("plans evaluated"));
        // Header + 3 ranked rows.
        QVERIFY(r.out.contains(QRegularExpression("\\n +3 +\\d")));
        QVERIFY(!r.out.contains(QRegularExpression("\\n +4 +\\d")));
    }

    void badInput()
    {
        Result r = run({"search", "--model", "llama3-8b", "--hardware", "h100-sxm", "--gpus", "8"});
        QCOMPARE(r.code, 2);
        QVERIFY(r.err.startsWith("error: ") && r.err.contains("--global-batch"));
        r = run({"search", "--model", "nope", "--hardware", "h100-sxm", "--gpus", "8",
                 "--global-batch", "8"});
        QCOMPARE(r.code, 1);
        QVERIFY(r.err.startsWith("error: --model"));
        r = run({"search", "--model", "llama3-8b", "--hardware", "h100-sxm", "--gpus", "12",
                 "--global-batch", "8"});
        QCOMPARE(r.code, 1);
        QVERIFY(r.err.startsWith("error: gpus"));
        r = run(kProblem + QStringList{"--tp", "zero"});
        QCOMPARE(r.code, 1);
        QVERIFY(r.err.startsWith("error: --tp"));
        r = run(kProblem + QStringList{"--schedule", "2f2b"});
        QCOMPARE(r.code, 1);
        QVERIFY(r.err.startsWith("error: --schedule"));
        r = run(kProblem + QStringList{"--frobnicate"});
        QCOMPARE(r.code, 2);
        QCOMPARE(r.err.count("error: "), 1);
    }
};

QTEST_GUILESS_MAIN(TestCliSearch)
#include "test_cli_search.moc"
