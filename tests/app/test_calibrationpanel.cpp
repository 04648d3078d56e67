// SPDX-License-Identifier: GPL-3.0-or-later
// CalibrationPanel: importing nccl-tests logs (a hand-written one and the fixtures in
// tests/data/nccl), errors that keep the previous profile, save/load, and paralens-measure: the
// no-GPU explanation, progress from its JSON lines, and Cancel (with a stand-in script).
#include "app/calibrationpanel.h"
#include "calibration_checks.h"
#include "core/calibration.h"
#include "core/nccl_log.h"
#include "widgets/calibrationview.h"

#include <QDir>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <qcustomplot.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <sys/types.h>

using namespace paralens;
using paralens::testplot::keys;
using paralens::testplot::values;

namespace {

// nccl-tests 2.x layout, all_reduce on 8 GPUs of one host. Times are 10 µs + S·1.75/100 GB/s
// rounded to 0.01 µs (α = 10 µs, B_bus = 100 GB/s), in-place 1 % slower.
const char* kHandLog =
    R"(# nThread 1 nGpus 8 minBytes 1048576 maxBytes 268435456 step: 4(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid  1000 on      hosta device  0 [0x18] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid  1000 on      hosta device  1 [0x2a] NVIDIA H100 80GB HBM3
#  Rank  2 Group  0 Pid  1000 on      hosta device  2 [0x3a] NVIDIA H100 80GB HBM3
#  Rank  3 Group  0 Pid  1000 on      hosta device  3 [0x5d] NVIDIA H100 80GB HBM3
#  Rank  4 Group  0 Pid  1000 on      hosta device  4 [0x9a] NVIDIA H100 80GB HBM3
#  Rank  5 Group  0 Pid  1000 on      hosta device  5 [0xab] NVIDIA H100 80GB HBM3
#  Rank  6 Group  0 Pid  1000 on      hosta device  6 [0xba] NVIDIA H100 80GB HBM3
#  Rank  7 Group  0 Pid  1000 on      hosta device  7 [0xdb] NVIDIA H100 80GB HBM3
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
     1048576       262144     float     sum      -1    28.35   36.99   64.73       0    28.63   36.62   64.09       0
     4194304      1048576     float     sum      -1    83.40   50.29   88.01       0    84.23   49.79   87.14       0
    16777216      4194304     float     sum      -1   303.60   55.26   96.71       0   306.64   54.71   95.75       0
    67108864     16777216     float     sum      -1  1184.41   56.66   99.16       0  1196.25   56.10   98.17       0
   268435456     67108864     float     sum      -1  4707.62   57.02   99.79       0  4754.70   56.46   98.80       0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 89.68
#
)";
// The log's own (size, out-of-place busbw) columns, the oracle for the view's points.
const double kHandSizes[] = {1048576, 4194304, 16777216, 67108864, 268435456};
const double kHandBusbw[] = {64.73, 88.01, 96.71, 99.16, 99.79};

// A table whose third row has a non-number in the time column: a malformed middle row.
const char* kBadLog =
    R"(#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
     1048576       262144     float     sum      -1    28.35   36.99   64.73       0    28.63   36.62   64.09       0
     4194304      1048576     float     sum      -1    83.40   50.29   88.01       0    84.23   49.79   87.14       0
    16777216      4194304     float     sum      -1    fast!   55.26   96.71       0   306.64   54.71   95.75       0
    67108864     16777216     float     sum      -1  1184.41   56.66   99.16       0  1196.25   56.10   98.17       0
# Avg bus bandwidth    : 89.68
)";

QString write(const QTemporaryDir& dir, const QString& name, const QByteArray& text)
{
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        qFatal("cannot write %s", qPrintable(path));
    f.write(text);
    return path;
}

} // namespace

class TestCalibrationPanel : public QObject
{
    Q_OBJECT
private:
    QTemporaryDir m_dir;

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        // Hide any GPU so the no-GPU path is what every machine tests.
        qputenv("CUDA_VISIBLE_DEVICES", "");
        qunsetenv("PARALENS_MEASURE");
    }

    void handWrittenLog()
    {
        CalibrationPanel panel;
        QSignalSpy changed(&panel, &CalibrationPanel::profileChanged);
        QVERIFY(!panel.hasProfile());
        QVERIFY(!panel.saveButton()->isEnabled());
        QVERIFY(panel.importFiles({write(m_dir, "hand.log", kHandLog)}));
        QVERIFY2(panel.errorText().isEmpty(), qPrintable(panel.errorText()));
        QCOMPARE(changed.count(), 1);
        QCOMPARE(changed.at(0).at(0).toString(), QString()); // not saved yet
        QCOMPARE(panel.view()->curveCount(), 1);
        QVERIFY(panel.saveButton()->isEnabled());
        std::vector<std::pair<double, double>> rows;
        for (int i = 0; i < 5; ++i)
            rows.emplace_back(kHandSizes[i], kHandBusbw[i]);
        testcalib::checkCurve(panel, rows);
        // The fit recovers the α and B_bus the times were made with (rounding to 0.01 µs).
        const auto& fit = panel.profile().collectives[0].fit;
        QVERIFY2(std::abs(fit.busbw_gbps - 100) < 0.1, qPrintable(QString::number(fit.busbw_gbps)));
        QVERIFY2(std::abs(fit.alpha_seconds - 10e-6) < 0.1e-6,
                 qPrintable(QString::number(fit.alpha_seconds)));
        const auto* summary = panel.findChild<QLabel*>("calibrationSummary");
        QVERIFY2(summary->text().contains("NVIDIA H100 80GB HBM3") &&
                     summary->text().contains("8 GPUs"),
                 qPrintable(summary->text()));
    }

    // The summary's "N warnings (show)" link lists the warnings under it (a tooltip alone
    // never showed): the text of the log's WARN line appears, escaped, and "hide" folds it.
    void warningsOpenFromTheSummary()
    {
        CalibrationPanel panel;
        const std::string log = std::string(kHandLog) + "# NCCL WARN <slow> link & retry\n";
        QVERIFY(panel.importFiles({write(m_dir, "warned.log", log.c_str())}));
        const int n = int(panel.profile().warnings.size());
        QVERIFY(n >= 1);
        auto* summary = panel.findChild<QLabel*>("calibrationSummary");
        const QString link = n == 1 ? QStringLiteral("1 warning (show)</a>")
                                    : QStringLiteral("%1 warnings (show)</a>").arg(n);
        QVERIFY2(summary->text().contains(link), qPrintable(summary->text()));
        QVERIFY(!summary->text().contains(QStringLiteral("link &amp; retry")));
        QVERIFY(summary->textInteractionFlags().testFlag(Qt::LinksAccessibleByMouse));
        emit summary->linkActivated(QStringLiteral("#warnings"));
        QVERIFY2(summary->text().contains(QStringLiteral("&lt;slow&gt; link &amp; retry")),
                 qPrintable(summary->text()));
        QVERIFY(summary->text().contains(QStringLiteral("(hide)")));
        emit summary->linkActivated(QStringLiteral("#warnings"));
        QVERIFY(!summary->text().contains(QStringLiteral("retry")));
    }

    void fixtureLogs_data()
    {
        QTest::addColumn<QString>("path");
        const QDir dir(QStringLiteral(PARALENS_SOURCE_DIR "/tests/data/nccl"));
        const auto files = dir.entryList({"*.txt"}, QDir::Files, QDir::Name);
        QVERIFY(files.size() >= 3);
        for (const auto& f : files)
            QTest::newRow(qPrintable(f)) << dir.filePath(f);
    }
    void fixtureLogs()
    {
        QFETCH(QString, path);
        CalibrationPanel panel;
        testcalib::checkLogInPanel(panel, path);
        // The fixture's largest all_reduce point (tests/data/nccl/README.md).
        if (path.endsWith("h100_1node_8gpu_five_collectives.txt")) {
            panel.view()->setCurrentCurve(0);
            QVERIFY(testcalib::closeTo(values(panel.view()->measuredGraph()).back(), 452.90));
        }
    }

    void malformedLogKeepsProfile()
    {
        CalibrationPanel panel;
        QVERIFY(panel.importFiles({write(m_dir, "good.log", kHandLog)}));
        const auto before = profileToText(panel.profile());
        QSignalSpy changed(&panel, &CalibrationPanel::profileChanged);
        const QString bad = write(m_dir, "bad.log", kBadLog);
        QVERIFY(!panel.importFiles({bad}));
        const QString err = panel.errorText();
        QVERIFY2(err.contains("bad.log") && err.contains(":5"), qPrintable(err)); // file and line
        QVERIFY(panel.findChild<QLabel*>("calibrationError")->isVisibleTo(&panel));
        QCOMPARE(changed.count(), 0);
        QCOMPARE(profileToText(panel.profile()), before);
        QCOMPARE(panel.view()->curveCount(), 1);
        QCOMPARE(keys(panel.view()->measuredGraph()).size(), 5);
        // Not a log at all, a truncated profile, and a profile of a newer schema.
        QVERIFY(!panel.importFiles({write(m_dir, "notes.txt", "hello\nno table here\n")}));
        QVERIFY(panel.errorText().contains("notes.txt"));
        QVERIFY(!panel.loadProfile(write(m_dir, "cut.json", "{\"schema\": 1, \"collectives\": {")));
        QVERIFY(panel.errorText().contains("cut.json"));
        QVERIFY(!panel.loadProfile(write(m_dir, "new.json", "{\"schema\": 3}")));
        QVERIFY2(panel.errorText().contains("schema 3"), qPrintable(panel.errorText()));
        QVERIFY(!panel.loadProfile(m_dir.filePath("missing.json")));
        QCOMPARE(profileToText(panel.profile()), before);
        QCOMPARE(changed.count(), 0);
        // A good action clears the error.
        QVERIFY(panel.importFiles({m_dir.filePath("good.log")}));
        QVERIFY(panel.errorText().isEmpty());
        QCOMPARE(panel.view()->curveCount(), 2); // merged: the same table twice
    }

    void saveAndLoad()
    {
        CalibrationPanel panel;
        QVERIFY(panel.importFiles({write(m_dir, "hand2.log", kHandLog)}));
        QSignalSpy changed(&panel, &CalibrationPanel::profileChanged);
        const QString path = m_dir.filePath("saved-profile.json");
        QVERIFY(panel.saveProfile(path));
        QCOMPARE(changed.count(), 1);
        QCOMPARE(changed.at(0).at(0).toString(), QFileInfo(path).absoluteFilePath());
        QCOMPARE(panel.profilePath(), QFileInfo(path).absoluteFilePath());
        QVERIFY(!panel.saveProfile(m_dir.filePath("no/such/dir/p.json")));
        QVERIFY(!panel.errorText().isEmpty());

        CalibrationPanel other;
        QSignalSpy loaded(&other, &CalibrationPanel::profileChanged);
        QVERIFY(other.loadProfile(path));
        QCOMPARE(loaded.count(), 1);
        QCOMPARE(loaded.at(0).at(0).toString(), QFileInfo(path).absoluteFilePath());
        QCOMPARE(keys(other.view()->measuredGraph()), keys(panel.view()->measuredGraph()));
        QCOMPARE(values(other.view()->residualGraph()), values(panel.view()->residualGraph()));
    }

    void measurementDisabledWithoutGpu()
    {
        CalibrationPanel panel;
        // On this machine either the tool is not found next to the test, or it sees no GPU.
        QTRY_VERIFY_WITH_TIMEOUT(panel.measureState() != CalibrationPanel::MeasureState::Checking,
                                 30000);
        QVERIFY(!panel.measureButton()->isEnabled());
        QVERIFY(!panel.measureButton()->toolTip().isEmpty());

        panel.setMeasureTool(QString());
        QCOMPARE(panel.measureState(), CalibrationPanel::MeasureState::NotBuilt);
        QVERIFY(!panel.measureButton()->isEnabled());
        QVERIFY2(panel.measureButton()->toolTip().contains("not built"),
                 qPrintable(panel.measureButton()->toolTip()));
        QVERIFY(panel.findChild<QLabel*>("calibrationMeasureLabel")->text().contains("not built"));
        QVERIFY(!panel.startMeasurement(m_dir.filePath("x.json")));

#ifdef PARALENS_MEASURE_EXE
        panel.setMeasureTool(QStringLiteral(PARALENS_MEASURE_EXE));
        QTRY_VERIFY_WITH_TIMEOUT(panel.measureState() != CalibrationPanel::MeasureState::Checking,
                                 60000);
        QCOMPARE(panel.measureState(), CalibrationPanel::MeasureState::NoGpu);
        QVERIFY(!panel.measureButton()->isEnabled());
        QVERIFY2(panel.measureButton()->toolTip().contains("no CUDA device visible"),
                 qPrintable(panel.measureButton()->toolTip()));
#endif
    }

    void measurementWithStandInTool()
    {
        // A script standing in for paralens-measure: `devices` lists one GPU; a run prints
        // progress lines and writes a profile to --out.
        CalibrationPanel source;
        QVERIFY(source.importFiles({write(m_dir, "hand3.log", kHandLog)}));
        const QString fixture = m_dir.filePath("fixture.json");
        QVERIFY(source.saveProfile(fixture));
        const QString script = write(m_dir, "fake-measure",
                                     QStringLiteral(R"(#!/bin/sh
if [ "$1" = devices ]; then echo '{"devices":[{"index":0,"name":"Stand-in GPU"}]}'; exit 0; fi
if [ "$1" = hang ]; then trap '' TERM; exec sleep 30; fi
out=""; while [ $# -gt 0 ]; do [ "$1" = --out ] && out=$2; shift; done
echo '{"phase":"start","command":"all","gpus":1,"nodes":1}' >&2
echo '{"phase":"collectives","op":"all_reduce","ranks":8,"span":"intra","size_bytes":1048576,"done":1,"total":4}' >&2
echo 'NCCL INFO something unstructured' >&2
echo '{"phase":"gemm","label":"square","dtype":"bf16","tflops":700,"done":4,"total":4}' >&2
cp "%1" "$out"
echo '{"phase":"done","exit":0}' >&2
exit 0
)")
                                         .arg(fixture)
                                         .toUtf8());
        QFile::setPermissions(script, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);

        CalibrationPanel panel;
        panel.setMeasureTool(script);
        QTRY_COMPARE(panel.measureState(), CalibrationPanel::MeasureState::Available);
        QVERIFY(panel.measureButton()->isEnabled());
        QVERIFY(panel.measureButton()->toolTip().contains("Stand-in GPU"));

        QSignalSpy finished(&panel, &CalibrationPanel::measurementFinished);
        QSignalSpy changed(&panel, &CalibrationPanel::profileChanged);
        const QString out = m_dir.filePath("measured.json");
        QVERIFY(panel.startMeasurement(out));
        QVERIFY(panel.isMeasuring());
        QVERIFY(!panel.measureButton()->isEnabled());
        QVERIFY(panel.cancelButton()->isVisibleTo(&panel));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 20000);
        QCOMPARE(finished.at(0).at(0).toBool(), true);
        QCOMPARE(panel.progressBar()->maximum(), 4);
        QCOMPARE(panel.progressBar()->value(), 4);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(changed.at(0).at(0).toString(), QFileInfo(out).absoluteFilePath());
        QCOMPARE(panel.view()->curveCount(), 1);
        QVERIFY(panel.measureButton()->isEnabled());
        QVERIFY(!panel.cancelButton()->isVisibleTo(&panel));

        // Cancel: terminate() is ignored by the hanging stand-in, so kill() follows the grace
        // period.
        panel.setCancelGracePeriod(200);
        QVERIFY(panel.startMeasurement(m_dir.filePath("never.json"), {"hang"}));
        QTest::qWait(200);
        QVERIFY(panel.isMeasuring());
        panel.cancelMeasurement();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 10000);
        QCOMPARE(finished.at(1).at(0).toBool(), false);
        QVERIFY(!panel.isMeasuring());
        QVERIFY(panel.findChild<QLabel*>("calibrationProgressLabel")->text().contains("cancelled"));
        QCOMPARE(panel.view()->curveCount(), 1); // the measured profile stays
        QVERIFY(!QFile::exists(m_dir.filePath("never.json")));
    }

    void closingMidMeasurementKillsTheTool()
    {
        // A stand-in that writes its pid and then ignores terminate(): only kill() stops it.
        const QString pidFile = m_dir.filePath("hang.pid");
        const QString script = write(m_dir, "hang-measure",
                                     QStringLiteral(R"(#!/bin/sh
if [ "$1" = devices ]; then echo '{"devices":[{"index":0,"name":"Stand-in GPU"}]}'; exit 0; fi
trap '' TERM
echo $$ > "%1"
exec sleep 30
)")
                                         .arg(pidFile)
                                         .toUtf8());
        QFile::setPermissions(script, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        auto* panel = new CalibrationPanel;
        panel->setMeasureTool(script);
        QTRY_COMPARE(panel->measureState(), CalibrationPanel::MeasureState::Available);
        QVERIFY(panel->startMeasurement(m_dir.filePath("closed.json")));
        QTRY_VERIFY(QFile::exists(pidFile) && QFile(pidFile).size() > 0);
        QFile f(pidFile);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const pid_t pid = pid_t(f.readAll().trimmed().toLongLong());
        QVERIFY(pid > 0);
        QCOMPARE(::kill(pid, 0), 0); // running
        const auto t0 = std::chrono::steady_clock::now();
        delete panel; // the window closes: no grace period, nobody waits for the result
        QVERIFY(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
        QCOMPARE(::kill(pid, 0), -1); // killed and reaped
        QCOMPARE(errno, ESRCH);
    }

    void screenshot()
    {
        // The panel renders in every state it can be in (empty, five curves, dark palette,
        // an error) and each grab writes an image; PARALENS_SHOTS=DIR keeps them for a look.
        QString dir = qEnvironmentVariable("PARALENS_SHOTS");
        if (dir.isEmpty())
            dir = m_dir.path();
        CalibrationPanel panel;
        const auto shot = [&](const QString& name) {
            const QString path = dir + "/" + name;
            QVERIFY2(panel.grab().save(path), qPrintable(path));
            QVERIFY(!QImage(path).isNull());
        };
        panel.resize(1100, 760);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        shot("calibration-panel-empty.png");
        ClusterSpec h100;
        h100.name = "h100";
        h100.scale_up_gbps = 450;
        h100.scale_out_gbps = 50;
        panel.setCluster(h100);
        QVERIFY(panel.importFiles({QStringLiteral(
            PARALENS_SOURCE_DIR "/tests/data/nccl/h100_1node_8gpu_five_collectives.txt")}));
        panel.resize(1100, 760);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        shot("calibration-panel.png");
        panel.view()->setCurrentCurve(3);
        shot("calibration-panel-curve3.png");
        QPalette dark;
        dark.setColor(QPalette::Window, QColor(35, 35, 38));
        dark.setColor(QPalette::WindowText, QColor(225, 225, 225));
        dark.setColor(QPalette::Base, QColor(25, 25, 28));
        dark.setColor(QPalette::Text, QColor(225, 225, 225));
        dark.setColor(QPalette::Button, QColor(50, 50, 55));
        dark.setColor(QPalette::ButtonText, QColor(225, 225, 225));
        panel.setPalette(dark);
        shot("calibration-panel-dark.png");
        QVERIFY(!panel.importFiles({write(m_dir, "bad2.log", kBadLog)}));
        shot("calibration-panel-error.png");
    }
};

QTEST_MAIN(TestCalibrationPanel)
#include "test_calibrationpanel.moc"
