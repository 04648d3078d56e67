// SPDX-License-Identifier: GPL-3.0-or-later
// paralens-measure without a GPU: --help works, and a measurement fails with the
// documented line and exit code 3. CUDA_VISIBLE_DEVICES="" hides any GPU, so this holds
// on GPU machines too.
#include <QProcess>
#include <QProcessEnvironment>
#include <QTest>

namespace {

struct Run
{
    int code = -1;
    QString out, err;
};

Run measure(const QStringList& args)
{
    QProcess p;
    auto env = QProcessEnvironment::systemEnvironment();
    env.insert("CUDA_VISIBLE_DEVICES", "");
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(PARALENS_MEASURE_EXE), args);
    p.waitForFinished(120000);
    return {p.exitCode(), QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

} // namespace

class TestMeasureCli : public QObject
{
    Q_OBJECT
private slots:
    void help()
    {
        const auto r = measure({"--help"});
        QCOMPARE(r.code, 0);
        for (const char* s : {"collectives", "gemm", "membw", "devices", "--out", "--timeout",
                              "Exit codes", "no CUDA device visible"})
            QVERIFY2(r.out.contains(QLatin1String(s)), s);
    }
    void noDevice_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::newRow("collectives") << QStringList{"collectives", "-b", "1M", "-e", "4M"};
        QTest::newRow("gemm") << QStringList{"gemm"};
        QTest::newRow("membw") << QStringList{"membw"};
        QTest::newRow("devices") << QStringList{"devices"};
        QTest::newRow("gemm of a scenario") << QStringList{
            "gemm", "--scenario",
            PARALENS_SOURCE_DIR "/resources/examples/gpt3-175b-1024xa100.paralens.json"};
        QTest::newRow("all") << QStringList{"all", "--out", "/nonexistent/never-written.json"};
    }
    void noDevice()
    {
        QFETCH(QStringList, args);
        const auto r = measure(args);
        QCOMPARE(r.code, 3);
        QCOMPARE(r.err, QStringLiteral("error: no CUDA device visible\n"));
        QCOMPARE(r.out, QString()); // nothing half-written on stdout (devices: no JSON)
    }
    void badUsage()
    {
        for (const auto& args : {QStringList{}, QStringList{"bogus"}, QStringList{"gemm", "-n"},
                                 QStringList{"collectives", "--dtype", "fp64"},
                                 QStringList{"collectives", "--ops", "all_to_all"},
                                 QStringList{"gemm", "--shapes", "1,2"},
                                 QStringList{"collectives", "-b", "1G", "-e", "1M"}}) {
            const auto r = measure(args);
            QVERIFY2(r.code == 2, qPrintable(args.join(' ')));
            QVERIFY(r.err.startsWith("error: "));
        }
        QCOMPARE(measure({"--version"}).code, 0);
        const auto bad = measure({"gemm", "--scenario", "/nonexistent/s.paralens.json"});
        QCOMPARE(bad.code, 2);
        QVERIFY2(bad.err.startsWith("error: ") && bad.err.contains("/nonexistent/s.paralens.json"),
                 qPrintable(bad.err));
    }
};

QTEST_GUILESS_MAIN(TestMeasureCli)
#include "test_measure_cli.moc"
