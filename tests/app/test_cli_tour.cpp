// SPDX-License-Identifier: GPL-3.0-or-later
// `paralens tour`: --check passes a sound tour and fails a stale one naming its step, --list
// shows every bundled tour, --export writes each step's charts and a PDF with a page per step
// (plus the title page) without a display, --page-images each page as a PNG, a plan-map step's
// chart is the heat map, and a broken tour is one error line with its place.
#include "cli_runner.h"

#include <QColor>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using paralens::testcli::run;

namespace {
const QString kData = QStringLiteral(PARALENS_SOURCE_DIR "/tests/data/tours/");

/// The share of an image's pixels that are not near-white paper.
double inkShare(const QImage& image)
{
    qint64 ink = 0;
    for (int y = 0; y < image.height(); y += 2)
        for (int x = 0; x < image.width(); x += 2)
            ink += qGray(image.pixel(x, y)) < 200;
    return double(ink) / ((image.width() / 2) * (image.height() / 2));
}

/// The share of pixels in saturated colour (HSV saturation over 40 %, not too dark to tell).
double colourShare(const QImage& image)
{
    qint64 colour = 0, all = 0;
    for (int y = 0; y < image.height(); y += 2)
        for (int x = 0; x < image.width(); x += 2, ++all) {
            const QColor c = image.pixelColor(x, y);
            colour += c.hsvSaturationF() > 0.4 && c.valueF() > 0.2;
        }
    return double(colour) / all;
}
} // namespace

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

    /// --page-images: each page of the PDF as a PNG, the title page and one per step, A4
    /// landscape at 192 dpi; a plan-map step's chart is the heat map, not an empty frame.
    void pageImagesAndThePlanMap()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath("views");
        const auto r =
            run({"tour", kData + "views.paralens-tour.json", "--export", out, "--page-images"});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
        const int steps = 5;
        QStringList pages = QDir(out).entryList({"handout-*.png"}, QDir::Files, QDir::Name);
        QStringList expected{"handout-step-01.png", "handout-step-02.png", "handout-step-03.png",
                             "handout-step-04.png", "handout-step-05.png", "handout-title.png"};
        QCOMPARE(pages, expected);
        QCOMPARE(pages.size(), steps + 1);
        for (const QString& name : pages) {
            const QImage page(out + "/" + name);
            QVERIFY2(!page.isNull(), qPrintable(name));
            // A4 landscape, 297 × 210 mm, at 2 × 96 dpi: 2245 × 1587 px (±1 for rounding).
            QVERIFY2(
                std::abs(page.width() - 2245) <= 1 && std::abs(page.height() - 1587) <= 1,
                qPrintable(
                    QStringLiteral("%1: %2x%3").arg(name).arg(page.width()).arg(page.height())));
            // Ink on the page: a caption and, on step pages, a chart.
            QVERIFY2(inkShare(page) > (name == "handout-title.png" ? 0.002 : 0.02),
                     qPrintable(name));
        }
        // Only the plan-map step has a plan-map chart, and it is a heat map: a large part of it
        // in colour (viridis), not a grey frame with a message.
        QVERIFY(!QFile::exists(out + "/step-04-plan-map.png"));
        const QImage map(out + "/step-05-plan-map.png");
        QVERIFY(!map.isNull());
        QVERIFY2(colourShare(map) > 0.25, qPrintable(QString::number(colourShare(map))));
        // The step page shows it too.
        QVERIFY(colourShare(QImage(out + "/handout-step-05.png")) > 0.08);
        // --page-images without --export is an error.
        const auto bad = run({"tour", kData + "views.paralens-tour.json", "--page-images"});
        QCOMPARE(bad.code, 1);
        QVERIFY2(bad.err.contains("--page-images needs --export"), qPrintable(bad.err));
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
