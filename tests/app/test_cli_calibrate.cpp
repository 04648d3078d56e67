// SPDX-License-Identifier: GPL-3.0-or-later
// `paralens calibrate` end to end: runs the built executable.
#include "cli_calibrate_checks.h"
#include "core/calibration.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace paralens;

namespace {

const char* kLog =
    "# Collective test starting: sendrecv_perf\n"
    "# Using devices\n"
    "#  Rank  0 Group  0 Pid 1 on a device  0 [0x01] GPU\n"
    "#  Rank  1 Group  0 Pid 2 on b device  0 [0x01] GPU\n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
    "time   algbw   busbw #wrong\n"
    // t = 10 µs + S / 50 GB/s
    "     1000000        250000     float     sum      -1    30.00   33.33   33.33      0    "
    "30.00   33.33   33.33      0\n"
    "   100000000      25000000     float     sum      -1  2010.00   49.75   49.75      0  "
    "2010.00   49.75   49.75      0\n"
    "# Avg bus bandwidth    : 41.5\n";

} // namespace

class TestCliCalibrate : public QObject
{
    Q_OBJECT
private slots:
    void logToProfile()
    {
        QTemporaryDir dir;
        const QString log = dir.filePath("two.log");
        QFile f(log);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(kLog);
        f.close();
        const QString out = dir.filePath("p.json");
        const auto r = testcli::run({"calibrate", log, "--out", out});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        // The fit table: two hosts make the span inter-node; α 10 µs, 50 GB/s by construction.
        QVERIFY2(r.out.contains(QRegularExpression(R"(sendrecv\s+2\s+inter\s+10\.0\s+50\.00)")),
                 qPrintable(r.out));
        const auto p = loadProfileFile(out.toStdString());
        QCOMPARE(p.collectives.size(), size_t(1));
        QVERIFY(p.collectives[0].span == Span::ScaleOut);
        QCOMPARE(QDir(dir.path()).entryList({"p.json*"}, QDir::Files), QStringList{"p.json"});

        // A profile is an input too.
        const QString out2 = dir.filePath("q.json");
        const auto r2 = testcli::run({"calibrate", out, log, "--out", out2, "--quiet"});
        QVERIFY2(r2.code == 0, qPrintable(r2.err));
        QVERIFY(r2.out.isEmpty());
        QCOMPARE(loadProfileFile(out2.toStdString()).collectives.size(), size_t(2));
    }

    void fixtureLogs()
    {
        // One node with five collectives, two nodes with an inferred all_reduce (a warning).
        const QString dir = QStringLiteral(PARALENS_SOURCE_DIR "/tests/data/nccl");
        const auto names = QDir(dir).entryList({"*.txt"}, QDir::Files);
        QVERIFY(names.size() >= 3);
        testcli::Result r;
        testcli::checkCalibratesLogs(dir, names, r);
        if (QTest::currentTestFailed())
            return;
        // The two-node all_reduce was made with B = 150 GB/s: its fit row says so within 1 %.
        QVERIFY2(r.out.contains(QRegularExpression(
                     R"(all_reduce\s+16\s+inter\s+[0-9.]+\s+1(4[89]|5[01])\.[0-9]{2}\s)")),
                 qPrintable(r.out));
    }

    void badInput()
    {
        QTemporaryDir dir;
        const auto none = testcli::run({"calibrate"});
        QCOMPARE(none.code, 2);
        QVERIFY(none.err.startsWith("error: "));
        const auto noOut = testcli::run({"calibrate", "x.log"});
        QCOMPARE(noOut.code, 2);
        QVERIFY(noOut.err.contains("--out"));
        const auto missing =
            testcli::run({"calibrate", dir.filePath("nope.log"), "--out", dir.filePath("p.json")});
        QCOMPARE(missing.code, 1);
        QVERIFY(missing.err.startsWith("error: "));
        QFile f(dir.filePath("new.json"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"schema\": 7}");
        f.close();
        const auto newer =
            testcli::run({"calibrate", f.fileName(), "--out", dir.filePath("p.json")});
        QCOMPARE(newer.code, 1);
        QVERIFY2(newer.err.contains("schema 7"), qPrintable(newer.err));
        QVERIFY(!QFile::exists(dir.filePath("p.json")));
        const auto help = testcli::run({"calibrate", "--help"});
        QCOMPARE(help.code, 0);
        QVERIFY(help.out.contains("--out"));
    }
};

QTEST_GUILESS_MAIN(TestCliCalibrate)
#include "test_cli_calibrate.moc"
