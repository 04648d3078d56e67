// SPDX-License-Identifier: GPL-3.0-or-later
// `paralens calibrate --runs` end to end: runs measured with known constants are fitted back,
// the profile carries the constants into `paralens eval`, bad input is a named error.
#include "cli_runner.h"
#include "core/calibration.h"
#include "core/evaluate.h"
#include "core/scenario_io.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

using namespace paralens;
using paralens::testcli::run;

namespace {

// The known constants the "measurements" were made with.
ModelConstants truth()
{
    ModelConstants k;
    k.gemm_efficiency = 0.6;
    k.scale_up_efficiency = 0.7;
    return k;
}

Scenario plan(int tp, int dp, int mb, int batch)
{
    Scenario s = defaultScenario(); // Llama-3 70B on H100
    s.model_id = "llama3-8b";
    s.model = *PresetLibrary::builtin().model("llama3-8b");
    s.parallel.tp = tp;
    s.parallel.pp = 1;
    s.parallel.schedule = Schedule::OneF1B;
    s.parallel.virtual_stages = 1;
    s.parallel.dp = dp;
    s.parallel.sequence_parallel = tp > 1;
    s.gpus = tp * dp;
    s.training.micro_batch = mb;
    s.training.global_batch = batch;
    s.training.seq_len = 4096;
    return s;
}

std::vector<Scenario> plans()
{
    std::vector<Scenario> out;
    for (int tp : {2, 4, 8})
        for (int mb : {1, 2})
            for (int batch : {32, 128})
                out.push_back(plan(tp, 16 / tp, mb, batch));
    return out;
}

QString writeRuns(const QTemporaryDir& dir, std::size_t count = 0)
{
    nlohmann::json runs = nlohmann::json::array();
    const auto ps = plans();
    for (std::size_t i = 0; i < ps.size() && (count == 0 || i < count); ++i) {
        Estimate e;
        evaluate(ps[i], e, nullptr, truth());
        runs.push_back({{"name", "run " + std::to_string(i)},
                        {"scenario", scenarioToJson(ps[i])},
                        {"measured", {{"step_seconds", e.time.step_seconds}}},
                        {"source", "the model with known constants"}});
    }
    const QString path = dir.filePath("known.paralens-runs.json");
    QFile f(path);
    f.open(QIODevice::WriteOnly);
    f.write(QByteArray::fromStdString(nlohmann::json{{"runs", runs}}.dump(2)));
    return path;
}

nlohmann::json parse(const QString& out)
{
    return nlohmann::json::parse(out.toStdString());
}

} // namespace

class TestCliFit : public QObject
{
    Q_OBJECT
private slots:
    void fitsKnownConstantsIntoAProfile()
    {
        QTemporaryDir dir;
        const QString runs = writeRuns(dir);
        const QString out = dir.filePath("fitted.json");
        const auto r = run({"calibrate", "--runs", runs, "--fit",
                            "gemm_efficiency,scale_up_efficiency", "--out", out, "--json"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const auto j = parse(r.out);
        QVERIFY(j["fit"]["mape"].get<double>() < 1e-3);
        QVERIFY(j["fit"]["mape_before"].get<double>() > 0.05);
        QCOMPARE(j["fit"]["runs"].get<int>(), int(plans().size()));
        QVERIFY(j["holdout"]["mape"].is_null());
        QCOMPARE(j["holdout"]["runs"].get<int>(), 0);
        const std::string gpu = plan(2, 8, 1, 32).cluster.gpu.name;
        QVERIFY2(j["constants"]["gemm_efficiency"].contains(gpu), r.out.left(2000).toUtf8());
        const double gemm = j["constants"]["gemm_efficiency"][gpu].get<double>();
        QVERIFY2(std::abs(gemm - 0.6) < 0.006, qPrintable(QString::number(gemm)));
        QVERIFY(std::abs(j["constants"]["scale_up_efficiency"].get<double>() - 0.7) < 0.007);
        QCOMPARE(j["residuals"].size(), plans().size());

        // The profile: schema 2, the constants, and `eval` on a scenario naming it uses them.
        const CalibrationProfile p = loadProfileFile(out.toStdString());
        QCOMPARE(p.schema, 2);
        QVERIFY(p.model_constants && p.model_constants->scale_up_efficiency);
        Scenario s = plan(4, 4, 1, 64);
        s.calibration = "fitted.json";
        const QString scenario = dir.filePath("s.paralens.json");
        QFile f(scenario);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray::fromStdString(scenarioToText(s)));
        f.close();
        const auto e = run({"eval", scenario, "--json"});
        QVERIFY2(e.code == 0, qPrintable(e.err));
        Estimate want;
        evaluate(plan(4, 4, 1, 64), want, nullptr, truth());
        const double step = parse(e.out)["time"]["step_seconds"].get<double>();
        QVERIFY2(std::abs(step / want.time.step_seconds - 1) < 2e-3,
                 qPrintable(QString("%1 vs %2").arg(step).arg(want.time.step_seconds)));
    }

    void holdoutIsReported()
    {
        QTemporaryDir dir;
        const auto r = run({"calibrate", "--runs", writeRuns(dir), "--fit",
                            "gemm_efficiency,scale_up_efficiency", "--holdout", "0.5", "--seed",
                            "3", "--out", dir.filePath("p.json"), "--json"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const auto j = parse(r.out);
        QCOMPARE(j["holdout"]["runs"].get<int>(), int(plans().size()) / 2);
        QVERIFY(j["holdout"]["mape"].get<double>() < 2e-3);
        QVERIFY(j["holdout"]["mape_before"].get<double>() > 0.05);
        QCOMPARE(j["holdout"]["seed"].get<int>(), 3);
        // The text report names the constants and both errors.
        const auto t = run({"calibrate", "--runs", writeRuns(dir), "--fit",
                            "gemm_efficiency,scale_up_efficiency,scale_out_efficiency", "--holdout",
                            "0.5", "--out", dir.filePath("p.json")});
        QVERIFY2(t.code == 0, qPrintable(t.err));
        QVERIFY(t.out.contains("gemm_efficiency[H100-SXM5-80GB]"));
        QVERIFY(t.out.contains("fit 6 runs: MAPE"));
        QVERIFY(t.out.contains("hold-out 6 runs: MAPE"));
        QVERIFY(t.out.contains("[0.25, 0.95]")); // the bounds are printed with the constants
    }

    void badInputIsANamedError()
    {
        QTemporaryDir dir;
        const QString runs = writeRuns(dir);
        QCOMPARE(run({"calibrate", "--runs", runs}).code, 2); // no --out
        const auto fitName = run(
            {"calibrate", "--runs", runs, "--fit", "gemm_eff", "--out", dir.filePath("p.json")});
        QCOMPARE(fitName.code, 1);
        QVERIFY2(fitName.err.contains("--fit: unknown constant 'gemm_eff'"),
                 qPrintable(fitName.err));
        const auto hold =
            run({"calibrate", "--runs", runs, "--holdout", "1.5", "--out", dir.filePath("p.json")});
        QCOMPARE(hold.code, 1);
        QVERIFY2(hold.err.contains("hold-out share"), qPrintable(hold.err));
        const auto one =
            run({"calibrate", "--runs", writeRuns(dir, 1), "--out", dir.filePath("p.json")});
        QCOMPARE(one.code, 1);
        QVERIFY2(one.err.contains("cannot determine"), qPrintable(one.err));
        const QString csv = dir.filePath("iterations.csv");
        QFile f(csv);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("# GPUs,global batch\n");
        f.close();
        const auto noHw = run({"calibrate", "--runs", csv, "--out", dir.filePath("p.json")});
        QCOMPARE(noHw.code, 1);
        QVERIFY2(noHw.err.contains("--hardware"), qPrintable(noHw.err));
        QVERIFY(!QFile::exists(dir.filePath("p.json"))); // nothing written on failure
    }
};

QTEST_GUILESS_MAIN(TestCliFit)
#include "test_cli_fit.moc"
