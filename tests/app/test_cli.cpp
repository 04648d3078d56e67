// SPDX-License-Identifier: GPL-3.0-or-later
// The command line as users and scripts see it: the built paralens binary run as a
// subprocess, without a display, checking exit codes, stdout and the one-line errors.
#include "cli_runner.h"
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

namespace {

using paralens::testcli::Result;
using paralens::testcli::run;

QString example(const char* name)
{
    return QStringLiteral(PARALENS_SOURCE_DIR "/resources/examples/") + name;
}

QString write(const QTemporaryDir& dir, const QString& name, const QByteArray& text)
{
    const QString path = dir.filePath(name);
    QDir().mkpath(QFileInfo(path).path());
    QFile f(path);
    f.open(QIODevice::WriteOnly);
    f.write(text);
    return path;
}

// stderr has exactly one `error: ` line, it comes first, and it contains `needle`.
bool oneErrorLine(const QString& err, const QString& needle)
{
    const QStringList lines = err.split('\n', Qt::SkipEmptyParts);
    return !lines.isEmpty() && lines.front().startsWith("error: ") &&
           lines.filter(QRegularExpression("^error: ")).size() == 1 &&
           lines.front().contains(needle);
}

const QByteArray kUserModel = R"({"id": "tiny-1b", "kind": "model", "name": "Tiny 1B",
  "source": "test", "layers": 16, "hidden": 2048, "heads": 16, "kv_heads": 4,
  "ffn_hidden": 8192, "vocab": 32000})";

} // namespace

class TestCli : public QObject
{
    Q_OBJECT
private slots:
    void version()
    {
        const Result r = run({"--version"});
        QCOMPARE(r.code, 0);
        QCOMPARE(r.out.trimmed(), QString("paralens " PARALENS_VERSION));
    }

    void help()
    {
        const Result r = run({"--help"});
        QCOMPARE(r.code, 0);
        for (auto word : {"check", "presets", "--presets DIR", "--version"})
            QVERIFY2(r.out.contains(word), word);
        const Result c = run({"check", "--help"});
        QCOMPARE(c.code, 0);
        QVERIFY2(c.out.startsWith("Usage: paralens check"), qPrintable(c.out));
    }

    void unknownSubcommand()
    {
        const Result r = run({"frobnicate"});
        QCOMPARE(r.code, 2);
        QVERIFY(oneErrorLine(r.err, "frobnicate"));
    }

    void presetsTable()
    {
        const Result r = run({"presets"});
        QCOMPARE(r.code, 0);
        for (auto id : {"a100-40gb", "a100-80gb", "h100-sxm", "h100-pcie", "h200", "b200", "b300",
                        "gb200-nvl72", "mi300x", "gpt3-175b", "llama2-7b", "llama2-13b",
                        "llama2-70b", "llama3-8b", "llama3-70b", "llama3-405b", "mixtral-8x7b",
                        "mixtral-8x22b", "deepseek-v3"})
            QVERIFY2(r.out.contains(id), id);
        QVERIFY(r.err.isEmpty());
    }

    void presetsJson()
    {
        const Result r = run({"presets", "--json"});
        QCOMPARE(r.code, 0);
        QJsonParseError error;
        const QJsonDocument doc = QJsonDocument::fromJson(r.out.toUtf8(), &error);
        QCOMPARE(error.error, QJsonParseError::NoError);
        const QJsonArray models = doc.object().value("models").toArray();
        const QJsonArray hardware = doc.object().value("hardware").toArray();
        QCOMPARE(models.size(), 10);
        QCOMPARE(hardware.size(), 9);
        bool found = false;
        for (const auto& m : models) {
            if (m.toObject().value("id").toString() == "llama3-70b") {
                found = true;
                QCOMPARE(m.toObject().value("layers").toInt(), 80); // Llama 3 Table 3
                QCOMPARE(m.toObject().value("hidden").toInt(), 8192);
                QCOMPARE(m.toObject().value("builtin").toBool(), true);
            }
        }
        QVERIFY(found);
        for (const auto& h : hardware)
            if (h.toObject().value("id").toString() == "h100-sxm")
                QCOMPARE(h.toObject().value("gpu").toObject().value("bf16_tflops").toDouble(),
                         989.0);
    }

    void presetsRejectsArguments()
    {
        QCOMPARE(run({"presets", "extra"}).code, 2);
        QCOMPARE(run({"presets", "--jsn"}).code, 2);
    }

    void checkExamples_data()
    {
        QTest::addColumn<QString>("file");
        for (auto f : {"llama3-70b-64xh100.paralens.json", "mixtral-8x7b-32xh100.paralens.json",
                       "gpt3-175b-1024xa100.paralens.json"})
            QTest::newRow(f) << example(f);
    }
    void checkExamples()
    {
        QFETCH(QString, file);
        const Result r = run({"check", file});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(r.err.isEmpty());
        // The normalised output is the same scenario as the (already normalised) example.
        QFile f(file);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(QJsonDocument::fromJson(r.out.toUtf8()), QJsonDocument::fromJson(f.readAll()));
    }

    void checkFillsDefaults()
    {
        QTemporaryDir dir;
        const QString path = write(dir, "short.paralens.json",
                                   R"({"model": "llama3-8b", "gpus": 8, "parallel": {"tp": 8},
                                       "training": {"global_batch": 16}})");
        const Result r = run({"check", path});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(o.value("hardware").toString(), QString("h100-sxm"));
        QCOMPARE(o.value("parallel").toObject().value("dp").toInt(), 1); // 8 / (8·1·1)
        QCOMPARE(o.value("parallel").toObject().value("schedule").toString(), QString("1f1b"));
        QCOMPARE(o.value("training").toObject().value("seq_len").toInt(), 4096);
    }

    void checkBadInput_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("needle");
        QTest::newRow("tp 3") << QByteArray(R"({"gpus": 24, "parallel": {"tp": 3}})")
                              << "parallel.tp = 3 must divide model.heads";
        QTest::newRow("gpus") << QByteArray(R"({"gpus": 64, "parallel": {"tp": 8, "dp": 2}})")
                              << "gpus = 64";
        QTest::newRow("malformed") << QByteArray("{\n  \"gpus\": 8,\n  \"parallel\": {\"tp\" 8}\n}")
                                   << "bad.json:3:21: malformed JSON";
        QTest::newRow("truncated") << QByteArray("{\"gpus\": 8, \"par") << "bad.json:1:17";
        QTest::newRow("wrong type") << QByteArray(R"({"training": {"seq_len": "8k"}})")
                                    << "training.seq_len: expected an integer, got a string";
        QTest::newRow("unknown key")
            << QByteArray(R"({"parallel": {"pipeline": 4}})") << "parallel.pipeline: unknown key";
        QTest::newRow("absurd layers")
            << QByteArray(R"({"model": {"layers": 10000000, "hidden": 8, "heads": 1,
                 "ffn_hidden": 8, "vocab": 8}})")
            << "model.layers: 10000000 exceeds the bound 100000";
        QTest::newRow("zero gpus")
            << QByteArray(R"({"gpus": 0})") << "gpus: 0 is below the minimum 1";
        QTest::newRow("fp8 on A100") << QByteArray(R"({"hardware": "a100-80gb", "gpus": 8,
            "parallel": {"tp": 8}, "training": {"precision": "fp8", "global_batch": 8}})")
                                     << "training.precision fp8";
    }
    void checkBadInput()
    {
        QFETCH(QByteArray, text);
        QFETCH(QString, needle);
        QTemporaryDir dir;
        const QString path = write(dir, "bad.json", text);
        const Result r = run({"check", path});
        QCOMPARE(r.code, 1);
        QVERIFY2(oneErrorLine(r.err, needle), qPrintable(r.err));
        QVERIFY(r.out.isEmpty());
        // Further broken rules follow as "  also:" lines, never as more error lines.
        for (const auto& line : r.err.split('\n', Qt::SkipEmptyParts).mid(1))
            QVERIFY2(line.startsWith("  also: "), qPrintable(line));
    }

    void checkUsage()
    {
        const Result none = run({"check"});
        QCOMPARE(none.code, 2);
        QVERIFY(oneErrorLine(none.err, "SCENARIO"));
        const Result missing = run({"check", "/nonexistent/x.paralens.json"});
        QCOMPARE(missing.code, 1);
        QVERIFY(oneErrorLine(missing.err, "/nonexistent/x.paralens.json"));
    }

    void userPresetsFromFlag()
    {
        QTemporaryDir dir;
        write(dir, "presets/tiny.json", kUserModel);
        const QString scenario = write(dir, "s.paralens.json",
                                       R"({"model": "tiny-1b", "gpus": 8, "parallel": {"tp": 4},
                                           "training": {"global_batch": 8}})");
        // Global option before the subcommand, and after it.
        const Result a = run({"--presets", dir.filePath("presets"), "check", scenario});
        QVERIFY2(a.code == 0, qPrintable(a.err));
        QVERIFY(a.out.contains("\"tiny-1b\""));
        const Result b = run({"check", scenario, "--presets=" + dir.filePath("presets")});
        QVERIFY2(b.code == 0, qPrintable(b.err));
        // Without the folder the id is unknown.
        const Result c = run({"check", scenario});
        QCOMPARE(c.code, 1);
        QVERIFY(oneErrorLine(c.err, "unknown model preset 'tiny-1b'"));
        const Result list = run({"presets", "--presets", dir.filePath("presets")});
        QCOMPARE(list.code, 0);
        QVERIFY(list.out.contains("tiny-1b *"));
    }

    void userPresetClashFails()
    {
        QTemporaryDir dir;
        QByteArray clash = kUserModel;
        clash.replace("tiny-1b", "llama3-70b");
        write(dir, "presets/mine.json", clash);
        const Result r = run({"--presets", dir.filePath("presets"), "presets"});
        QCOMPARE(r.code, 1);
        QVERIFY2(oneErrorLine(r.err, "mine.json: preset id 'llama3-70b' already exists"),
                 qPrintable(r.err));
        const Result noDir = run({"presets", "--presets"});
        QCOMPARE(noDir.code, 2);
        QVERIFY(oneErrorLine(noDir.err, "--presets needs a folder"));
        const Result bad = run({"--presets", dir.filePath("nothing-here"), "presets"});
        QCOMPARE(bad.code, 1);
        QVERIFY(oneErrorLine(bad.err, "not a folder"));
    }

    void userConfigFolderIsRead()
    {
        QTemporaryDir config;
        // QStandardPaths::AppConfigLocation = $XDG_CONFIG_HOME/<organisation>/<application>
        write(config, "ParaLens/paralens/presets/tiny.json", kUserModel);
        const Result r = run({"presets", "--json"}, config.path());
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.contains("\"tiny-1b\""));
        write(config, "ParaLens/paralens/presets/broken.json", "{\"id\": ");
        const Result b = run({"presets"}, config.path());
        QCOMPARE(b.code, 1);
        QVERIFY2(oneErrorLine(b.err, "broken.json:1:8: malformed JSON"), qPrintable(b.err));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
