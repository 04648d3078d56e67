// SPDX-License-Identifier: GPL-3.0-or-later
// Guided tours: merge patches build each step's scenario (derived dp, null restoring defaults),
// placeholders print hand-made figures with their units, expect checks, every named error with
// its file, line, column and step, and the bundled tours load.
#include "core/error.h"
#include "core/tour.h"
#include "core/tour_caption.h"
#include "core/units.h"

#include <QTest>

using namespace paralens;

namespace {

const std::string kDir = PARALENS_SOURCE_DIR "/tests/data/tours/";

QString errorOf(const std::string& text)
{
    try {
        parseTour(text, "t.paralens-tour.json");
    } catch (const InputError& e) {
        return QString::fromStdString(e.what());
    }
    return QString();
}

// A one-step tour text; `first` is spliced into the first step, `second` (if any) is a second
// step object. Line 3 holds the first step, line 4 the second.
std::string tourText(const std::string& first, const std::string& second = "")
{
    return "{\"title\": \"T\",\n\"steps\": [\n"
           "{\"title\": \"One\", \"caption\": \"x\", \"scenario\": {\"model\": \"llama3-8b\", "
           "\"gpus\": 8}" +
           first + "}" + (second.empty() ? "" : ",\n" + second) + "\n]}";
}

} // namespace

class TestTour : public QObject
{
    Q_OBJECT
private slots:
    void patchesBuildEachStep()
    {
        const Tour t = loadTourFile(kDir + "lesson.paralens-tour.json");
        QCOMPARE(t.title, std::string("Hand-made lesson"));
        QCOMPARE(t.steps.size(), std::size_t(4));
        // Step 1: dp derived from gpus = 64 over tp·pp = 32.
        QCOMPARE(t.steps[0].scenario.parallel.dp, 2);
        QVERIFY(!t.steps[0].patched);
        QVERIFY(t.steps[0].view == TourView::Memory); // the default
        // Step 2 patches pp only: dp is derived again (64 / (8·2)), tp is kept.
        QCOMPARE(t.steps[1].scenario.parallel.pp, 2);
        QCOMPARE(t.steps[1].scenario.parallel.tp, 8);
        QCOMPARE(t.steps[1].scenario.parallel.dp, 4);
        QVERIFY(t.steps[1].patched);
        QVERIFY(t.steps[1].view == TourView::Gantt);
        // Step 3: "pp": null removes the key, so the default 1 applies; dp = 64 / 2.
        QCOMPARE(t.steps[2].scenario.parallel.pp, 1);
        QCOMPARE(t.steps[2].scenario.parallel.tp, 2);
        QCOMPARE(t.steps[2].scenario.parallel.dp, 32);
        // Keys the patches never named are carried along.
        QCOMPARE(t.steps[2].scenario.training.seq_len, 4096);
        QCOMPARE(t.steps[2].scenario.training.global_batch, 64);
        // Step 4 swaps the hardware preset.
        QCOMPARE(t.steps[3].scenario.hardware_id, std::string("b200"));
        QCOMPARE(t.steps[3].scenario.parallel.zero, 1);
        QVERIFY(t.steps[3].view == TourView::Topology);
        // Steps know their line in the file (for messages): the step objects open on these.
        QCOMPARE(t.steps[0].line, 5);
        QCOMPARE(t.steps[1].line, 16);
    }

    void captionsCiteLiveFigures()
    {
        const Tour t = loadTourFile(kDir + "lesson.paralens-tour.json");
        const auto r = runTour(t);
        QCOMPARE(r.size(), std::size_t(4));
        // m = B / (b·dp): 64 / 2 = 32, then 64 / 4 = 16.
        QCOMPARE(r[0].caption, std::string("TP 8 PP 4 DP 2 of 64; m 32 {literal}"));
        QCOMPARE(r[1].caption, std::string("4 → 2, dp 4, m 16"));
        // 70B at TP 2 without ZeRO: 16 bytes per parameter over 2 GPUs is far above 80 GiB.
        QCOMPARE(r[2].caption, std::string("8/2/1/32: does not fit"));
        QVERIFY(r[2].failures.empty());
        // The B200 preset's 180 GiB.
        QCOMPARE(r[3].caption, std::string("NVIDIA B200 (HGX/DGX): 180.0\u00a0GiB"));
    }

    void figuresPrintWithTheirUnits()
    {
        // A hand-made estimate: every printed value is known in advance.
        Scenario s;
        s.gpus = 64;
        s.parallel.tp = 8;
        Estimate e;
        e.fits = true;
        e.peak_bytes = 62.44 * units::kGiB;
        e.capacity_bytes = 80 * units::kGiB;
        e.throughput.mfu = 0.4132;
        e.throughput.tokens_per_second = 1234567.4;
        e.throughput.tflops_per_gpu = 427.6;
        e.time.step_seconds = 2.414;
        e.time.bubble_seconds = 0.09334;
        e.time.bubble_fraction = 0.222;
        StageMemory st;
        st.parameters = 4.1 * units::kGiB;
        e.stages.push_back(st);
        const tour::StepFigures f{&s, &e};
        QCOMPARE(tour::fillCaption("{peak_gib} of {capacity_gib}, {headroom_gib} free", f, {}),
                 std::string("62.4\u00a0GiB of 80.0\u00a0GiB, 17.6\u00a0GiB free"));
        QCOMPARE(tour::fillCaption("{mfu} {bubble} {tokens_per_s} {tflops}", f, {}),
                 std::string("41.3\u00a0% 22.2\u00a0% 1,234,567 428\u00a0TFLOP/s"));
        QCOMPARE(tour::fillCaption("{step_s}, {bubble_s}, {params_gib}, TP {tp}, {fits}", f, {}),
                 std::string("2.41\u00a0s, 93.3\u00a0ms, 4.1\u00a0GiB, TP 8, fits"));
        // Values for checks are in the printed unit: percent, GiB, seconds.
        QCOMPARE(*tour::figureValue("mfu", f), 41.32);
        QCOMPARE(*tour::figureValue("peak_gib", f), 62.44);
        QVERIFY(!tour::figureValue("fits", f)); // not numeric
        QVERIFY(!tour::figureValue("nope", f));
        // A figure with no finite value is a named error, not "nan".
        e.throughput.mfu = std::nan("");
        try {
            tour::fillCaption("{mfu}", f, {});
            QFAIL("expected an error");
        } catch (const InputError& err) {
            QVERIFY(QString(err.what()).contains("{mfu}"));
        }
    }

    void expectChecksReportEachBound()
    {
        Scenario s;
        Estimate e;
        e.fits = false;
        e.throughput.mfu = 0.382;
        TourExpect ex;
        ex.fits = true;
        ex.ranges.push_back({"mfu", 40, 46});
        ex.ranges.push_back({"mfu", 30, 40});
        const auto failures = checkExpect(ex, s, e);
        QCOMPARE(failures.size(), std::size_t(2));
        QCOMPARE(failures[0], std::string("fits = false, expected true"));
        QCOMPARE(failures[1], std::string("mfu = 38.2, expected 40..46"));
    }

    void namedErrors_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QStringList>("expected");
        auto row = [](const char* name, const std::string& text, QStringList expected) {
            QTest::newRow(name) << QString::fromStdString(text) << expected;
        };
        row("malformed JSON", "{\"title\": \"T\",\n\"steps\": [,]}",
            {"t.paralens-tour.json:2:", "malformed JSON"});
        row("no steps", "{\"title\": \"T\", \"steps\": []}", {"steps:", "non-empty array"});
        row("no title", "{\"steps\": [{}]}", {"title: required key missing"});
        row("unknown top-level key", "{\"title\": \"T\", \"colour\": 1, \"steps\": [{}]}",
            {":1:16:", "colour"});
        row("unknown step key", tourText(", \"colour\": \"red\""),
            {":3:", "step 1 ('One')", "steps[0].colour"});
        row("first step patches",
            "{\"title\": \"T\", \"steps\": [\n{\"title\": \"A\", "
            "\"caption\": \"x\", \"patch\": {}}]}",
            {":2:", "step 1 ('A')", "no scenario to patch"});
        row("scenario and patch",
            tourText("", "{\"title\": \"Two\", \"caption\": \"x\", "
                         "\"patch\": {}, \"scenario\": {}}"),
            {":4:", "step 2 ('Two')", "either scenario or patch"});
        row("neither", tourText("", "{\"title\": \"Two\", \"caption\": \"x\"}"),
            {"step 2 ('Two')", "needs a scenario or a patch"});
        row("patch not an object",
            tourText("", "{\"title\": \"Two\", \"caption\": \"x\", \"patch\": [1, 2]}"),
            {":4:", "step 2 ('Two')", "merge patch"});
        // The key the patch broke is located inside the patch.
        row("patch breaks the scenario",
            tourText("", "{\"title\": \"Two\", \"caption\": \"x\", \"patch\": {\"parallel\": "
                         "{\"tp\": 0}}}"),
            {":4:57:", "step 2 ('Two')", "parallel.tp"}); // the key "tp" starts at column 57
        row("plan cannot run",
            tourText("", "{\"title\": \"Two\", \"caption\": \"x\", \"patch\": {\"parallel\": "
                         "{\"tp\": 16}, \"gpus\": 16}}"),
            {":4:", "step 2 ('Two')", "the plan cannot run", "kv_heads"});
        row("calibration",
            tourText("", "{\"title\": \"Two\", \"caption\": \"x\", \"patch\": "
                         "{\"calibration\": \"p.json\"}}"),
            {"step 2 ('Two')", "calibration"});
        row("unknown view", tourText(", \"view\": \"pie\""),
            {"step 1 ('One')", "view", "'pie' is not one of"});
        row("unknown placeholder",
            tourText("", "{\"title\": \"Two\", \"caption\": \"{peak}\", \"patch\": {}}"),
            {":4:", "step 2 ('Two')", "caption: {peak}: unknown placeholder"});
        row("prev in the first step",
            "{\"title\": \"T\", \"steps\": [{\"title\": \"A\", \"caption\": \"{prev.mfu}\", "
            "\"scenario\": {\"model\": \"llama3-8b\", \"gpus\": 8}}]}",
            {"step 1 ('A')", "{prev.mfu}: the first step has no previous step"});
        row("later step",
            tourText("", "{\"title\": \"Two\", \"caption\": \"{step2.mfu}\", "
                         "\"patch\": {}}"),
            {"step 2 ('Two')", "step 2 is not an earlier step"});
        row("bad step prefix",
            tourText("", "{\"title\": \"Two\", \"caption\": \"{next.mfu}\", "
                         "\"patch\": {}}"),
            {"step 2 ('Two')", "'next.' is not prev. or stepN."});
        row("unclosed brace",
            tourText("", "{\"title\": \"Two\", \"caption\": \"a {mfu\", \"patch\": {}}"),
            {"step 2 ('Two')", "never closed"});
        row("stray brace",
            tourText("", "{\"title\": \"Two\", \"caption\": \"a } b\", \"patch\": {}}"),
            {"step 2 ('Two')", "without its '{'"});
        row("unknown check", tourText(", \"expect\": {\"speed\": [1, 2]}"),
            {"step 1 ('One')", "steps[0].expect.speed", "unknown check"});
        row("check on a text figure", tourText(", \"expect\": {\"model\": [1, 2]}"),
            {"steps[0].expect.model", "unknown check"});
        row("range not a pair", tourText(", \"expect\": {\"mfu\": [1]}"),
            {"steps[0].expect.mfu", "range [lo, hi]"});
        row("range reversed", tourText(", \"expect\": {\"mfu\": [50, 40]}"),
            {"steps[0].expect.mfu", "lo <= hi"});
        row("fits not a boolean", tourText(", \"expect\": {\"fits\": 1}"),
            {"steps[0].expect.fits", "boolean"});
    }

    void namedErrors()
    {
        QFETCH(QString, text);
        QFETCH(QStringList, expected);
        const QString error = errorOf(text.toStdString());
        QVERIFY2(!error.isEmpty(), qPrintable(text));
        QVERIFY2(error.startsWith("t.paralens-tour.json:"), qPrintable(error));
        for (const QString& part : expected)
            QVERIFY2(error.contains(part), qPrintable(error + "\n  lacks: " + part));
    }

    void errorFilesInTestData()
    {
        try {
            loadTourFile(kDir + "bad-patch.paralens-tour.json");
            QFAIL("expected an error");
        } catch (const InputError& e) {
            const QString m = e.what();
            QVERIFY2(m.contains("bad-patch.paralens-tour.json:5:") && m.contains("step 2 ('Two')"),
                     qPrintable(m));
        }
        try {
            loadTourFile(kDir + "missing.paralens-tour.json");
            QFAIL("expected an error");
        } catch (const InputError& e) {
            QVERIFY(QString(e.what()).contains("missing.paralens-tour.json"));
        }
    }

    void bundledToursLoad()
    {
        const auto tours = bundledTours();
        QVERIFY(tours.size() >= 5);
        for (const BundledTour& b : tours) {
            const Tour t = parseTour(b.text, b.id);
            QVERIFY2(t.steps.size() >= 5, b.id.c_str());
            QVERIFY2(t.steps.front().expect.fits.has_value(), b.id.c_str());
        }
    }
};

QTEST_APPLESS_MAIN(TestTour)
#include "test_tour.moc"
