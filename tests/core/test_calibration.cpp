// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/calibration.h"
#include "core/error.h"
#include "nccl_checks.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace paralens;

namespace {

/// Points exactly on t = α + S·f/B (no rounding).
std::vector<SizePoint> exactPoints(Collective c, int ranks, double alpha_s, double busbw_gbps)
{
    std::vector<SizePoint> pts;
    const double f = busFactor(c, ranks);
    for (double s = 1 << 16; s <= (1LL << 32); s *= 4) {
        SizePoint p;
        p.size_bytes = s;
        p.time_median_seconds = p.time_min_seconds = p.time_max_seconds =
            alpha_s + s * f / (busbw_gbps * 1e9);
        p.algbw_gbps = s / p.time_median_seconds / 1e9;
        p.busbw_gbps = p.algbw_gbps * f;
        pts.push_back(p);
    }
    return pts;
}

SizePoint point(double size, double seconds)
{
    SizePoint p;
    p.size_bytes = size;
    p.time_median_seconds = p.time_min_seconds = p.time_max_seconds = seconds;
    p.algbw_gbps = size / seconds / 1e9;
    p.busbw_gbps = p.algbw_gbps;
    return p;
}

CollectiveCurve curve(Collective c, int ranks, Span span, std::vector<SizePoint> pts,
                      std::string dtype = "bf16")
{
    CollectiveCurve k;
    k.collective = c;
    k.ranks = ranks;
    k.span = span;
    k.dtype = std::move(dtype);
    k.points = std::move(pts);
    k.fit = fitAlphaBeta(c, ranks, k.points);
    return k;
}

CalibrationProfile sampleProfile()
{
    CalibrationProfile p;
    p.tool = "test";
    p.created = "2026-01-01T00:00:00Z";
    p.system.gpu_name = "NVIDIA H200";
    p.system.gpu_count = 8;
    p.system.gpus_per_node = 8;
    p.system.nodes = 1;
    p.system.driver_version = "580.65";
    p.system.cuda_version = "13.0";
    p.system.nccl_version = "2.27.3";
    p.system.topology = "NV18 full mesh";
    p.system.hosts = {"h0"};
    p.collectives.push_back(curve(Collective::AllReduce, 8, Span::ScaleUp,
                                  exactPoints(Collective::AllReduce, 8, 25e-6, 400.0)));
    p.collectives.push_back(curve(Collective::AllReduce, 2, Span::ScaleUp,
                                  exactPoints(Collective::AllReduce, 2, 10e-6, 300.0)));
    p.collectives.push_back(curve(Collective::AllToAll, 8, Span::ScaleOut,
                                  exactPoints(Collective::AllToAll, 8, 40e-6, 45.0)));
    p.collectives.back().points[0].in_place_seconds = 1e-4;
    p.collectives.push_back(curve(Collective::SendRecv, 2, Span::ScaleOut,
                                  exactPoints(Collective::SendRecv, 2, 12e-6, 46.0)));
    p.gemm.push_back({"square", 8192, 8192, 8192, "bf16", 700.0, 1.57e-3});
    p.gemm.push_back({"mlp_up", 8192, 28672, 8192, "bf16", 760.0, 5e-3});
    p.hbm_gbps = 4300.0;
    p.d2d_copy_gbps = 3900.0;
    p.warnings = {"a warning"};
    return p;
}

template <typename F> std::string errorOf(F&& f)
{
    try {
        f();
    } catch (const InputError& e) {
        return e.what();
    }
    return {};
}

} // namespace

class TestCalibration : public QObject
{
    Q_OBJECT
private slots:
    void fitRecoversExactParameters_data()
    {
        QTest::addColumn<int>("collective");
        QTest::addColumn<int>("ranks");
        QTest::addColumn<double>("alpha");
        QTest::addColumn<double>("busbw");
        QTest::newRow("all_reduce 8") << int(Collective::AllReduce) << 8 << 25e-6 << 400.0;
        QTest::newRow("all_gather 16") << int(Collective::AllGather) << 16 << 60e-6 << 90.0;
        QTest::newRow("sendrecv 2") << int(Collective::SendRecv) << 2 << 8e-6 << 45.0;
        QTest::newRow("alpha 0") << int(Collective::ReduceScatter) << 4 << 0.0 << 200.0;
    }
    void fitRecoversExactParameters()
    {
        QFETCH(int, collective);
        QFETCH(int, ranks);
        QFETCH(double, alpha);
        QFETCH(double, busbw);
        const auto c = static_cast<Collective>(collective);
        const auto fit = fitAlphaBeta(c, ranks, exactPoints(c, ranks, alpha, busbw));
        QVERIFY(fit.valid);
        QVERIFY(std::abs(fit.busbw_gbps / busbw - 1) < 1e-9);
        QVERIFY(std::abs(fit.alpha_seconds - alpha) < 1e-12);
        QVERIFY(fit.rms_residual_pct < 1e-6);
        QCOMPARE(fit.points_used, 9);
    }

    void fitResidualsAndEdgeCases()
    {
        // Two points: the line passes through both (zero residuals).
        const auto two =
            fitAlphaBeta(Collective::SendRecv, 2, {point(1e6, 30e-6), point(1e8, 2.01e-3)});
        QVERIFY(two.valid);
        QVERIFY(std::abs(two.alpha_seconds - 10e-6) < 1e-12); // slope 2e-11 s/B -> 50 GB/s
        QVERIFY(std::abs(two.busbw_gbps - 50.0) < 1e-6);
        // Decreasing times would need α < 0: constrained to α = 0.
        const auto neg =
            fitAlphaBeta(Collective::SendRecv, 2, {point(1e6, 1e-6), point(2e6, 10e-6)});
        QVERIFY(neg.valid);
        QCOMPARE(neg.alpha_seconds, 0.0);
        // One point: α = 0 and its own bus bandwidth; residual 0.
        const auto one = fitAlphaBeta(Collective::AllReduce, 4, {point(1e9, 1e-2)});
        QVERIFY(one.valid);
        QVERIFY(std::abs(one.busbw_gbps - 100.0 * 1.5) < 1e-9);
        QVERIFY(std::abs(one.residual_pct.at(0)) < 1e-9);
        // Residual definition: 100·(fit − measured)/measured on a known three-point case.
        const auto three = fitAlphaBeta(
            Collective::SendRecv, 2, {point(1e6, 30e-6), point(1e7, 210e-6), point(1e8, 2.01e-3)});
        const double r1 =
            100.0 * (three.alpha_seconds + 1e7 / (three.busbw_gbps * 1e9) - 210e-6) / 210e-6;
        QVERIFY(std::abs(three.residual_pct.at(1) - r1) < 1e-9);
        QVERIFY(three.rms_residual_pct > 0);
        // Nothing usable.
        QVERIFY(!fitAlphaBeta(Collective::AllReduce, 4, {}).valid);
        QVERIFY(!fitAlphaBeta(Collective::AllReduce, 4, {point(0, 1e-5)}).valid);
    }

    void interpolationIsLogLogInsideAndFitShapedOutside()
    {
        const auto k =
            curve(Collective::SendRecv, 2, Span::ScaleUp,
                  {point(1 << 20, 100e-6), point(1 << 22, 200e-6), point(1 << 24, 700e-6)});
        // At the points: the measured times.
        QCOMPARE(*k.seconds(1 << 22), 200e-6);
        // Halfway in log size between 1 and 4 MiB: the geometric mean of the times.
        QVERIFY(std::abs(*k.seconds(1 << 21) - std::sqrt(100e-6 * 200e-6)) < 1e-15);
        // Outside: continuous at the ends, growing with the fit's slope above.
        QVERIFY(std::abs(*k.seconds((1 << 24) * 1.000001) - 700e-6) < 1e-9);
        const double above = *k.seconds(1 << 26);
        const double fitRatio = (k.fit.alpha_seconds + (1 << 26) / (k.fit.busbw_gbps * 1e9)) /
                                (k.fit.alpha_seconds + (1 << 24) / (k.fit.busbw_gbps * 1e9));
        QVERIFY(std::abs(above - 700e-6 * fitRatio) < 1e-12);
        QVERIFY(*k.seconds(1 << 10) <= 100e-6);
        QVERIFY(*k.seconds(1 << 10) > 0);
        QCOMPARE(*k.seconds(0), 0.0);
        QVERIFY(!CollectiveCurve{}.seconds(1e6).has_value());
    }

    void roundTrip()
    {
        const auto p = sampleProfile();
        const auto q = parseProfile(profileToText(p), "mem");
        QCOMPARE(q.schema, 1);
        QCOMPARE(q.tool, p.tool);
        QCOMPARE(q.system.gpu_name, p.system.gpu_name);
        QCOMPARE(q.system.gpu_count, 8);
        QCOMPARE(q.system.driver_version, p.system.driver_version);
        QCOMPARE(q.system.cuda_version, p.system.cuda_version);
        QCOMPARE(q.system.nccl_version, p.system.nccl_version);
        QCOMPARE(q.system.topology, p.system.topology);
        QCOMPARE(q.system.hosts, p.system.hosts);
        QCOMPARE(q.collectives.size(), p.collectives.size());
        for (size_t i = 0; i < p.collectives.size(); ++i) {
            const auto& a = p.collectives[i];
            const auto& b = q.collectives[i];
            QVERIFY(a.collective == b.collective);
            QCOMPARE(a.ranks, b.ranks);
            QVERIFY(a.span == b.span);
            QCOMPARE(a.dtype, b.dtype);
            QCOMPARE(a.points.size(), b.points.size());
            for (size_t k = 0; k < a.points.size(); ++k) {
                QCOMPARE(a.points[k].size_bytes, b.points[k].size_bytes);
                QCOMPARE(a.points[k].time_median_seconds, b.points[k].time_median_seconds);
                QVERIFY(std::abs(a.points[k].busbw_gbps / b.points[k].busbw_gbps - 1) < 1e-12);
                QCOMPARE(a.points[k].in_place_seconds, b.points[k].in_place_seconds);
            }
            QVERIFY(std::abs(a.fit.busbw_gbps / b.fit.busbw_gbps - 1) < 1e-12);
        }
        QCOMPARE(q.gemm.size(), size_t(2));
        QCOMPARE(q.gemm[1].label, std::string("mlp_up"));
        QCOMPARE(q.gemm[1].n, 28672.0);
        QCOMPARE(*q.hbm_gbps, 4300.0);
        QCOMPARE(*q.d2d_copy_gbps, 3900.0);
        QCOMPARE(q.warnings, p.warnings);
        // Keys of the profile format (measure/README.md).
        const auto j = profileToJson(p);
        QVERIFY(j["collectives"].contains("all_reduce"));
        QVERIFY(j["collectives"].contains("alltoall"));
        QCOMPARE(j["collectives"]["alltoall"][0]["span"].get<std::string>(), std::string("inter"));
        QVERIFY(j["collectives"]["all_reduce"][0]["points"][0]["time_seconds"].contains("median"));
    }

    void fileSaveIsAtomicAndReadable()
    {
        QTemporaryDir dir;
        const std::string path = (dir.path() + "/p.json").toStdString();
        saveProfileFile(sampleProfile(), path);
        saveProfileFile(sampleProfile(), path); // replaces
        QCOMPARE(loadProfileFile(path).collectives.size(), size_t(4));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{"p.json"});
        QVERIFY(
            !errorOf([] { saveProfileFile(sampleProfile(), "/nonexistent/dir/p.json"); }).empty());
        QVERIFY(errorOf([] { loadProfileFile("/nonexistent/p.json"); }).find("cannot open") !=
                std::string::npos);
    }

    void badProfilesGiveNamedErrors()
    {
        auto j = profileToJson(sampleProfile());
        j["schema"] = 3;
        const auto e2 = errorOf([&] { profileFromJson(j, "new.json"); });
        QVERIFY2(e2.find("schema 3") != std::string::npos, e2.c_str());
        QVERIFY(e2.find("(1 to 2)") != std::string::npos);
        j.erase("schema");
        QVERIFY(errorOf([&] { profileFromJson(j, "x"); }).find("schema: missing") !=
                std::string::npos);

        const std::string text = profileToText(sampleProfile());
        const auto cut =
            errorOf([&] { parseProfile(text.substr(0, text.size() / 2), "cut.json"); });
        QVERIFY2(cut.find("cut.json:") != std::string::npos &&
                     cut.find("malformed") != std::string::npos,
                 cut.c_str());

        auto k = profileToJson(sampleProfile());
        k["collectives"]["all_reduce"][0]["ranks"] = "eight";
        const auto e3 = errorOf([&] { profileFromJson(k, "p"); });
        QVERIFY2(e3.find("collectives.all_reduce[0].ranks") != std::string::npos, e3.c_str());

        auto m = profileToJson(sampleProfile());
        m["collectives"]["all_reduce"][0]["points"][2]["time_seconds"]["median"] = -1;
        const auto e4 = errorOf([&] { profileFromJson(m, "p"); });
        QVERIFY2(e4.find("points[2].time_seconds.median") != std::string::npos, e4.c_str());

        auto u = profileToJson(sampleProfile());
        u["collectives"]["all_to_all"] = nlohmann::json::array();
        QVERIFY(errorOf([&] { profileFromJson(u, "p"); }).find("collectives.all_to_all") !=
                std::string::npos);

        auto g = profileToJson(sampleProfile());
        g["gemm"][0]["dtype"] = "fp16";
        QVERIFY(errorOf([&] { profileFromJson(g, "p"); }).find("gemm[0].dtype") !=
                std::string::npos);
        QVERIFY(!errorOf([&] { parseProfile("[1,2]", "arr"); }).empty());
    }

    void measuredPerformance()
    {
        const CalibratedPerformance perf(sampleProfile(), 989.0, 1979.0);
        const MeasuredPerformance& mp = perf;
        const double s = 1 << 28;
        // Same group size: the curve itself (exact α-β points, so the formula is the oracle).
        const double t8 = 25e-6 + s * busFactor(Collective::AllReduce, 8) / 400e9;
        QVERIFY(std::abs(*mp.collectiveSeconds(Collective::AllReduce, 8, Span::ScaleUp, s) / t8 -
                         1) < 1e-9);
        // 16 ranks: nearest measured size is 8; same busbw, factor 2·15/16 instead of 2·7/8.
        QCOMPARE(perf.curveFor(Collective::AllReduce, 16, Span::ScaleUp)->ranks, 8);
        QVERIFY(std::abs(*mp.collectiveSeconds(Collective::AllReduce, 16, Span::ScaleUp, s) /
                             (t8 * (30.0 / 16) / (14.0 / 8)) -
                         1) < 1e-9);
        // 2 ranks: its own curve.
        QCOMPARE(perf.curveFor(Collective::AllReduce, 2, Span::ScaleUp)->ranks, 2);
        QCOMPARE(perf.curveFor(Collective::AllReduce, 3, Span::ScaleUp)->ranks, 2);
        // Not measured: nullopt, so the model keeps its datasheet figure.
        QVERIFY(!mp.collectiveSeconds(Collective::AllReduce, 8, Span::ScaleOut, s).has_value());
        QVERIFY(!mp.collectiveSeconds(Collective::Broadcast, 8, Span::ScaleUp, s).has_value());
        QCOMPARE(*mp.collectiveSeconds(Collective::AllReduce, 1, Span::ScaleUp, s), 0.0);
        // Point-to-point: α + S/B on the measured pair, whatever group size is asked.
        const double p2p = 12e-6 + s / 46e9;
        for (int n : {1, 2, 8})
            QVERIFY(
                std::abs(*mp.collectiveSeconds(Collective::SendRecv, n, Span::ScaleOut, s) / p2p -
                         1) < 1e-9);
        // GEMM: nearest shape over the dense peak.
        QVERIFY(std::abs(*mp.gemmEfficiency(8192, 8192, 8192, false) - 700.0 / 989.0) < 1e-12);
        QVERIFY(std::abs(*mp.gemmEfficiency(8192, 30000, 8192, false) - 760.0 / 989.0) < 1e-12);
        QVERIFY(!mp.gemmEfficiency(8192, 8192, 8192, true).has_value());
        QCOMPARE(*mp.hbmGbps(), 4300.0);
        const CalibratedPerformance noPeak(sampleProfile(), 0, 0);
        QVERIFY(!noPeak.gemmEfficiency(8192, 8192, 8192, false).has_value());
    }

    void loadFromScenario()
    {
        QTemporaryDir dir;
        saveProfileFile(sampleProfile(), (dir.path() + "/prof.json").toStdString());
        Scenario s;
        s.cluster.gpu.bf16_tflops = 989;
        QVERIFY(loadCalibration(s) == nullptr); // none named
        s.calibration = "prof.json";            // relative to the scenario's folder
        const auto perf = loadCalibration(s, dir.path().toStdString());
        QVERIFY(perf != nullptr);
        QVERIFY(std::abs(*perf->gemmEfficiency(8192, 8192, 8192, false) - 700.0 / 989.0) < 1e-12);
        s.calibration = (dir.path() + "/prof.json").toStdString(); // absolute
        QVERIFY(loadCalibration(s, "/elsewhere") != nullptr);
        s.calibration = "missing.json";
        QVERIFY(errorOf([&] {
                    loadCalibration(s, dir.path().toStdString());
                }).find("missing.json") != std::string::npos);
    }

    void profileFromAFixtureLogMatchesTheLog()
    {
        const std::string path =
            PARALENS_SOURCE_DIR "/tests/data/nccl/h100_1node_8gpu_five_collectives.txt";
        // The log's rows: 1 GiB all-reduce 4157.70 µs, 2 GiB all-gather 5394.10 µs.
        testnccl::checkProfileFromOneNodeLog(path, {"2.27.7", 4157.70, 2147483648.0, 5394.10});
    }
};

QTEST_APPLESS_MAIN(TestCalibration)
#include "test_calibration.moc"
