// SPDX-License-Identifier: GPL-3.0-or-later
// The measured-iteration CSV reader on small CSVs written here: what every row becomes, both
// layouts, and hostile input (missing, unknown and repeated columns, units in cells, NaN,
// negative times, truncation, a 100 MB file) as named errors with FILE:LINE and the column.
#include "core/accuracy.h"
#include "core/error.h"
#include "core/evaluate.h"
#include "core/framework.h"
#include "core/scenario_io.h"
#include "core/validate.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace paralens;

namespace {

const char* kMultiHeader = "Parameters (billion),# GPUs,global batch,micro batch,hidden size,"
                           "attention heads,# layers,sequence length,tensor parallelism,"
                           "data parallelism,pipeline parallelism,iteration time (ms)\n";
const char* kSingleHeader = "# GPUs,global batch,micro batch,hidden size,attention heads,"
                            "# layers,sequence length,tensor parallelism,data parallelism,"
                            "pipeline parallelism,iteration time (ms)\n";

Scenario cluster()
{
    Scenario s;
    s.hardware_id = "a100-80gb";
    s.cluster = *PresetLibrary::builtin().hardware("a100-80gb");
    return s;
}

RunSet parse(const std::string& text)
{
    return parseIterationCsv(text, "m.csv", cluster());
}

QString errorOf(const std::string& text)
{
    try {
        parse(text);
    } catch (const InputError& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

} // namespace

class TestIterationCsv : public QObject
{
    Q_OBJECT
private slots:
    void multiNodeRowBecomesAScenario()
    {
        const RunSet set =
            parse(std::string(kMultiHeader) + "3.6,64,512,8,3072,32,30,2048,2,32,1,3566.5\n"
                                              "175,512,1536,2,12288,96,96,2048,4,4,32,41000\n");
        QCOMPARE(set.file, std::string("m.csv"));
        QCOMPARE(int(set.runs.size()), 2);
        const MeasuredRun& r = set.runs[0];
        const Scenario& s = r.scenario;
        QCOMPARE(s.model.layers, 30);
        QCOMPARE(s.model.hidden, std::int64_t(3072));
        QCOMPARE(s.model.heads, 32);
        QCOMPARE(s.model.kv_heads, 32);                       // MHA
        QCOMPARE(s.model.ffn_hidden, std::int64_t(4 * 3072)); // GeLU MLP, 4h
        QCOMPARE(s.model.vocab, std::int64_t(50257));
        QVERIFY(!s.model.gated_mlp);
        QVERIFY(!s.model.tied_embeddings);
        QVERIFY(!s.model.isMoe());
        QVERIFY(QString::fromStdString(s.model.name).startsWith("GPT 3.6B"));
        QCOMPARE(s.gpus, 64);
        QCOMPARE(s.parallel.tp, 2);
        QCOMPARE(s.parallel.dp, 32);
        QCOMPARE(s.parallel.pp, 1);
        QCOMPARE(s.parallel.cp, 1);
        QVERIFY(s.parallel.schedule == Schedule::OneF1B);
        QCOMPARE(s.parallel.zero, 0);
        QVERIFY(!s.parallel.sequence_parallel);
        QCOMPARE(s.training.seq_len, 2048);
        QCOMPARE(s.training.micro_batch, 8);
        QCOMPARE(s.training.global_batch, 512);
        QVERIFY(s.training.recompute == Recompute::Full);
        // vTrain's runs are FP16 (the data README): DeepSpeed's FP16 optimizer, not BF16's.
        QVERIFY(s.training.precision == Precision::FP16);
        // Megatron-DeepSpeed in FP16: gradients kept and all-reduced in FP16 (DeepSpeed's
        // fp32_allreduce defaults to false; Megatron's --accumulate-allreduce-grads-in-fp32 is
        // off unless bf16), the DeepSpeed conventions' 2 bytes.
        QVERIFY(s.training.framework == Framework::DeepSpeed);
        QCOMPARE(conventions(s.training, s.parallel).grad_reduce_bytes, 2.0);
        QVERIFY(!s.training.flash_attention);
        QVERIFY(!s.training.overlap_grad_reduce);
        QCOMPARE(s.hardware_id, std::string("a100-80gb"));
        QCOMPARE(s.cluster.gpu.bf16_tflops, 312.0);
        QCOMPARE(int(r.measured.size()), 1);
        QCOMPARE(r.measured[0].metric, RunMetric::StepSeconds);
        QCOMPARE(r.measured[0].value, 3.5665);
        QCOMPARE(r.origin, std::string("m.csv:2"));
        QVERIFY(QString::fromStdString(r.name).contains("(line 2)"));
        QVERIFY(set.runs[0].name != set.runs[1].name);
        QVERIFY(validate(s).empty());
        // The assumptions say what the file does not.
        std::string all;
        for (const auto& a : set.assumptions)
            all += a + "\n";
        for (const char* word :
             {"50257", "GeLU", "full activation recompute", "BF16", "not overlapped", "a100-80gb"})
            QVERIFY2(all.find(word) != std::string::npos, word);
    }

    void singleNodeLayoutAndColumnOrder()
    {
        // No Parameters column; columns found by name in any order, any case, with spaces.
        const RunSet set =
            parse(std::string(kSingleHeader) + "2,16,8,1024,16,24,1024,1,1,2,372.16\n");
        QCOMPARE(int(set.runs.size()), 1);
        QCOMPARE(set.runs[0].scenario.parallel.pp, 2);
        QVERIFY(QString::fromStdString(set.runs[0].scenario.model.name).startsWith("GPT L24"));
        const RunSet shuffled = parse(" Iteration Time (ms) ,PIPELINE PARALLELISM,# GPUs,global "
                                      "batch,micro batch,hidden size,attention heads,# layers,"
                                      "sequence length,tensor parallelism,data parallelism\n"
                                      "372.16,2,2,16,8,1024,16,24,1024,1,1\n");
        QVERIFY(shuffled.runs[0].scenario == set.runs[0].scenario);
        QCOMPARE(shuffled.runs[0].measured[0].value, 0.37216);
    }

    void toleratesBomCrlfBlankLinesAndQuotes()
    {
        const RunSet set = parse(
            "\xEF\xBB\xBF" +
            std::string(kSingleHeader).replace(std::string(kSingleHeader).size() - 1, 1, "\r\n") +
            "\r\n\"2\",16,8,1024,16,24,1024,1,1,2,372.16\r\n\n");
        QCOMPARE(int(set.runs.size()), 1);
        QCOMPARE(set.runs[0].origin, std::string("m.csv:3"));
        // Without a final newline the last row still counts.
        QCOMPARE(int(parse(std::string(kSingleHeader) + "2,16,8,1024,16,24,1024,1,1,2,372.16")
                         .runs.size()),
                 1);
    }

    void hostileInput_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("expected");
        const QString h = kSingleHeader;
        const QString ok = "2,16,8,1024,16,24,1024,1,1,2,372.16\n";
        QTest::newRow("missing column")
            << "# GPUs,global batch,micro batch,hidden size,attention heads,# layers,"
               "sequence length,tensor parallelism,data parallelism,iteration time (ms)\n" +
                   ok
            << "m.csv:1: missing column(s) 'pipeline parallelism'";
        QTest::newRow("unknown column") << h.trimmed() + ",vocab size\n" + ok.trimmed() + ",50257\n"
                                        << "m.csv:1: column 12 'vocab size': unknown column";
        QTest::newRow("duplicate column") << h.trimmed() + ",# layers\n" + ok.trimmed() + ",24\n"
                                          << "m.csv:1: column 12 '# layers' repeats column 6";
        QTest::newRow("unit in a cell") << h + "2,16,8,1024,16,24,1024,1,1,2,372.16 ms\n"
                                        << "m.csv:2: column 11 'iteration time (ms)': '372.16 ms' "
                                           "is not a number";
        QTest::newRow("NaN") << h + "2,16,8,1024,16,24,1024,1,1,2,nan\n"
                             << "m.csv:2: column 11 'iteration time (ms)': 'nan' is not a finite "
                                "number";
        QTest::newRow("infinity") << h + "2,16,8,1024,16,24,1024,1,1,2,inf\n"
                                  << "'inf' is not a finite number";
        QTest::newRow("negative time") << h + ok + "2,16,8,1024,16,24,1024,1,1,2,-3\n"
                                       << "m.csv:3: column 11 'iteration time (ms)': -3 must be "
                                          "greater than 0";
        QTest::newRow("zero time") << h + "2,16,8,1024,16,24,1024,1,1,2,0\n"
                                   << "0 must be greater than 0";
        QTest::newRow("fractional GPUs")
            << h + "2.5,16,8,1024,16,24,1024,1,1,2,372\n"
            << "m.csv:2: column 1 '# GPUs': '2.5' is not a whole number";
        QTest::newRow("zero layers") << h + "2,16,8,1024,16,0,1024,1,1,2,372\n"
                                     << "column 6 '# layers': 0 is below the minimum 1";
        QTest::newRow("huge hidden") << h + "2,16,8,99999999999,16,24,1024,1,1,2,372\n"
                                     << "column 4 'hidden size': 99999999999 exceeds the bound";
        QTest::newRow("overflowing integer")
            << h + "2,16,8,1024,16,24,1024,1,1,99999999999999999999999,372\n"
            << "column 10 'pipeline parallelism': '99999999999999999999999' exceeds the bound";
        QTest::newRow("empty cell") << h + "2,16,,1024,16,24,1024,1,1,2,372\n"
                                    << "m.csv:2: column 3 'micro batch': empty cell";
        QTest::newRow("too many cells") << h + "2,16,8,1024,16,24,1024,1,1,2,372,9\n"
                                        << "m.csv:2: 12 cells, the header has 11";
        QTest::newRow("truncated last line") << h + ok + "2,16,8,1024,16,24"
                                             << "m.csv:3: 6 cells, the header has 11 (the last "
                                                "line is cut short: is the file truncated?)";
        QTest::newRow("open quote") << h + "\"2,16,8,1024,16,24,1024,1,1,2,372\n"
                                    << "m.csv:2: a quoted cell is not closed";
        QTest::newRow("text after quote") << h + "\"2\"x,16,8,1024,16,24,1024,1,1,2,372\n"
                                          << "m.csv:2: text after the closing quote";
        QTest::newRow("empty file") << ""
                                    << "m.csv: empty file";
        QTest::newRow("blank file") << "\n \n\r\n"
                                    << "m.csv: empty file";
        QTest::newRow("header only") << h << "m.csv: a header but no rows";
        QTest::newRow("params not a number")
            << QString(kMultiHeader) + "big,64,512,8,3072,32,30,2048,1,64,1,3566.5\n"
            << "column 1 'Parameters (billion)': 'big' is not a number";
    }

    void hostileInput()
    {
        QFETCH(QString, text);
        QFETCH(QString, expected);
        const QString err = errorOf(text.toStdString());
        QVERIFY2(!err.isEmpty(), "accepted");
        QVERIFY2(err.contains(expected), qPrintable(err + "\n  expected: " + expected));
    }

    void impossiblePlansBecomeFailedRuns()
    {
        // # GPUs disagrees with tp·dp·pp: a run the report lists as failed, not a read error.
        const RunSet set = parse(std::string(kSingleHeader) + "8,16,8,1024,16,24,1024,1,1,2,372\n");
        const AccuracyReport rep = validateRuns(set.runs, ModelConstants{});
        QCOMPARE(rep.summary.failed, 1);
        QVERIFY(rep.rows[0].failure.find("must equal gpus = 8") != std::string::npos);
    }

    void oversizedFileIsRefused()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("big.csv");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        QVERIFY(f.resize(100 * 1024 * 1024)); // 100 MB, sparse
        f.close();
        try {
            readIterationCsv(path.toStdString(), cluster());
            QFAIL("accepted");
        } catch (const InputError& e) {
            QVERIFY2(QString(e.what()).contains("above the limit of 16 MiB"), e.what());
        }
    }

    void everyPrefixParsesOrNamesTheError()
    {
        const std::string text =
            std::string(kSingleHeader) + "2,16,8,1024,16,24,1024,1,1,2,372.16\n";
        for (std::size_t n = 0; n <= text.size(); ++n) {
            const QString err = errorOf(text.substr(0, n));
            if (!err.isEmpty())
                QVERIFY2(err.startsWith("m.csv"), qPrintable(err));
        }
    }

    void readsByExtensionOrContent()
    {
        QCOMPARE(detectRunsFormat("a.csv", "{"), RunsFormat::IterationCsv);
        QCOMPARE(detectRunsFormat("a.paralens-runs.json", "x"), RunsFormat::RunsJson);
        QCOMPARE(detectRunsFormat("runs.txt", "  {\"runs\": []}"), RunsFormat::RunsJson);
        QCOMPARE(detectRunsFormat("runs.txt", "# GPUs,..."), RunsFormat::IterationCsv);
        QTemporaryDir dir;
        const QString path = dir.filePath("m.csv");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray(kSingleHeader) + "2,16,8,1024,16,24,1024,1,1,2,372.16\n");
        f.close();
        try {
            readRuns(path.toStdString(), PresetLibrary::builtin(), nullptr);
            QFAIL("a CSV without a cluster was accepted");
        } catch (const InputError& e) {
            QVERIFY2(QString(e.what()).contains("--hardware"), e.what());
        }
        const Scenario c = cluster();
        QCOMPARE(int(readRuns(path.toStdString(), PresetLibrary::builtin(), &c).runs.size()), 1);
    }

    void hardwareFromIdOrFile()
    {
        const PresetLibrary& lib = PresetLibrary::builtin();
        QCOMPARE(hardwareTemplate("a100-40gb", lib).hardware_id, std::string("a100-40gb"));
        // The documented vTrain cluster: 8 per node, 300 GB/s NVLink (A100 datasheet), 800 Gb/s per
        // node.
        const Scenario v = hardwareTemplate(
            PARALENS_SOURCE_DIR "/resources/examples/vtrain-a100-cluster.json", lib);
        QVERIFY(v.hardware_id.empty());
        QCOMPARE(v.cluster.gpus_per_node, 8);
        QCOMPARE(v.cluster.scale_up_gbps, 300.0);
        QCOMPARE(v.cluster.scale_out_gbps * v.cluster.gpus_per_node * 8, 800.0); // Gb/s per node
        QCOMPARE(v.cluster.gpu.bf16_tflops, 312.0);
        for (const char* bad : {"no-such-cluster", PARALENS_SOURCE_DIR "/resources/presets/models/"
                                                                       "llama3-8b.json"}) {
            try {
                hardwareTemplate(bad, lib);
                QFAIL(bad);
            } catch (const InputError& e) {
                QVERIFY(!std::string(e.what()).empty());
            }
        }
    }

    void noOverlapExposesTheGradientReduce()
    {
        // With the DP all-reduce after the backward (pp = 1: no pipeline slack), all of it is
        // exposed; with overlap, part of it hides under the backward. Compute is the same.
        Scenario s =
            parse(std::string(kMultiHeader) + "3.6,64,512,8,3072,32,30,2048,1,64,1,3566.5\n")
                .runs[0]
                .scenario;
        const Estimate off = evaluate(s);
        s.training.overlap_grad_reduce = true;
        const Estimate on = evaluate(s);
        QVERIFY(off.time.exposed.dp > on.time.exposed.dp);
        QVERIFY(off.time.step_seconds > on.time.step_seconds);
        QCOMPARE(off.time.compute_seconds, on.time.compute_seconds);
        QVERIFY(std::abs((off.time.step_seconds - on.time.step_seconds) -
                         (off.time.exposed.dp - on.time.exposed.dp)) < 1e-9);
        // The switch survives a save and load.
        s.training.overlap_grad_reduce = false;
        QVERIFY(parseScenario(scenarioToText(s), "t") == s);
        QVERIFY(scenarioToText(s).find("\"overlap_grad_reduce\": false") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestIterationCsv)
#include "test_iteration_csv.moc"
