// SPDX-License-Identifier: GPL-3.0-or-later
// The measured-runs file: what it reads, where a run's scenario file is found, and every kind of
// bad input as a named error with FILE:LINE:COL and the key path.
#include "core/accuracy.h"
#include "core/error.h"
#include "core/json_reader.h"
#include "core/scenario_io.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace paralens;

namespace {

const char* kScenario = R"({"model": "llama3-8b", "hardware": "h100-sxm", "gpus": 8,
  "parallel": {"tp": 2, "pp": 1, "dp": 4},
  "training": {"seq_len": 4096, "micro_batch": 1, "global_batch": 64}})";

void write(const QString& path, const QByteArray& text)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(text);
}

// The error text parseRunsText gives for `text`, or "" when it parses.
QString errorOf(const std::string& text)
{
    try {
        parseRunsText(text, "r.paralens-runs.json", ".", PresetLibrary::builtin());
    } catch (const InputError& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

// A one-run file whose "measured" object is `measured`.
std::string withMeasured(const std::string& measured)
{
    return std::string(R"({"runs": [{"name": "a", "scenario": {}, "measured": )") + measured +
           "}]}";
}

} // namespace

class TestRunsIo : public QObject
{
    Q_OBJECT
private slots:
    void readsInlineAndPathScenarios()
    {
        QTemporaryDir dir;
        QVERIFY(QDir(dir.path()).mkpath("scen"));
        write(dir.filePath("scen/eight.paralens.json"), kScenario);
        const std::string runs = std::string(R"({
  "runs": [
    {"name": "inline", "scenario": )") +
                                 kScenario + R"(,
     "measured": {"step_seconds": 2.5, "tokens_per_second": 1.0e5,
                  "tflops_per_gpu": 400, "flops_convention": "causal",
                  "peak_memory_gib": 61.5, "memory_kind": "reserved"},
     "source": "a log", "notes": "first"},
    {"name": "by path", "path": "scen/eight.paralens.json",
     "measured": {"mfu": 0.41, "flops_convention": "narayanan-eq3"}}
  ]
})";
        write(dir.filePath("m.paralens-runs.json"), QByteArray::fromStdString(runs));
        // Read from another working directory: "path" is relative to the runs file.
        const QString cwd = QDir::currentPath();
        QDir::setCurrent(QDir::tempPath());
        const RunSet set = readRunsFile(dir.filePath("m.paralens-runs.json").toStdString(),
                                        PresetLibrary::builtin());
        QDir::setCurrent(cwd);
        QCOMPARE(int(set.runs.size()), 2);
        const MeasuredRun& a = set.runs[0];
        QCOMPARE(a.name, std::string("inline"));
        QCOMPARE(a.source, std::string("a log"));
        QCOMPARE(a.notes, std::string("first"));
        QVERIFY(a.origin.ends_with("m.paralens-runs.json:3"));
        QCOMPARE(int(a.measured.size()), 4);
        QCOMPARE(a.measured[0].metric, RunMetric::StepSeconds);
        QCOMPARE(a.measured[0].value, 2.5);
        QCOMPARE(a.measured[1].metric, RunMetric::TokensPerSecond);
        QCOMPARE(a.measured[1].value, 1.0e5);
        QCOMPARE(a.measured[2].metric, RunMetric::TflopsPerGpu);
        QVERIFY(a.measured[2].flops == MeasuredFlops::Causal);
        QCOMPARE(a.measured[3].metric, RunMetric::PeakMemoryGib);
        QVERIFY(a.measured[3].memory == MemoryKind::Reserved);
        QCOMPARE(a.scenario.parallel.tp, 2);
        QCOMPARE(a.scenario.parallel.dp, 4);
        const MeasuredRun& b = set.runs[1];
        QVERIFY(b.scenario == a.scenario);
        QCOMPARE(b.measured[0].metric, RunMetric::Mfu);
        QVERIFY(b.measured[0].flops == MeasuredFlops::NarayananEq3);
        QVERIFY(set.assumptions.empty());
    }

    void errorsNameFileLineAndKey_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("expected");
        // Positions are 1-based; each expected string starts after "r.paralens-runs.json:".
        QTest::newRow("unknown key") << "{\"runs\": [{\"name\": \"a\", \"scenario\": {},\n"
                                        "  \"measured\": {\"step_seconds\": 1},\n"
                                        "  \"colour\": 1}]}"
                                     << "3:3: runs[0].colour: unknown key";
        QTest::newRow("unknown measured key")
            << QString::fromStdString(withMeasured("{\"step_seconds\": 1, \"steps\": 2}"))
            << "1:73: runs[0].measured.steps: unknown key";
        QTest::newRow("wrong type")
            << QString::fromStdString(withMeasured("{\"step_seconds\": \"1.5\"}"))
            << "1:54: runs[0].measured.step_seconds: expected a number, got a string";
        QTest::newRow("negative time")
            << QString::fromStdString(withMeasured("{\"step_seconds\": -1}"))
            << "runs[0].measured.step_seconds: -1 must be greater than 0";
        QTest::newRow("zero time") << QString::fromStdString(withMeasured("{\"step_seconds\": 0}"))
                                   << "runs[0].measured.step_seconds: 0 must be greater than 0";
        QTest::newRow("NaN") << QString::fromStdString(withMeasured("{\"step_seconds\": NaN}"))
                             << "1:70: malformed JSON";
        QTest::newRow("huge time")
            << QString::fromStdString(withMeasured("{\"step_seconds\": 1e300}"))
            << "runs[0].measured.step_seconds: 1e+300 exceeds the bound";
        QTest::newRow("mfu above 1") << QString::fromStdString(withMeasured(
                                            "{\"mfu\": 1.5, \"flops_convention\": \"full\"}"))
                                     << "runs[0].measured.mfu: 1.5 exceeds the bound 1";
        QTest::newRow("convention without tflops")
            << QString::fromStdString(
                   withMeasured("{\"step_seconds\": 1, \"flops_convention\": \"full\"}"))
            << "runs[0].measured.flops_convention: given without tflops_per_gpu or mfu";
        QTest::newRow("tflops without convention")
            << QString::fromStdString(withMeasured("{\"tflops_per_gpu\": 150}"))
            << "runs[0].measured.tflops_per_gpu: needs \"flops_convention\"";
        QTest::newRow("bad convention")
            << QString::fromStdString(
                   withMeasured("{\"tflops_per_gpu\": 150, \"flops_convention\": \"half\"}"))
            << "runs[0].measured.flops_convention: 'half' is not one of full, causal, "
               "narayanan-eq3";
        QTest::newRow("bad memory kind")
            << QString::fromStdString(
                   withMeasured("{\"peak_memory_gib\": 50, \"memory_kind\": \"peak\"}"))
            << "runs[0].measured.memory_kind: 'peak' is not one of allocated, reserved";
        QTest::newRow("memory without kind")
            << QString::fromStdString(withMeasured("{\"peak_memory_gib\": 50}"))
            << "runs[0].measured.peak_memory_gib: needs \"memory_kind\"";
        QTest::newRow("kind without memory")
            << QString::fromStdString(
                   withMeasured("{\"step_seconds\": 1, \"memory_kind\": \"allocated\"}"))
            << "runs[0].measured.memory_kind: given without peak_memory_gib";
        QTest::newRow("nothing measured") << QString::fromStdString(withMeasured("{}"))
                                          << "1:41: runs[0].measured: no measured figure";
        QTest::newRow("measured not an object")
            << QString::fromStdString(withMeasured("3"))
            << "runs[0].measured: expected an object, got an integer";
        QTest::newRow("no scenario")
            << "{\"runs\": [{\"name\": \"a\", \"measured\": {\"step_seconds\": 1}}]}"
            << "1:11: runs[0]: needs a \"scenario\" object or a \"path\"";
        QTest::newRow("scenario and path")
            << "{\"runs\": [{\"name\": \"a\", \"scenario\": {}, \"path\": \"x.paralens.json\", "
               "\"measured\": {\"step_seconds\": 1}}]}"
            << "1:41: runs[0].path: give either \"scenario\" or \"path\", not both";
        QTest::newRow("scenario a string")
            << "{\"runs\": [{\"name\": \"a\", \"scenario\": \"x.json\", \"measured\": "
               "{\"step_seconds\": 1}}]}"
            << "runs[0].scenario: expected an object, got a string";
        QTest::newRow("bad inline scenario")
            << "{\"runs\": [{\"name\": \"a\",\n \"scenario\": {\"parallel\":\n  {\"tp\": 0}},\n"
               " \"measured\": {\"step_seconds\": 1}}]}"
            << "3:4: runs[0].scenario.parallel.tp: 0 is below the minimum 1";
        QTest::newRow("unknown scenario key")
            << "{\"runs\": [{\"name\": \"a\", \"scenario\": {\"modle\": 1}, \"measured\": "
               "{\"step_seconds\": 1}}]}"
            << "1:38: runs[0].scenario.modle: unknown key";
        QTest::newRow("missing scenario file")
            << "{\"runs\": [{\"name\": \"a\", \"path\": \"nowhere.paralens.json\", \"measured\": "
               "{\"step_seconds\": 1}}]}"
            << "1:25: runs[0].path: nowhere.paralens.json: cannot open the file";
        QTest::newRow("path not a string")
            << "{\"runs\": [{\"name\": \"a\", \"path\": 3, \"measured\": {\"step_seconds\": 1}}]}"
            << "runs[0].path: expected the path of a .paralens.json file";
        QTest::newRow("no name")
            << "{\"runs\": [{\"scenario\": {}, \"measured\": {\"step_seconds\": "
               "1}}]}"
            << "1:11: runs[0].name: required key missing";
        QTest::newRow("empty name")
            << "{\"runs\": [{\"name\": \"\", \"scenario\": {}, \"measured\": {\"step_seconds\": "
               "1}}]}"
            << "runs[0].name: must not be empty";
        QTest::newRow("repeated name")
            << "{\"runs\": [\n{\"name\": \"a\", \"scenario\": {}, \"measured\": {\"step_seconds\": "
               "1}},\n{\"name\": \"a\", \"scenario\": {}, \"measured\": {\"step_seconds\": 2}}]}"
            << "3:2: runs[1].name: 'a' is already the name of runs[0]";
        QTest::newRow("duplicate key")
            << QString::fromStdString(withMeasured("{\"step_seconds\": 1, \"step_seconds\": 2}"))
            << "duplicate key 'step_seconds'";
        QTest::newRow("no runs") << "{}"
                                 << "1:1: runs: required key missing";
        QTest::newRow("runs not a list") << "{\"runs\": {}}"
                                         << "1:2: runs: expected an array of runs, got an object";
        QTest::newRow("empty runs") << "{\"runs\": []}"
                                    << "1:2: runs: the list is empty";
        QTest::newRow("top level array") << "[]"
                                         << "expected a JSON object at the top level";
        QTest::newRow("unknown top key") << "{\"runs\": [], \"version\": 2}"
                                         << "1:14: version: unknown key";
        QTest::newRow("truncated") << "{\"runs\": [{\"name\": \"a\", \"scen"
                                   << "1:30: malformed JSON";
    }

    void errorsNameFileLineAndKey()
    {
        QFETCH(QString, text);
        QFETCH(QString, expected);
        const QString err = errorOf(text.toStdString());
        QVERIFY2(err.startsWith("r.paralens-runs.json"), qPrintable(err));
        QVERIFY2(err.contains(expected), qPrintable(err + "\n  expected: " + expected));
    }

    void scenarioFileErrorsNameBothFiles()
    {
        QTemporaryDir dir;
        write(dir.filePath("bad.paralens.json"), R"({"parallel": {"tp": "two"}})");
        write(dir.filePath("r.paralens-runs.json"),
              R"({"runs": [{"name": "a", "path": "bad.paralens.json",
                            "measured": {"step_seconds": 1}}]})");
        try {
            readRunsFile(dir.filePath("r.paralens-runs.json").toStdString(),
                         PresetLibrary::builtin());
            QFAIL("accepted");
        } catch (const InputError& e) {
            const QString what = e.what();
            QVERIFY2(what.contains("r.paralens-runs.json:1:25: runs[0].path: "), qPrintable(what));
            QVERIFY2(what.contains("bad.paralens.json: parallel.tp: expected an integer"),
                     qPrintable(what));
        }
    }

    void oversizedFileIsRefusedBeforeParsing()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("big.paralens-runs.json");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        QVERIFY(f.resize(100 * 1024 * 1024)); // 100 MB, sparse
        f.close();
        try {
            readRunsFile(path.toStdString(), PresetLibrary::builtin());
            QFAIL("accepted");
        } catch (const InputError& e) {
            QVERIFY2(QString(e.what()).contains("above the limit of 16 MiB"), e.what());
        }
    }

    void everyPrefixParsesOrNamesTheError()
    {
        const std::string text = std::string(R"({"runs": [{"name": "a", "scenario": )") +
                                 kScenario + R"(, "measured": {"step_seconds": 1.5}}]})";
        int parsed = 0;
        for (std::size_t n = 0; n <= text.size(); ++n) {
            const QString err = errorOf(text.substr(0, n));
            if (err.isEmpty())
                ++parsed;
            else
                QVERIFY2(err.startsWith("r.paralens-runs.json:"), qPrintable(err));
        }
        QCOMPARE(parsed, 1); // only the whole text
    }

    void locateFindsKeysAndElements()
    {
        const std::string t = "{\n \"a\": [1,\n  {\"b\": 2}],\n \"c\": {\"d\": [[3]]}\n}";
        QCOMPARE(jsonio::locate(t, "a"), std::string("2:2"));
        QCOMPARE(jsonio::locate(t, "a[0]"), std::string("2:8"));
        QCOMPARE(jsonio::locate(t, "a[1]"), std::string("3:3"));
        QCOMPARE(jsonio::locate(t, "a[1].b"), std::string("3:4"));
        QCOMPARE(jsonio::locate(t, "c.d[0]"), std::string("4:14"));
        QCOMPARE(jsonio::locate(t, "c.d[0][0]"), std::string("4:15"));
        QCOMPARE(jsonio::locate(t, "a[1].missing"), std::string("3:3")); // deepest part there
        QCOMPARE(jsonio::locate(t, "zzz"), std::string("1:1"));
        QCOMPARE(jsonio::locate(t, ""), std::string("1:1"));
        // Not JSON: some position inside, no read past the end.
        for (const char* bad : {"", "{", "[", "\"", "{\"a\"", "{\"a\":[", "}}]]", "{\"a\\"})
            QVERIFY(!jsonio::locate(bad, "a[3].b").empty());
    }
};

QTEST_GUILESS_MAIN(TestRunsIo)
#include "test_runs_io.moc"
