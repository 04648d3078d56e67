// SPDX-License-Identifier: GPL-3.0-or-later
// Label `extended`: the nccl-tests reader, the calibration profile and the calibrated model on
// the real logs in ../shared/nccl_logs, a folder beside the checkout where the project is
// developed (public logs that are not redistributed with it). Every case skips when the folder
// is absent; the same code is covered on the project's own fixtures by test_nccl_log,
// test_calibration and test_calibrated_eval.
#include "../core/nccl_checks.h"

#include <QDir>
#include <QTest>

#include <cmath>
#include <filesystem>
#include <string>

using namespace paralens;

namespace {

const QString kLogs = QStringLiteral(PARALENS_SHARED_DIR "/nccl_logs");

/// Finds the shared log whose name starts with `prefix`; empty when absent.
QString sharedLog(const QString& prefix)
{
    const auto names = QDir(kLogs).entryList({prefix + "*.txt"}, QDir::Files);
    return names.isEmpty() ? QString() : kLogs + "/" + names.front();
}

using testnccl::hasWarning;

} // namespace

class TestNcclLogShared : public QObject
{
    Q_OBJECT
private slots:

    void realLogsParse_data()
    {
        QTest::addColumn<QString>("prefix");
        QTest::addColumn<QStringList>("ops");
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("ranks");
        QTest::addColumn<int>("nodes");
        QTest::newRow("02 2x8 H100 IB")
            << "02_" << QStringList{"all_reduce", "all_reduce"} << 11 << 16 << 2;
        QTest::newRow("05 1x8 H100")
            << "05_"
            << QStringList{"all_reduce", "all_gather", "reduce_scatter", "alltoall", "sendrecv"}
            << 10 << 8 << 1;
        QTest::newRow("06 2x8 H100")
            << "06_" << QStringList{"alltoall", "sendrecv"} << 3 << 16 << 2;
    }
    void realLogsParse()
    {
        QFETCH(QString, prefix);
        QFETCH(QStringList, ops);
        QFETCH(int, rows);
        QFETCH(int, ranks);
        QFETCH(int, nodes);
        const QString path = sharedLog(prefix);
        if (path.isEmpty())
            QSKIP("shared nccl-tests logs not present");
        testnccl::checkTables(path.toStdString(), ops, rows, ranks, nodes);
    }

    void realLogFooterAndVersions()
    {
        const QString p05 = sharedLog("05_");
        const QString p02 = sharedLog("02_");
        if (p05.isEmpty() || p02.isEmpty())
            QSKIP("shared nccl-tests logs not present");
        const auto r5 = readNcclLog(p05.toStdString());
        QCOMPARE(r5.tables[0].nccl_version, std::string("2.29.2"));
        QCOMPARE(r5.tables[0].nccl_tests_version, std::string("2.17.8"));
        QCOMPARE(r5.tables[0].iterations, 20);
        QCOMPARE(*r5.tables[0].avg_busbw_gbps, 437.957);
        QVERIFY(hasWarning(r5, "Reducing maxBytes"));
        const auto r2 = readNcclLog(p02.toStdString());
        QCOMPARE(*r2.tables[0].avg_busbw_gbps, 142.735);
        QCOMPARE(*r2.tables[1].avg_busbw_gbps, 85.5294);
        QCOMPARE(r2.tables[0].hosts, (std::vector<std::string>{"node005", "node007"}));
        QVERIFY(hasWarning(r2, "inferred 'all_reduce'")); // file 02 prints no test header
    }

    /// Every row of a real log satisfies algbw = S/t and busbw = algbw × busFactor, within
    /// the print rounding of the columns (docs/formulas.md §5, §8).
    void realLogColumnsObeyTheBusFactor()
    {
        bool any = false;
        for (const char* prefix : {"02_", "05_", "06_"}) {
            const QString path = sharedLog(prefix);
            if (path.isEmpty())
                continue;
            any = true;
            for (const auto& t : readNcclLog(path.toStdString()).tables) {
                const double f = busFactor(*t.collective, t.ranks);
                for (const auto& r : t.rows) {
                    for (const auto& tm : {r.out_of_place, *r.in_place}) {
                        const double algbw = r.size_bytes / tm.time_seconds / 1e9;
                        // Times print with >= 4 significant digits, bandwidths with 2 decimals.
                        const double tolA = 5e-4 * algbw + 0.006;
                        QVERIFY2(std::abs(algbw - tm.algbw_gbps) <= tolA,
                                 qPrintable(QString("%1 line %2: S/t %3 vs algbw %4")
                                                .arg(prefix)
                                                .arg(r.line)
                                                .arg(algbw)
                                                .arg(tm.algbw_gbps)));
                        QVERIFY2(std::abs(tm.algbw_gbps * f - tm.busbw_gbps) <= 0.006 * (1 + f),
                                 qPrintable(QString("%1 line %2").arg(prefix).arg(r.line)));
                    }
                }
            }
        }
        if (!any)
            QSKIP("shared nccl-tests logs not present");
    }

    /// The fitted plateau bus bandwidth lies within 2 % of the largest-size out-of-place
    /// busbw listed in the README beside the logs.
    void realLogPlateauBandwidth_data()
    {
        QTest::addColumn<QString>("prefix");
        QTest::addColumn<QList<double>>("largest");
        QTest::newRow("02") << "02_" << QList<double>{155.57, 89.90};
        QTest::newRow("05") << "05_" << QList<double>{482.27, 361.86, 364.76, 348.03, 367.25};
        QTest::newRow("06") << "06_" << QList<double>{92.04, 45.86};
    }
    void realLogPlateauBandwidth()
    {
        QFETCH(QString, prefix);
        QFETCH(QList<double>, largest);
        const QString path = sharedLog(prefix);
        if (path.isEmpty())
            QSKIP("shared nccl-tests logs not present");
        const auto curves = curvesFromNcclLog(readNcclLog(path.toStdString()), "log");
        QCOMPARE(int(curves.size()), int(largest.size()));
        for (int i = 0; i < largest.size(); ++i) {
            QVERIFY(curves[i].fit.valid);
            const double rel = curves[i].fit.busbw_gbps / largest[i] - 1.0;
            QVERIFY2(std::abs(rel) < 0.02,
                     qPrintable(QString("%1 table %2: fit %3 GB/s vs log %4 GB/s")
                                    .arg(prefix)
                                    .arg(i)
                                    .arg(curves[i].fit.busbw_gbps)
                                    .arg(largest[i])));
            QVERIFY(curves[i].fit.alpha_seconds >= 0);
            QCOMPARE(curves[i].fit.residual_pct.size(), curves[i].points.size());
        }
    }

    void profileFromSharedLogMatchesTheLog()
    {
        const QString dir = QStringLiteral(PARALENS_SHARED_DIR "/nccl_logs");
        const auto names = QDir(dir).entryList({"05_*.txt"}, QDir::Files);
        if (names.isEmpty())
            QSKIP("shared nccl-tests logs not present");
        const std::string path = (dir + "/" + names.front()).toStdString();
        // The log's rows: 1 GiB all-reduce 4000.82 µs, 16 GiB all-gather 41542.0 µs.
        testnccl::checkProfileFromOneNodeLog(path, {"2.29.2", 4000.82, 17179869184.0, 41542.0});
    }

    void sharedLogsMoveTpTimeByTheMeasuredBandwidth()
    {
        const std::string log =
            PARALENS_SHARED_DIR "/nccl_logs/"
                                "05_h100_8gpu_1node_allreduce_allgather_reducescatter_alltoall_"
                                "sendrecv_xxrjun.txt";
        if (!std::filesystem::exists(log))
            QSKIP("shared nccl-tests logs are absent");
        // At 128 MiB the log measures all-gather and reduce-scatter at about 307-309 GB/s
        // (docs/formulas.md §5), below the datasheet 450 × 0.8 = 360 GB/s: TP time must grow by
        // roughly 360/308, and certainly stay within the 360/362 .. 360/237 range of the
        // log's busbw between 32 MiB and 16 GiB.
        testnccl::checkLogMovesTpTime(log, {360.0 / 365.0, 360.0 / 237.0, 360.0 / 308.0});
    }
};

QTEST_APPLESS_MAIN(TestNcclLogShared)
#include "test_nccl_log_shared.moc"
