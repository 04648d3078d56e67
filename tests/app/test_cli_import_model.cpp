// SPDX-License-Identifier: GPL-3.0-or-later
// `paralens import-model`: the preset it prints or writes is one the presets reader, --presets
// and the user preset folder take, with the config's shape; bad input is a named error.
#include "cli_runner.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using namespace paralens::testcli;

namespace {

const QString kHf = QStringLiteral(PARALENS_SOURCE_DIR "/tests/data/hf/");

QJsonObject modelIn(const QString& presetsJson, const QString& id)
{
    for (const auto& v : QJsonDocument::fromJson(presetsJson.toUtf8()).object()["models"].toArray())
        if (v.toObject()["id"].toString() == id)
            return v.toObject();
    return {};
}

} // namespace

class TestCliImportModel : public QObject
{
    Q_OBJECT
private slots:
    void printsPresetAndNotes()
    {
        const Result r = run({"import-model", kHf + "llama-3.1-8b.json"});
        QCOMPARE(r.code, 0);
        const QJsonObject p = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(p["id"].toString(), QString("llama-3.1-8b"));
        QCOMPARE(p["kind"].toString(), QString("model"));
        QCOMPARE(p["layers"].toInt(), 32);
        QCOMPARE(p["kv_heads"].toInt(), 8);
        QCOMPARE(p["vocab"].toInt(), 128256);
        QVERIFY(p["sources"].toObject()["layers"].toString().contains("num_hidden_layers 32"));
        QVERIFY(r.err.contains("8.03 B parameters"));
        QVERIFY(r.err.contains("note: not read"));
    }

    // --out, then --presets DIR lists it with the same shape (MLA included).
    void outFileLoadsWithPresets()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath("mine/ds.json");
        const Result r =
            run({"import-model", kHf + "deepseek-v3.json", "--id", "my-dsv3", "--out", out});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.contains("wrote " + out));
        QVERIFY(
            r.out.contains("671.03 B parameters (37.55 B active) + 11.61 B in 1 MTP module(s)"));
        QVERIFY(!r.out.contains("note: num_nextn_predict_layers"));
        const Result list = run({"presets", "--json", "--presets", dir.filePath("mine")});
        QCOMPARE(list.code, 0);
        const QJsonObject m = modelIn(list.out, "my-dsv3");
        QCOMPARE(m["builtin"].toBool(), false);
        QCOMPARE(m["mla"].toObject()["kv_lora_rank"].toInt(), 512);
        QCOMPARE(m["moe"].toObject()["first_dense_layers"].toInt(), 3);
        QCOMPARE(m["mtp_layers"].toInt(), 1);
        // The scenario reader takes the imported preset by id.
        QFile s(dir.filePath("s.paralens.json"));
        QVERIFY(s.open(QIODevice::WriteOnly));
        s.write(R"({"model": "my-dsv3", "hardware": "h100-sxm", "gpus": 256,
                    "parallel": {"tp": 8, "pp": 4, "ep": 8, "sequence_parallel": true},
                    "training": {"seq_len": 4096, "global_batch": 512}})");
        s.close();
        const Result check = run({"check", s.fileName(), "--presets", dir.filePath("mine")});
        QVERIFY2(check.code == 0, qPrintable(check.err));
    }

    void installIntoUserFolder()
    {
        QTemporaryDir home;
        const Result r =
            run({"import-model", kHf + "qwen3-30b-a3b.json", "--install"}, home.path());
        QCOMPARE(r.code, 0);
        const QString file = home.filePath("ParaLens/paralens/presets/qwen3-30b-a3b.json");
        QVERIFY2(QFile::exists(file), qPrintable(r.out));
        const Result list = run({"presets", "--json"}, home.path());
        QCOMPARE(modelIn(list.out, "qwen3-30b-a3b")["moe"].toObject()["experts"].toInt(), 128);
        const Result again =
            run({"import-model", kHf + "qwen3-30b-a3b.json", "--install"}, home.path());
        QCOMPARE(again.code, 1);
        QVERIFY2(again.err.contains("preset id 'qwen3-30b-a3b' already exists"),
                 qPrintable(again.err));
    }

    void errors()
    {
        const Result clash = run({"import-model", kHf + "llama-3.1-8b.json", "--id", "llama3-8b"});
        QCOMPARE(clash.code, 1);
        QVERIFY2(clash.err.contains("preset id 'llama3-8b' already exists (built-in)"),
                 qPrintable(clash.err));
        const Result badId = run({"import-model", kHf + "llama-3.1-8b.json", "--id", "Bad Id"});
        QCOMPARE(badId.code, 1);
        QVERIFY(badId.err.contains("not a valid preset id"));

        QTemporaryDir dir;
        QFile f(dir.filePath("config.json"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"architectures": ["FalconForCausalLM"], "model_type": "falcon"})");
        f.close();
        const Result un = run({"import-model", f.fileName()});
        QCOMPARE(un.code, 1);
        QVERIFY(un.err.startsWith("error: " + f.fileName() + ": unsupported architecture"));
        QVERIFY(un.err.contains("GPTNeoXForCausalLM (gpt_neox)"));

        QCOMPARE(run({"import-model"}).code, 2);
        QCOMPARE(run({"import-model", "a.json", "b.json"}).code, 2);
        QCOMPARE(run({"import-model", kHf + "llama-3.1-8b.json", "--out", "x", "--install"}).code,
                 2);
        const Result missing = run({"import-model", dir.filePath("none.json")});
        QCOMPARE(missing.code, 1);
        QVERIFY(missing.err.contains("cannot open the config.json"));
        QVERIFY(run({"--help"}).out.contains("import-model"));
    }
};

QTEST_APPLESS_MAIN(TestCliImportModel)
#include "test_cli_import_model.moc"
