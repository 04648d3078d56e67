// SPDX-License-Identifier: GPL-3.0-or-later
// paralens launch-config and import-launch as a user runs them: the files on stdout or beside
// --out, warnings on stderr, usage errors, and the round trip through files on disk.
#include "cli_runner.h"
#include "core/scenario_io.h"

#include <QDir>
#include <QFile>
#include <QTest>

using namespace paralens;
using testcli::run;

namespace {
const QString kExample =
    QStringLiteral(PARALENS_SOURCE_DIR "/resources/examples/llama3-70b-64xh100.paralens.json");
}

class TestCliLaunch : public QObject
{
    Q_OBJECT
private slots:
    void writesEachFramework()
    {
        const auto m = run({"launch-config", kExample, "--framework", "megatron"});
        QCOMPARE(m.code, 0);
        QVERIFY(m.out.contains("--tensor-model-parallel-size 8 "));
        QVERIFY(m.err.isEmpty());
        const auto t = run({"launch-config", kExample, "--framework", "torchtitan"});
        QCOMPARE(t.code, 0);
        QVERIFY(t.out.contains("[parallelism]"));
        QVERIFY(t.err.contains("warning: zero1_unsupported: "));
        const auto d = run({"launch-config", kExample, "--framework", "deepspeed"});
        QCOMPARE(d.code, 0);
        QVERIFY(d.out.startsWith("==> ds_config.json <==\n{"));
        QVERIFY(d.out.contains("==> launch.sh <==\n#!/bin/bash"));
    }

    void usageErrors()
    {
        QCOMPARE(run({"launch-config", kExample, "--framework", "jax"}).code, 2);
        QCOMPARE(run({"launch-config", kExample}).code, 2);
        QCOMPARE(run({"import-launch"}).code, 2);
        const auto r = run({"import-launch", "/no/such/file.sh"});
        QCOMPARE(r.code, 1);
        QVERIFY(r.err.startsWith("error: "));
    }

    // DeepSpeed through files: the JSON at --out, its script beside it naming it, read back.
    void deepspeedFilesRoundTrip()
    {
        QTemporaryDir dir;
        // A plan DeepSpeed expresses: the example without interleaving, modelled as DeepSpeed.
        Scenario s = loadScenarioFile(kExample.toStdString());
        s.parallel.schedule = Schedule::OneF1B;
        s.parallel.virtual_stages = 1;
        s.training.framework = Framework::DeepSpeed;
        const QString scenario = dir.filePath("ds.paralens.json");
        QFile f(scenario);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray::fromStdString(scenarioToText(s)));
        f.close();
        const QString out = dir.filePath("my_ds.json");
        const auto w = run({"launch-config", scenario, "--framework", "deepspeed", "--out", out});
        QCOMPARE(w.code, 0);
        QVERIFY2(w.err.isEmpty(), qPrintable(w.err));
        QVERIFY(QFile::exists(out));
        QVERIFY(QFile::exists(dir.filePath("my_ds.sh")));
        const auto back = run({"import-launch", dir.filePath("my_ds.sh")});
        QCOMPARE(back.code, 0);
        QVERIFY(back.err.contains("read as deepspeed"));
        QVERIFY2(parseScenario(back.out.toStdString(), "out") == s, qPrintable(back.out));
    }
};

QTEST_GUILESS_MAIN(TestCliLaunch)
#include "test_cli_launch.moc"
