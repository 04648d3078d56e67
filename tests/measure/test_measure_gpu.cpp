// SPDX-License-Identifier: GPL-3.0-or-later
// A tiny real measurement (label gpu; needs a GPU): every subcommand runs, the profile loads
// through core and holds plausible numbers.
#include "core/calibration.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace paralens;

class TestMeasureGpu : public QObject
{
    Q_OBJECT
private slots:
    void tinyRun()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath("p.json");
        QProcess p;
        p.start(QStringLiteral(PARALENS_MEASURE_EXE), {"all",
                                                       "-b",
                                                       "1M",
                                                       "-e",
                                                       "8M",
                                                       "-f",
                                                       "2",
                                                       "-w",
                                                       "2",
                                                       "-n",
                                                       "5",
                                                       "-c",
                                                       "1",
                                                       "--shapes",
                                                       "2048,2048,2048:square",
                                                       "--membw-bytes",
                                                       "256M",
                                                       "--timeout",
                                                       "60",
                                                       "--out",
                                                       out});
        QVERIFY(p.waitForFinished(300000));
        const QString err = QString::fromUtf8(p.readAllStandardError());
        const QString stdoutText = QString::fromUtf8(p.readAllStandardOutput());
        if (p.exitCode() == 3)
            QSKIP("no CUDA device visible");
        QVERIFY2(p.exitCode() == 0, qPrintable(err));
        QVERIFY(err.contains("{\"phase\":\"collectives\""));
        QVERIFY(stdoutText.contains("# Collective test starting: all_reduce_perf"));
        const auto prof = loadProfileFile(out.toStdString());
        QVERIFY(prof.system.gpu_count >= 1);
        QVERIFY(!prof.collectives.empty());
        for (const auto& c : prof.collectives) {
            QCOMPARE(c.points.size(), size_t(4)); // 1, 2, 4, 8 MiB
            for (const auto& pt : c.points) {
                QVERIFY(pt.time_median_seconds > 0);
                QVERIFY(pt.time_min_seconds <= pt.time_median_seconds);
                QVERIFY(pt.time_max_seconds >= pt.time_median_seconds);
            }
        }
        QVERIFY(!stdoutText.contains("FAILED")); // -c 1: no wrong elements
        QVERIFY(!prof.gemm.empty());
        QVERIFY(prof.gemm[0].tflops > 1 && prof.gemm[0].tflops < 20000);
        QVERIFY(prof.hbm_gbps && *prof.hbm_gbps > 100 && *prof.hbm_gbps < 50000);
    }
};

QTEST_GUILESS_MAIN(TestMeasureGpu)
#include "test_measure_gpu.moc"
