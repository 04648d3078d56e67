// SPDX-License-Identifier: GPL-3.0-or-later
// `paralens tour`: --check passes a sound tour and fails a stale one naming its step, --list
// shows every bundled tour, --export writes each step's charts and a PDF with a page per step
// (plus the title page) without a display, and a broken tour is one error line with its place.
#include "cli_runner.h"

#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using paralens::testcli::run;

namespace {
const QString kData = QStringLiteral(PARALENS_SOURCE_DIR "/tests/data/tours/");
}

class TestCliTour : public QObject
{
    Q_OBJECT
private slots:
    void checkPassesASoundTour()
    {
        const auto r = run({"tour", kData + "lesson.paralens-tour.json", "--check"});
        QCOMPARE(r.code, 0);
        QCOMPARE(
            r.out.count(QRegularExpression("^ok   step ", QRegularExpression::MultilineOption)), 4);
        QVERIFY(r.err.isEmpty());
    }

    void checkNamesTheFailingStep()
    {
        const auto r = run({"tour", kData + "failing-expect.paralens-tour.json", "--check"});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.out.contains("ok   step 1 ('Fits')"), qPrintable(r.out));
        QVERIFY2(r.out.contains("FAIL step 2 ('Claims a 70B replica fits')"), qPrintable(r.out));
        // One error line: the file, the step, the first broken bound.
        QCOMPARE(r.err.count('\n'), 1);
        QVERIFY2(r.err.startsWith("error: ") &&
                     r.err.contains("failing-expect.paralens-tour.json") &&
                     r.err.contains("step 2 ('Claims a 70B replica fits')") &&
                     r.err.contains("fits = false, expected true"),
                 qPrintable(r.err));
        // Without --check the same tour prints and succeeds: checks are opt-in.
        QCOMPARE(run({"tour", kData + "failing-expect.paralens-tour.json"}).code, 0);
    }

    void listShowsEveryBundledTour()
    {
        const auto r = run({"tour", "--list"});
        QCOMPARE(r.code, 0);
        const QStringList files =
            QDir(PARALENS_SOURCE_DIR "/resources/tours").entryList({"*.paralens-tour.json"});
        QVERIFY(files.size() >= 5);
        for (QString f : files) {
            f.chop(QStringLiteral(".paralens-tour.json").size());
            QVERIFY2(r.out.contains(
                         QRegularExpression("^" + f + " ", QRegularExpression::MultilineOption)),
                     qPrintable(f));
            QVERIFY2(!r.out.contains("does not load"), qPrintable(r.out));
        }
        // A bundled tour runs by its id.
        QCOMPARE(run({"tour", "pipeline-schedules", "--check"}).code, 0);
    }

    void exportWritesChartsAndAHandout()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath("handout");
        const auto r = run({"tour", kData + "lesson.paralens-tour.json", "--export", out});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
        for (int step = 1; step <= 4; ++step)
            for (const char* chart : {"memory", "breakdown", "topology", "gantt"}) {
                QFile png(QStringLiteral("%1/step-%2-%3.png")
                              .arg(out)
                              .arg(step, 2, 10, QChar('0'))
                              .arg(chart));
                QVERIFY2(png.open(QIODevice::ReadOnly), qPrintable(png.fileName()));
                QCOMPARE(png.read(8), QByteArray("\x89PNG\r\n\x1a\n", 8));
            }
        QFile pdf(out + "/handout.pdf");
        QVERIFY(pdf.open(QIODevice::ReadOnly));
        const QByteArray bytes = pdf.readAll();
        QVERIFY(bytes.startsWith("%PDF-"));
        // A title page and one page per step.
        QCOMPARE(bytes.count("/Type /Page\n") + bytes.count("/Type /Page\r") +
                     bytes.count("/Type /Page "),
                 5);
        QVERIFY(!QFile::exists(out + "/step-01-plan-map.png")); // only for plan-map steps
    }

    void brokenTourIsOneErrorLine()
    {
        const auto r = run({"tour", kData + "bad-patch.paralens-tour.json", "--check"});
        QCOMPARE(r.code, 1);
        QCOMPARE(r.err.count('\n'), 1);
        QVERIFY2(r.err.contains("bad-patch.paralens-tour.json:5:") &&
                     r.err.contains("step 2 ('Two')"),
                 qPrintable(r.err));
        QCOMPARE(run({"tour"}).code, 1);
        QCOMPARE(run({"tour", "no-such-tour"}).code, 1);
        QCOMPARE(run({"tour", "a", "b"}).code, 1);
    }
};

QTEST_APPLESS_MAIN(TestCliTour)
#include "test_cli_tour.moc"
