// SPDX-License-Identifier: GPL-3.0-or-later
// `paralens schedule` as scripts see it: the built binary run as a subprocess. Oracles: every
// op of the schedule present (F, B and W per stage, chunk and micro-batch), no overlap on a
// stage, Megatron's in-flight count on the interleaved example, and the trace-event format.
#include "cli_runner.h"
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <utility>
#include <vector>

namespace {

using paralens::testcli::Result;

// `paralens schedule ARGS...`
Result run(const QStringList& args)
{
    return paralens::testcli::run(QStringList{"schedule"} + args);
}

// llama3-70b on 64 H100: tp 8, pp 4, dp 2, global batch 128 → m = 64 micro-batches.
const QString kExample =
    QStringLiteral(PARALENS_SOURCE_DIR "/resources/examples/llama3-70b-64xh100.paralens.json");

QJsonObject readJson(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

/// The example with another schedule / virtual stages / global batch, written to dir.
QString variant(const QTemporaryDir& dir, const QString& schedule, int v, int globalBatch = 128)
{
    QJsonObject s = readJson(kExample);
    QJsonObject par = s["parallel"].toObject();
    par["schedule"] = schedule;
    par["virtual_stages"] = v;
    s["parallel"] = par;
    QJsonObject tr = s["training"].toObject();
    tr["global_batch"] = globalBatch;
    s["training"] = tr;
    const QString path = dir.filePath(schedule + ".paralens.json");
    QFile f(path);
    f.open(QIODevice::WriteOnly);
    f.write(QJsonDocument(s).toJson());
    return path;
}

bool oneErrorLine(const QString& err, const QString& needle)
{
    const QStringList lines = err.split('\n', Qt::SkipEmptyParts);
    return lines.size() == 1 && lines.front().startsWith("error: ") &&
           lines.front().contains(needle);
}

} // namespace

class TestCliSchedule : public QObject
{
    Q_OBJECT
private slots:
    void textSummary()
    {
        const Result r = run({kExample});
        QCOMPARE(r.code, 0);
        QVERIFY(r.err.isEmpty());
        QVERIFY(r.out.contains("schedule interleaved-1f1b: pp 4 x 5 chunks, 64 micro-batches"));
        QVERIFY(r.out.contains("bubble"));
    }
    void jsonKeysAndOps_data()
    {
        QTest::addColumn<QString>("schedule");
        QTest::addColumn<int>("v");
        QTest::addColumn<int>("passes"); // F, B (+ W)
        QTest::newRow("gpipe") << "gpipe" << 1 << 2;
        QTest::newRow("1f1b") << "1f1b" << 1 << 2;
        QTest::newRow("interleaved") << "interleaved-1f1b" << 5 << 2;
        QTest::newRow("zb-h1") << "zb-h1" << 1 << 3;
        QTest::newRow("zb-v") << "zb-v" << 2 << 3;
        QTest::newRow("dualpipe-v") << "dualpipe-v" << 2 << 3;
    }
    void jsonKeysAndOps()
    {
        QFETCH(QString, schedule);
        QFETCH(int, v);
        QFETCH(int, passes);
        QTemporaryDir dir;
        const Result r = run({variant(dir, schedule, v), "--json"});
        QCOMPARE(r.code, 0);
        const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
        for (const char* k :
             {"schedule", "stages", "microbatches", "virtual_stages", "step_seconds",
              "bubble_fraction", "bubble_overhead", "stage_stats", "ops"})
            QVERIFY2(j.contains(k), k);
        QCOMPARE(j["schedule"].toString(), schedule);
        QCOMPARE(j["stages"].toInt(), 4);
        QCOMPARE(j["microbatches"].toInt(), 64);
        QCOMPARE(j["virtual_stages"].toInt(), v);
        const double bf = j["bubble_fraction"].toDouble();
        QVERIFY(bf > 0 && bf < 1);
        QVERIFY(j["bubble_overhead"].toDouble() > 0);
        QVERIFY(j["step_seconds"].toDouble() > 0);
        const QJsonArray stats = j["stage_stats"].toArray();
        QCOMPARE(stats.size(), 4);
        for (const auto& st : stats)
            for (const char* k :
                 {"stage", "busy_seconds", "idle_seconds", "peak_inflight_microbatches"})
                QVERIFY2(st.toObject().contains(k), k);
        const QJsonArray ops = j["ops"].toArray();
        QCOMPARE(ops.size(), passes * 4 * v * 64);
        std::vector<std::vector<std::pair<double, double>>> perStage(4);
        QSet<QString> seen;
        for (const auto& o : ops) {
            const QJsonObject op = o.toObject();
            const int stage = op["stage"].toInt();
            QVERIFY(stage >= 0 && stage < 4);
            QVERIFY(op["end"].toDouble() >= op["start"].toDouble());
            perStage[std::size_t(stage)].push_back({op["start"].toDouble(), op["end"].toDouble()});
            seen.insert(QString("%1 %2 %3 %4")
                            .arg(op["kind"].toString())
                            .arg(stage)
                            .arg(op["chunk"].toInt())
                            .arg(op["microbatch"].toInt()));
        }
        QCOMPARE(int(seen.size()), int(ops.size())); // each op exactly once
        for (auto& ts : perStage) {
            std::sort(ts.begin(), ts.end());
            for (std::size_t i = 1; i < ts.size(); ++i)
                QVERIFY(ts[i].first + 1e-12 >= ts[i - 1].second);
        }
    }
    // Megatron get_pp_rank_microbatches: rank r holds min(2(p − r − 1) + (v − 1)·p + 1, m·v)
    // chunk-micro-batches (p 4, v 5, m 64).
    void interleavedInflight()
    {
        const Result r = run({kExample, "--json"});
        QCOMPARE(r.code, 0);
        const QJsonArray stats =
            QJsonDocument::fromJson(r.out.toUtf8()).object()["stage_stats"].toArray();
        for (int rank = 0; rank < 4; ++rank)
            QCOMPARE(stats[rank].toObject()["peak_inflight_microbatches"].toInt(),
                     2 * (4 - rank - 1) + 4 * 4 + 1);
    }
    // `paralens eval` reads the same simulation: its step time, bubble and in-flight counts
    // (in whole-stage micro-batches, chunk-micro-batches / v) match the timeline.
    void agreesWithEval()
    {
        const Result e = paralens::testcli::run({"eval", kExample, "--json"});
        QCOMPARE(e.code, 0);
        const QJsonObject eval = QJsonDocument::fromJson(e.out.toUtf8()).object();
        const Result r = run({kExample, "--json"});
        QCOMPARE(r.code, 0);
        const QJsonObject sched = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(sched["step_seconds"].toDouble(), eval["time"]["step_seconds"].toDouble());
        QCOMPARE(sched["bubble_fraction"].toDouble(), eval["time"]["bubble_fraction"].toDouble());
        const QJsonArray stats = sched["stage_stats"].toArray();
        const QJsonArray mem = eval["memory"]["stages"].toArray();
        QCOMPARE(mem.size(), stats.size());
        for (int i = 0; i < stats.size(); ++i)
            QVERIFY(
                qFuzzyCompare(mem[i].toObject()["inflight_microbatches"].toDouble(),
                              stats[i].toObject()["peak_inflight_microbatches"].toDouble() / 5.0));
        for (int i = 0; i < stats.size(); ++i)
            QCOMPARE(stats[i].toObject()["inflight_microbatches"].toDouble(),
                     mem[i].toObject()["inflight_microbatches"].toDouble());
    }
    void traceFileParses_data()
    {
        QTest::addColumn<QString>("schedule");
        QTest::addColumn<int>("v");
        QTest::newRow("1f1b") << "1f1b" << 1;
        QTest::newRow("interleaved") << "interleaved-1f1b" << 2;
    }
    void traceFileParses()
    {
        QFETCH(QString, schedule);
        QFETCH(int, v);
        QTemporaryDir dir;
        const QString out = dir.filePath("trace.json");
        const Result r = run({variant(dir, schedule, v), "--trace", out});
        QCOMPARE(r.code, 0);
        const QJsonObject t = readJson(out);
        QVERIFY(t["traceEvents"].isArray());
        const QJsonArray events = t["traceEvents"].toArray();
        int complete = 0;
        QSet<int> tracks;
        const QRegularExpression name("^[FBW] mb[0-9]+ c[0-9]+$");
        for (const auto& e : events) {
            const QJsonObject ev = e.toObject();
            QVERIFY(ev.contains("ph") && ev.contains("pid") && ev.contains("tid"));
            if (ev["ph"] == "M" && ev["name"] == "thread_name")
                tracks.insert(ev["tid"].toInt());
            if (ev["ph"] != "X" || ev["cat"] == "dp")
                continue;
            ++complete;
            QVERIFY(ev["ts"].isDouble() && ev["dur"].isDouble());
            QVERIFY(ev["dur"].toDouble() >= 0);
            QVERIFY(name.match(ev["name"].toString()).hasMatch());
        }
        QCOMPARE(complete, 2 * 4 * v * 64);
        QCOMPARE(tracks.size(), 4);
    }
    void badInput()
    {
        Result r = run({});
        QCOMPARE(r.code, 2);
        r = run({kExample, "--frobnicate"});
        QCOMPARE(r.code, 2);
        r = run({"/nonexistent/x.paralens.json"});
        QCOMPARE(r.code, 1);
        QVERIFY(oneErrorLine(r.err, "cannot open"));
        // dualpipe-v needs m >= 2·pp: global batch 8 / dp 2 = 4 micro-batches < 8.
        QTemporaryDir dir;
        r = run({variant(dir, "dualpipe-v", 2, 8)});
        QCOMPARE(r.code, 1);
        QVERIFY2(oneErrorLine(r.err, "micro-batches"), qPrintable(r.err));
        r = run({kExample, "--trace", "/nonexistent-dir/trace.json"});
        QCOMPARE(r.code, 1);
        QVERIFY(oneErrorLine(r.err, "--trace"));
    }
};

QTEST_GUILESS_MAIN(TestCliSchedule)
#include "test_cli_schedule.moc"
