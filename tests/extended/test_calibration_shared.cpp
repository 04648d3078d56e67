// SPDX-License-Identifier: GPL-3.0-or-later
// Label `extended`: the calibration panel and `paralens calibrate` on the real nccl-tests logs in
// ../shared/nccl_logs, a folder beside the checkout where the project is developed (public logs
// that are not redistributed with it). Every case skips when the folder is absent; the same
// paths run on the project's own fixtures in test_calibrationpanel and test_cli_calibrate.
#include "../app/calibration_checks.h"
#include "../app/cli_calibrate_checks.h"

#include <QDir>
#include <QTemporaryDir>
#include <QTest>

using namespace paralens;

namespace {

const QString kLogs = QStringLiteral(PARALENS_SHARED_DIR "/nccl_logs");

} // namespace

class TestCalibrationShared : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase()
    {
        qputenv("CUDA_VISIBLE_DEVICES", ""); // the panel probes paralens-measure otherwise
    }

    void realLogsInThePanel_data()
    {
        QTest::addColumn<QString>("path");
        const QDir dir(kLogs);
        const auto files = dir.entryList({"*.txt"}, QDir::Files, QDir::Name);
        if (files.isEmpty())
            QTest::newRow("absent") << QString();
        for (const auto& f : files)
            QTest::newRow(qPrintable(f)) << dir.filePath(f);
    }
    void realLogsInThePanel()
    {
        QFETCH(QString, path);
        if (path.isEmpty())
            QSKIP("../shared/nccl_logs is absent (only present where the project is developed)");
        CalibrationPanel panel;
        testcalib::checkLogInPanel(panel, path);
        // Published figures (the README beside the logs): the largest all_reduce point of 05.
        if (path.contains("05_h100_8gpu")) {
            panel.view()->setCurrentCurve(0);
            QVERIFY(
                testcalib::closeTo(testplot::values(panel.view()->measuredGraph()).back(), 482.27));
        }
    }

    void realLogsThroughTheCommandLine()
    {
        const auto names = QDir(kLogs).entryList({"0*.txt"}, QDir::Files);
        if (names.isEmpty())
            QSKIP("../shared/nccl_logs is absent (only present where the project is developed)");
        testcli::Result r;
        testcli::checkCalibratesLogs(kLogs, names, r);
    }
};

QTEST_MAIN(TestCalibrationShared)
#include "test_calibration_shared.moc"
