// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/calibration.h"
#include "core/error.h"
#include "core/nccl_log.h"
#include "nccl_checks.h"

#include <QFile>
#include <QTest>

#include <cmath>
#include <cstdio>
#include <string>

using namespace paralens;

namespace {

/// The project's own nccl-tests logs (tests/data/nccl/README.md lists how each was made).
QString fixture(const char* name)
{
    return QStringLiteral(PARALENS_SOURCE_DIR "/tests/data/nccl/") + QLatin1String(name);
}

const char* kOneNode = "h100_1node_8gpu_five_collectives.txt";
const char* kTwoNodeAllReduce = "h100_2node_16gpu_allreduce_srun.txt";
const char* kTwoNodeAllToAll = "h100_2node_16gpu_alltoall_sendrecv.txt";

/// One row in nccl-tests' layout for a chosen time (µs), computing algbw/busbw by the
/// nccl-tests rules: algbw = S / t, busbw = algbw × factor.
std::string row(long long size, int elemBytes, const char* type, const char* redop, double t_us,
                double factor)
{
    const double algbw = size / (t_us * 1e-6) / 1e9;
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "  %10lld  %12lld  %8s  %6s  %6d  %7.2f  %6.2f  %6.2f  %6d  %7.2f  %6.2f  %6.2f  "
                  "%6s\n",
                  size, size / elemBytes, type, redop, -1, t_us, algbw, algbw * factor, 0, t_us,
                  algbw, algbw * factor, "N/A");
    return buf;
}

std::string devices(int ranks, int perNode, const char* prefix = "#")
{
    std::string s = std::string(prefix) + " Using devices\n";
    for (int r = 0; r < ranks; ++r) {
        char buf[200];
        std::snprintf(buf, sizeof buf,
                      "%s  Rank %2d Group  0 Pid %d on node%02d device  %d [0x%02x] NVIDIA H200\n",
                      prefix, r, 1000 + r, r / perNode, r % perNode, r);
        s += buf;
    }
    return s;
}

const char* kHeader =
    "#                                                              out-of-place                 "
    "      in-place\n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
    "time   algbw   busbw #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            "
    "(us)  (GB/s)  (GB/s)\n";

/// A synthetic all-reduce sweep obeying t = α + S·f/B exactly (before print rounding).
std::string allReduceLog(int ranks, double alpha_us, double busbw_gbps, bool footer = true)
{
    const double f = 2.0 * (ranks - 1) / ranks;
    std::string s = "# nccl-tests version 2.17.8 nccl-headers=22703 nccl-library=22703\n"
                    "# Collective test starting: all_reduce_perf\n"
                    "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 1073741824 step: 4(factor) "
                    "warmup iters: 5 iters: 50 agg iters: 1 validation: 1 graph: 0\n#\n";
    s += devices(ranks, 8);
    s += "#\n";
    s += kHeader;
    for (long long size = 1 << 20; size <= (1LL << 30); size *= 4)
        s += row(size, 2, "bfloat16", "sum", alpha_us + size * f / (busbw_gbps * 1e3), f);
    if (footer)
        s += "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 55.5\n#\n"
             "# Collective test concluded: all_reduce_perf\n";
    return s;
}

using testnccl::hasWarning;

} // namespace

class TestNcclLog : public QObject
{
    Q_OBJECT
private slots:
    // ---- hand-written logs: always run ----

    void syntheticAllReduce()
    {
        const auto r = parseNcclLog(allReduceLog(8, 20.0, 100.0));
        QCOMPARE(r.tables.size(), size_t(1));
        const auto& t = r.tables[0];
        QCOMPARE(t.op, std::string("all_reduce"));
        QVERIFY(t.collective == Collective::AllReduce);
        QCOMPARE(t.ranks, 8);
        QCOMPARE(t.nodes, 1);
        QVERIFY(t.span() == Span::ScaleUp);
        QCOMPARE(t.rows.size(), size_t(6)); // 1 MiB .. 1 GiB by 4
        QCOMPARE(t.nccl_version, std::string("2.27.3"));
        QCOMPARE(t.iterations, 50);
        QCOMPARE(t.device_name, std::string("NVIDIA H200"));
        QVERIFY(t.complete);
        QCOMPARE(*t.avg_busbw_gbps, 55.5);
        QCOMPARE(t.rows[0].type, std::string("bfloat16"));
        QCOMPARE(t.rows[0].redop, std::string("sum"));
        QCOMPARE(t.rows[0].root, -1);
        QCOMPARE(t.rows[0].out_of_place.wrong, 0LL);
        QCOMPARE(t.rows[0].in_place->wrong, -1LL); // N/A
        QVERIFY(r.warnings.empty());
    }

    void fitRecoversTheParametersOfASyntheticLog()
    {
        // α = 20 µs, B = 100 GB/s by construction; only print rounding perturbs the times.
        const auto r = parseNcclLog(allReduceLog(8, 20.0, 100.0));
        const auto curves = curvesFromNcclLog(r, "synthetic");
        QCOMPARE(curves.size(), size_t(1));
        const auto& fit = curves[0].fit;
        QVERIFY(fit.valid);
        QVERIFY(std::abs(fit.busbw_gbps - 100.0) < 0.1);
        QVERIFY(std::abs(fit.alpha_seconds - 20e-6) < 0.5e-6);
        QVERIFY(fit.rms_residual_pct < 0.1);
        QCOMPARE(curves[0].dtype, std::string("bf16"));
    }

    void severalOperationsWithLauncherPrefixes()
    {
        // srun -l prefixes ("0: "), NCCL INFO noise, a WARN, then two operations.
        std::string s;
        auto add = [&](const std::string& text, const char* prefix) {
            size_t pos = 0;
            while (pos < text.size()) {
                const auto e = text.find('\n', pos);
                if (e == std::string::npos)
                    break;
                s += prefix + text.substr(pos, e - pos) + "\n";
                pos = e + 1;
            }
        };
        add("host0:123:123 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n", "0: ");
        add(allReduceLog(4, 10.0, 50.0), "0: ");
        add("host0:123:140 [0] NCCL WARN something odd\n", "0: ");
        std::string ag = "# Collective test starting: all_gather_perf\n" + devices(4, 2);
        ag += kHeader;
        for (long long size = 1 << 20; size <= (1 << 24); size *= 2)
            ag += row(size, 8, "float", "none", 5.0 + size * 0.75 / 40e3, 0.75);
        ag += "# Avg bus bandwidth    : 30\n";
        add(ag, "[1,0]<stdout>:");
        const auto r = parseNcclLog(s);
        QCOMPARE(r.tables.size(), size_t(2));
        QCOMPARE(r.tables[0].op, std::string("all_reduce"));
        QCOMPARE(r.tables[1].op, std::string("all_gather"));
        QCOMPARE(r.tables[1].rows.size(), size_t(5));
        QCOMPARE(r.tables[1].nodes, 2);
        QVERIFY(r.tables[1].span() == Span::ScaleOut);
        QCOMPARE(r.tables[1].hosts.front(), std::string("node00"));
        QVERIFY(hasWarning(r, "NCCL WARN something odd"));
    }

    void truncatedTailIsAWarning()
    {
        std::string s = allReduceLog(8, 20.0, 100.0, /*footer=*/false);
        s += "  2147483648     1073741824  bfloat16     sum      -1   3767";
        const auto r = parseNcclLog(s, {.source = "cut.log"});
        QCOMPARE(r.tables.size(), size_t(1));
        QCOMPARE(r.tables[0].rows.size(), size_t(6));
        QVERIFY(!r.tables[0].complete);
        QVERIFY(hasWarning(r, "truncated row ignored"));
        QVERIFY(hasWarning(r, "no 'Avg bus bandwidth' footer"));
    }

    void malformedRowInTheMiddleIsANamedError()
    {
        std::string s = allReduceLog(8, 20.0, 100.0);
        const auto at = s.find("   4194304");
        QVERIFY(at != std::string::npos);
        s.replace(at, 10, "   4x94304");
        try {
            parseNcclLog(s, {.source = "bad.log"});
            QFAIL("expected InputError");
        } catch (const InputError& e) {
            QVERIFY(std::string(e.what()).find("bad.log:") != std::string::npos);
            QVERIFY(std::string(e.what()).find("malformed nccl-tests row") != std::string::npos);
        }
    }

    void badInputGivesNamedErrors()
    {
        QVERIFY_THROWS_EXCEPTION(InputError, parseNcclLog("", {.source = "empty.log"}));
        QVERIFY_THROWS_EXCEPTION(InputError, parseNcclLog("hello\nworld\n# just comments\n", {}));
        try {
            parseNcclLog("{\"schema\": 1}", {.source = "p.json"});
            QFAIL("expected InputError");
        } catch (const InputError& e) {
            QVERIFY(std::string(e.what()).find("no nccl-tests result table") != std::string::npos);
        }
        QVERIFY_THROWS_EXCEPTION(InputError, readNcclLog("/nonexistent/file.log"));
        // Negative time: impossible, and followed by a good row, so an error.
        std::string s = std::string(kHeader) + row(1 << 20, 4, "float", "sum", 30, 1.75);
        s += "     2097152        524288     float     sum      -1   -40.0   1.00   1.75      0  "
             "  40.0   1.00   1.75      0\n";
        s += row(1 << 22, 4, "float", "sum", 60, 1.75);
        QVERIFY_THROWS_EXCEPTION(InputError, parseNcclLog(s));
    }

    void operationInferenceAndItsLimits()
    {
        // No "Collective test starting": all-reduce is recognised by busbw/algbw > 1.
        std::string ar = devices(4, 4) + kHeader;
        for (long long size = 1 << 20; size <= (1 << 22); size *= 2)
            ar += row(size, 4, "float", "sum", 10 + size * 1.5 / 80e3, 1.5);
        const auto r = parseNcclLog(ar);
        QCOMPARE(r.tables[0].op, std::string("all_reduce"));
        QVERIFY(hasWarning(r, "inferred 'all_reduce'"));

        // all_gather and alltoall print identical columns: refuse to guess...
        std::string a2a = devices(4, 4) + kHeader;
        for (long long size = 1 << 20; size <= (1 << 22); size *= 2)
            a2a += row(size, 16, "float", "none", 10 + size * 0.75 / 80e3, 0.75);
        try {
            parseNcclLog(a2a);
            QFAIL("expected InputError");
        } catch (const InputError& e) {
            QVERIFY(std::string(e.what()).find("--op") != std::string::npos);
        }
        // ...unless told.
        const auto told = parseNcclLog(a2a, {.default_op = "alltoall"});
        QVERIFY(told.tables[0].collective == Collective::AllToAll);

        // Without device lines the rank count comes from the all-reduce factor 2(n-1)/n.
        std::string nodev = std::string(kHeader);
        for (long long size = 1 << 20; size <= (1 << 22); size *= 2)
            nodev += row(size, 4, "float", "sum", 10 + size * 1.75 / 80e3, 1.75);
        const auto nd = parseNcclLog(nodev, {.default_op = "all_reduce"});
        QCOMPARE(nd.tables[0].ranks, 8);
        QVERIFY(hasWarning(nd, "inferred 8 ranks"));
    }

    void olderLayoutWithoutRootColumn()
    {
        // nccl-tests before 2.10 (its README of the time): no root column, no "Group" in the
        // device lines, an "error" column holding the largest error instead of a count.
        const char* log =
            "# nThread 1 nGpus 4 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 "
            "iters: 20 validation: 1\n"
            "#\n# Using devices\n"
            "#   Rank  0 Pid  40741 on  computer device  0 [0x06] Tesla V100-SXM2-16GB\n"
            "#   Rank  1 Pid  40741 on  computer device  1 [0x07] Tesla V100-SXM2-16GB\n"
            "#   Rank  2 Pid  40741 on  computer device  2 [0x0a] Tesla V100-SXM2-16GB\n"
            "#   Rank  3 Pid  40741 on  computer device  3 [0x0b] Tesla V100-SXM2-16GB\n"
            "#\n"
            "#                                                     out-of-place                  "
            "     in-place\n"
            "#       size         count    type   redop     time   algbw   busbw  error     time  "
            " algbw   busbw  error\n"
            "#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  "
            "(GB/s)  (GB/s)\n"
            "     1048576        262144   float     sum    40.00   26.21   39.32  1e-07    40.00  "
            " 26.21   39.32  1e-07\n"
            "     4194304       1048576   float     sum    100.0   41.94   62.91  1e-07    100.0  "
            " 41.94   62.91  1e-07\n"
            "# Out of bounds values : 0 OK\n"
            "# Avg bus bandwidth    : 51.1\n";
        const auto r = parseNcclLog(log, {.default_op = "all_reduce"});
        QCOMPARE(r.tables.size(), size_t(1));
        const auto& t = r.tables[0];
        QCOMPARE(t.ranks, 4);
        QCOMPARE(t.nodes, 1);
        QCOMPARE(t.device_name, std::string("Tesla V100-SXM2-16GB"));
        QCOMPARE(t.rows.size(), size_t(2));
        QCOMPARE(t.rows[1].redop, std::string("sum"));
        QCOMPARE(t.rows[1].root, -1);
        QCOMPARE(t.rows[1].out_of_place.time_seconds, 100e-6);
        QCOMPARE(t.rows[1].out_of_place.wrong, -1LL);
        // busbw = algbw · 2(n-1)/n with n = 4 (1.5), as printed.
        QVERIFY(std::abs(t.rows[1].out_of_place.algbw_gbps * 1.5 -
                         t.rows[1].out_of_place.busbw_gbps) < 0.01);
    }

    void paralensMeasureStdout()
    {
        // paralens-measure prints nccl-tests' layout (alltoall has no in-place run: zeros),
        // followed by its GEMM and membw tables, which the reader skips.
        const char* out =
            "# paralens-measure 0.1.0 nccl-library=22803\n"
            "# Collective test starting: alltoall_perf\n"
            "# nThread 1 nGpus 2 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: "
            "5 iters: 20 agg iters: 1 validation: 0 graph: 0\n#\n# Using devices\n"
            "#  Rank  0 Group  0 Pid   4242 on      gpu01 device  0 [0000:1b:00.0] NVIDIA H200\n"
            "#  Rank  1 Group  0 Pid   4242 on      gpu01 device  1 [0000:43:00.0] NVIDIA H200\n"
            "#\n"
            "#                                                              out-of-place          "
            "             in-place\n"
            "#       size         count      type   redop    root     time   algbw   busbw #wrong "
            "    time   algbw   busbw #wrong\n"
            "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)        "
            "    (us)  (GB/s)  (GB/s)\n"
            "     1048576        262144  bfloat16    none      -1    20.00   52.43   26.21     N/A "
            "    0.00    0.00    0.00     N/A\n"
            "     2097152        524288  bfloat16    none      -1    30.00   69.91   34.95     N/A "
            "    0.00    0.00    0.00     N/A\n"
            "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 30.58\n#\n"
            "# Collective test concluded: alltoall_perf\n#\n\n"
            "# gemm on NVIDIA H200 (cuBLASLt, TN, FP32 accumulate, BF16 output)\n"
            "# label           m       n       k  dtype     time_us   TFLOP/s\n"
            "  square       8192    8192    8192   bf16      1500.0     733.0\n"
            "# membw on device 0, 1073741824 bytes, (read + write) / time\n"
            "  d2d_copy      500.0 us    4294.9 GB/s\n";
        const auto r = parseNcclLog(out);
        QCOMPARE(r.tables.size(), size_t(1));
        const auto& t = r.tables[0];
        QVERIFY(t.collective == Collective::AllToAll);
        QCOMPARE(t.ranks, 2);
        QCOMPARE(t.nccl_version, std::string("2.28.3"));
        QCOMPARE(t.rows.size(), size_t(2));
        QCOMPARE(t.rows[1].in_place->time_seconds, 0.0);
        QVERIFY(r.warnings.empty());
        const auto curves = curvesFromNcclLog(r, "measure.out");
        QCOMPARE(curves.size(), size_t(1));
        QVERIFY(!curves[0].points[1].in_place_seconds.has_value()); // not measured
        QCOMPARE(curves[0].points[1].time_median_seconds, 30e-6);
    }

    void progressCanCancel()
    {
        std::string big;
        for (int i = 0; i < 100; ++i)
            big += allReduceLog(2, 5, 10);
        int calls = 0;
        NcclLogConfig cfg;
        cfg.progress = [&](double) { return ++calls < 2; };
        QVERIFY_THROWS_EXCEPTION(InputError, parseNcclLog(big, cfg));
        QVERIFY(looksLikeNcclLog(big));
        QVERIFY(!looksLikeNcclLog("{\"schema\":1, \"algbw\": \"busbw\"}"));
        QCOMPARE(ncclTypeBytes("bfloat16"), 2);
        QCOMPARE(ncclTypeBytes("double"), 8);
    }

    // ---- the fixture logs in tests/data/nccl ----

    void fixtureLogsParse_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QStringList>("ops");
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("ranks");
        QTest::addColumn<int>("nodes");
        QTest::newRow("1x8 five collectives")
            << kOneNode
            << QStringList{"all_reduce", "all_gather", "reduce_scatter", "alltoall", "sendrecv"}
            << 7 << 8 << 1;
        QTest::newRow("2x8 all_reduce, srun")
            << kTwoNodeAllReduce << QStringList{"all_reduce", "all_reduce"} << 5 << 16 << 2;
        QTest::newRow("2x8 alltoall, sendrecv")
            << kTwoNodeAllToAll << QStringList{"alltoall", "sendrecv"} << 3 << 16 << 2;
    }
    void fixtureLogsParse()
    {
        QFETCH(QString, file);
        QFETCH(QStringList, ops);
        QFETCH(int, rows);
        QFETCH(int, ranks);
        QFETCH(int, nodes);
        testnccl::checkTables(fixture(qPrintable(file)).toStdString(), ops, rows, ranks, nodes);
    }

    void fixtureFooterAndVersions()
    {
        const auto one = readNcclLog(fixture(kOneNode).toStdString());
        QCOMPARE(one.tables[0].nccl_version, std::string("2.27.7"));
        QCOMPARE(one.tables[0].nccl_tests_version, std::string("2.17.6"));
        QCOMPARE(one.tables[0].iterations, 20);
        QCOMPARE(*one.tables[0].avg_busbw_gbps, 428.067);
        QCOMPARE(one.tables[0].hosts, (std::vector<std::string>{"gpu-a01"}));
        QVERIFY(hasWarning(one, "Reducing maxBytes"));
        const auto two = readNcclLog(fixture(kTwoNodeAllReduce).toStdString());
        QCOMPARE(*two.tables[0].avg_busbw_gbps, 133.688);
        QCOMPARE(*two.tables[1].avg_busbw_gbps, 82.885);
        QCOMPARE(two.tables[0].iterations, 100);
        QCOMPARE(two.tables[0].hosts, (std::vector<std::string>{"ib-n07", "ib-n08"}));
        QCOMPARE(two.tables[0].rows[0].out_of_place.wrong, -1LL); // validation off: N/A
        // The file has no test-name lines: the operation is inferred from the columns.
        QVERIFY(hasWarning(two, "inferred 'all_reduce'"));
    }

    /// Every row satisfies algbw = S/t and busbw = algbw × busFactor within the print rounding
    /// of the columns (docs/formulas.md §5, §8).
    void fixtureColumnsObeyTheBusFactor()
    {
        for (const char* file : {kOneNode, kTwoNodeAllReduce, kTwoNodeAllToAll}) {
            for (const auto& t : readNcclLog(fixture(file).toStdString()).tables) {
                const double f = busFactor(*t.collective, t.ranks);
                for (const auto& r : t.rows) {
                    for (const auto& tm : {r.out_of_place, *r.in_place}) {
                        const double algbw = r.size_bytes / tm.time_seconds / 1e9;
                        // Times print with >= 5 significant digits, bandwidths with 2 decimals.
                        const double tolA = 1e-4 * algbw + 0.006;
                        QVERIFY2(std::abs(algbw - tm.algbw_gbps) <= tolA,
                                 qPrintable(QString("%1 line %2").arg(file).arg(r.line)));
                        QVERIFY2(std::abs(tm.algbw_gbps * f - tm.busbw_gbps) <= 0.006 * (1 + f),
                                 qPrintable(QString("%1 line %2").arg(file).arg(r.line)));
                    }
                }
            }
        }
    }

    /// The fit recovers the plateau bus bandwidth each table was made with (within the 0.4 %
    /// wobble of its times) and lies within 2 % of the largest-size busbw the log prints; both
    /// figures are listed in tests/data/nccl/README.md.
    void fixturePlateauBandwidth_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QList<double>>("made");
        QTest::addColumn<QList<double>>("largest");
        QTest::newRow("1x8") << kOneNode << QList<double>{455, 350, 345, 335, 355}
                             << QList<double>{452.90, 348.35, 343.27, 333.18, 353.94};
        QTest::newRow("2x8 all_reduce")
            << kTwoNodeAllReduce << QList<double>{150, 88} << QList<double>{149.44, 87.78};
        QTest::newRow("2x8 alltoall")
            << kTwoNodeAllToAll << QList<double>{88, 46} << QList<double>{87.54, 45.90};
    }
    void fixturePlateauBandwidth()
    {
        QFETCH(QString, file);
        QFETCH(QList<double>, made);
        QFETCH(QList<double>, largest);
        const auto curves =
            curvesFromNcclLog(readNcclLog(fixture(qPrintable(file)).toStdString()), "log");
        QCOMPARE(int(curves.size()), int(made.size()));
        for (int i = 0; i < made.size(); ++i) {
            QVERIFY(curves[i].fit.valid);
            const double bw = curves[i].fit.busbw_gbps;
            QVERIFY2(std::abs(bw / made[i] - 1.0) < 0.01,
                     qPrintable(QString("%1 table %2: fit %3 GB/s, made with %4 GB/s")
                                    .arg(file)
                                    .arg(i)
                                    .arg(bw)
                                    .arg(made[i])));
            QVERIFY(std::abs(bw / largest[i] - 1.0) < 0.02);
            QVERIFY(curves[i].fit.alpha_seconds >= 0);
            QCOMPARE(curves[i].fit.residual_pct.size(), curves[i].points.size());
        }
    }
};

QTEST_APPLESS_MAIN(TestNcclLog)
#include "test_nccl_log.moc"
