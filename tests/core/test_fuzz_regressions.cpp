// SPDX-License-Identifier: GPL-3.0-or-later
// Inputs the fuzz targets (fuzz/) found to crash or break an invariant, kept as regression tests.
// Each case names the target that found it; the fix is in the file named in the comment.

#include "core/calibration.h"
#include "core/error.h"
#include "core/evaluate.h"
#include "core/nccl_log.h"
#include "core/scenario_io.h"
#include "core/validate.h"
#include "estimate_invariants.h"
#include "test_scenarios.h"

#include <QFile>
#include <QTest>

using namespace paralens;

namespace {

std::string readData(const char* name)
{
    QFile f(QStringLiteral(PARALENS_SOURCE_DIR "/tests/data/fuzz/") + QLatin1String(name));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    const QByteArray bytes = f.readAll();
    return std::string(bytes.constData(), std::size_t(bytes.size()));
}

} // namespace

class TestFuzzRegressions : public QObject
{
    Q_OBJECT
private slots:
    // fuzz_profile: a number beyond double range made nlohmann throw out_of_range (not a
    // parse_error), which escaped parseProfile and terminated the program.
    // Fixed in core/calibration_io.cpp.
    void profileNumberOverflowIsAnInputError()
    {
        const std::string text = R"({"schema": 1, "tool": "x", "memory": {"hbm_gbps": 3.1e888}})";
        try {
            (void)parseProfile(text, "overflow.json");
            QFAIL("no error for a number out of range");
        } catch (const InputError& e) {
            const std::string what = e.what();
            QVERIFY2(what.find("overflow.json") != std::string::npos, what.c_str());
            QVERIFY2(what.find("3.1e888") != std::string::npos, what.c_str());
        }
    }

    // fuzz_nccl_log: a log whose type column holds a byte that is not UTF-8 ("double\xF1")
    // parsed fine, but writing the profile threw nlohmann type_error 316 (invalid UTF-8).
    // Fixed in core/calibration_io.cpp (profileToText replaces invalid bytes with U+FFFD).
    void profileFromLogWithInvalidUtf8IsWritten()
    {
        const std::string log = readData("nccl-log-invalid-utf8.txt");
        QVERIFY(!log.empty());
        QVERIFY(log.find("double\xF1") != std::string::npos);
        const NcclLogResult r = parseNcclLog(log);
        CalibrationProfile p;
        addNcclLog(p, r, "fuzz.log");
        QVERIFY(!p.collectives.empty());
        std::string text;
        try {
            text = profileToText(p);
        } catch (const std::exception& e) {
            QFAIL(e.what());
        }
        QVERIFY(text.find("\xEF\xBF\xBD") != std::string::npos); // U+FFFD in place of 0xF1
        const CalibrationProfile again = parseProfile(text, "again");
        QCOMPARE(again.collectives.size(), p.collectives.size());
    }

    // fuzz_nccl_log (10-minute run): a header line ending in "nccl-library=" took front() of
    // an empty token list (UBSan: reference binding to null pointer). Fixed in
    // core/nccl_log.cpp; the version is then simply unknown.
    void ncclLibraryWithoutVersion()
    {
        for (const char* line : {"# nccl-tests version 2.13.8 nccl-library=\n",
                                 "# paralens-measure 0.1.0 nccl-library=   \n"}) {
            const std::string log = std::string(line) +
                                    "#       size    count   type   redop    root     time   "
                                    "algbw   busbw #wrong     time   algbw   busbw #wrong\n"
                                    "     1048576   262144  float     sum      -1    100.0   "
                                    "10.49   18.35      0    100.0   10.49   18.35      0\n";
            NcclLogConfig config;
            config.default_op = "all_reduce";
            const NcclLogResult r = parseNcclLog(log, config);
            QCOMPARE(r.tables.size(), std::size_t(1));
            QVERIFY(r.tables.front().nccl_version.empty());
            QCOMPARE(r.tables.front().rows.size(), std::size_t(1));
        }
    }

    // fuzz_estimate: with full recomputation and CP > 1, the hidden CP time subtracted the
    // recomputed forward's exposed part twice, so time.overlapped.cp went negative.
    // Fixed in core/time.cpp. Oracle: full recomputation repeats the forward ring, cp − 1 = 3
    // hops of one K/V chunk, 2·(8192/4)·(1024/8)·2 bytes, per layer and micro-batch; the CP
    // group crosses nodes (TP fills one), so a hop is 8 µs + bytes / (50 GB/s × 0.92); every
    // part stays >= 0.
    void cpTimeWithFullRecomputeIsNonNegative()
    {
        using namespace testmodels;
        Scenario s = scenario(llama3_70b(), h100_sxm(), 8, 1, 1, 8);
        s.parallel.cp = 4;
        s.parallel.sequence_parallel = true;
        s.gpus = s.parallel.gpus();
        s.training.seq_len = 8192; // part of the CP exchange exposed, part hidden
        QVERIFY(validate(s).empty());
        s.training.recompute = Recompute::None;
        const Estimate none = evaluate(s);
        s.training.recompute = Recompute::Full;
        const Estimate full = evaluate(s);
        // The old formula only went wrong when some CP time was exposed: make sure it is.
        QVERIFY(none.time.exposed.cp > 0 && none.time.overlapped.cp > 0);
        QVERIFY2(full.time.exposed.cp >= 0 && full.time.overlapped.cp >= 0,
                 std::to_string(full.time.overlapped.cp).c_str());
        const double cpNone = none.time.exposed.cp + none.time.overlapped.cp;
        const double cpFull = full.time.exposed.cp + full.time.overlapped.cp;
        QVERIFY(cpNone > 0);
        const double hop = 8e-6 + 2.0 * 2048 * 128 * 2 / (50e9 * 0.92);
        const double repeated = 3 * hop * 80 * full.microbatches;
        QVERIFY2(std::abs((cpFull - cpNone) / repeated - 1) < 1e-9,
                 std::to_string((cpFull - cpNone) / repeated).c_str());
        QCOMPARE(invariants::check(s, full), std::string());
    }

    // The scenario fuzz_estimate reported (decoded from its crash input), kept verbatim.
    void fuzzEstimateScenario()
    {
        const Scenario s = parseScenario(R"({
          "model": "llama2-70b", "hardware": "h200", "gpus": 352,
          "parallel": {"tp": 4, "pp": 22, "dp": 1, "ep": 1, "cp": 4, "sequence_parallel": false,
                       "virtual_stages": 1, "schedule": "gpipe", "zero": 0, "shard_group": 0,
                       "offload_optimizer": false, "first_stage_layers": 33,
                       "last_stage_layers": 3},
          "training": {"seq_len": 512, "micro_batch": 1, "global_batch": 336417,
                       "precision": "bf16", "recompute": "full", "flash_attention": true,
                       "optimizer": "sgd", "framework": "fsdp"}})",
                                         "fuzz_estimate");
        QVERIFY(validate(s).empty());
        const Estimate e = evaluate(s);
        QCOMPARE(invariants::check(s, e), std::string());
    }
};

QTEST_GUILESS_MAIN(TestFuzzRegressions)
#include "test_fuzz_regressions.moc"
