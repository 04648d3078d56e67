// SPDX-License-Identifier: GPL-3.0-or-later
// The measured-iteration CSVs of the shared validation folder (label `extended`): every row is
// read and predicted, and `paralens validate` reports on all of them. Skipped when the folder
// is absent (it is not part of the repository); PARALENS_VALIDATION_DIR overrides where it is.
#include "cli_runner.h"
#include "core/accuracy.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QTest>

#include <nlohmann/json.hpp>

#include <set>

using namespace paralens;

namespace {

QString dataDir()
{
    const QString env = qEnvironmentVariable("PARALENS_VALIDATION_DIR");
    return env.isEmpty() ? QStringLiteral(PARALENS_SHARED_DIR "/validation") : env;
}

QString dataFile(const char* name)
{
    return dataDir() + "/" + name;
}

const QString kCluster =
    QStringLiteral(PARALENS_SOURCE_DIR "/resources/examples/vtrain-a100-cluster.json");

// Sanitizer builds run the same checks, slower; the time limit is for plain builds.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kTimed = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kTimed = false;
#else
constexpr bool kTimed = true;
#endif
#else
constexpr bool kTimed = true;
#endif

} // namespace

class TestValidationData : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase()
    {
        if (!QFileInfo::exists(dataFile("vtrain_multi_node.csv")))
            QSKIP(qPrintable("no validation data in " + dataDir()));
    }

    void readsEveryRow_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("groups");
        QTest::newRow("multi-node") << "vtrain_multi_node.csv" << 109 << 4;
        QTest::newRow("single-node") << "vtrain_single_node.csv" << 1440 << 24;
    }

    void readsEveryRow()
    {
        QFETCH(QString, file);
        QFETCH(int, rows);
        QFETCH(int, groups);
        const Scenario cluster = hardwareTemplate(kCluster.toStdString(), PresetLibrary::builtin());
        const RunSet set = readIterationCsv(dataFile(qPrintable(file)).toStdString(), cluster);
        QCOMPARE(int(set.runs.size()), rows);
        std::set<std::string> names;
        for (const MeasuredRun& r : set.runs)
            names.insert(r.name);
        QCOMPARE(int(names.size()), rows); // names identify rows, repeated measurements too
        QElapsedTimer t;
        t.start();
        const AccuracyReport rep = validateRuns(set.runs, ModelConstants{});
        const qint64 ms = t.elapsed();
        QCOMPARE(int(rep.rows.size()), rows);
        QCOMPARE(rep.summary.runs + rep.summary.failed, rows);
        QCOMPARE(rep.summary.failed, 0);
        QCOMPARE(int(rep.groups.size()), groups);
        QVERIFY(rep.summary.mape > 0 && std::isfinite(rep.summary.mape));
        if (kTimed)
            QVERIFY2(ms < 5000, qPrintable(QString::number(ms) + " ms"));
    }

    void commandReportsAllRuns_data() { readsEveryRow_data(); }

    void commandReportsAllRuns()
    {
        QFETCH(QString, file);
        QFETCH(int, rows);
        QElapsedTimer t;
        t.start();
        const testcli::Result r =
            testcli::run({"validate", dataFile(qPrintable(file)), "--hardware", kCluster});
        const qint64 ms = t.elapsed();
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(r.out.contains(QString("%1 runs predicted, 0 failed").arg(rows)));
        QVERIFY(r.out.contains("Mean absolute error (MAPE)"));
        QVERIFY(r.out.contains("Spearman"));
        if (kTimed)
            QVERIFY2(ms < 5000, qPrintable(QString::number(ms) + " ms"));
        const testcli::Result j = testcli::run(
            {"validate", dataFile(qPrintable(file)), "--hardware", kCluster, "--json"});
        QCOMPARE(j.code, 0);
        QCOMPARE(int(nlohmann::json::parse(j.out.toStdString())["runs"].size()), rows);
    }
};

QTEST_GUILESS_MAIN(TestValidationData)
#include "test_validation_data.moc"
