// SPDX-License-Identifier: GPL-3.0-or-later
// Export writes valid PNG/SVG/PDF files of the requested size, from the menu's code path and
// from `paralens export` without a display.
#include "app/evaluator.h"
#include "app/export.h"
#include "cli_runner.h"
#include "core/scenario_io.h"
#include "widgets/chartview.h"
#include "widgets/headline.h"

#include <QFile>
#include <QImage>
#include <QRegularExpression>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QTest>

using namespace paralens;

namespace {

QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

/// The first page's MediaBox of a PDF, in points.
QSizeF pdfMediaBox(const QByteArray& pdf)
{
    static const QRegularExpression re(
        QStringLiteral("/MediaBox \\[\\s*0\\s+0\\s+([0-9.]+)\\s+([0-9.]+)\\s*\\]"));
    const auto m = re.match(QString::fromLatin1(pdf));
    return m.hasMatch() ? QSizeF(m.captured(1).toDouble(), m.captured(2).toDouble()) : QSizeF();
}

int pdfPages(const QByteArray& pdf)
{
    static const QRegularExpression re(QStringLiteral("/Type\\s*/Page[^s]"));
    return int(QString::fromLatin1(pdf).count(re));
}

/// Distinct colours in an image (a blank export has one).
int colours(const QImage& img)
{
    QSet<QRgb> seen;
    for (int y = 0; y < img.height(); y += 7)
        for (int x = 0; x < img.width(); x += 7)
            seen.insert(img.pixel(x, y));
    return int(seen.size());
}

} // namespace

class TestExport : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;
    Evaluation m_eval;

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_eval = Evaluator::evaluateScenario(defaultScenario());
        QVERIFY(m_eval.ok());
    }

    void chartFormats_data()
    {
        QTest::addColumn<QString>("chart");
        for (const char* c : {"memory", "breakdown", "topology", "gantt"})
            QTest::newRow(c) << QString::fromLatin1(c);
    }
    void chartFormats()
    {
        QFETCH(QString, chart);
        QString error;
        auto view = makeChart(chart, m_eval, &error);
        QVERIFY2(view, qPrintable(error));
        const QString stamp = scenarioStamp(m_eval.scenario);
        QVERIFY(stamp.contains(QStringLiteral("llama3-70b")));
        QVERIFY(stamp.contains(QStringLiteral("TP 8 · PP 4 · DP 2")));

        const QString png = m_dir.filePath(chart + QStringLiteral(".png"));
        QVERIFY2(exportChart(view.get(), png, {QSize(800, 600), 1.0}, stamp, &error),
                 qPrintable(error));
        QImage image(png);
        QCOMPARE(image.size(), QSize(800, 600));
        QVERIFY(colours(image) > 4);

        const QString png2 = m_dir.filePath(chart + QStringLiteral("@2x.png"));
        QVERIFY(exportChart(view.get(), png2, {QSize(800, 600), 2.0}, stamp, &error));
        QCOMPARE(QImage(png2).size(), QSize(1600, 1200));

        const QString svg = m_dir.filePath(chart + QStringLiteral(".svg"));
        QVERIFY2(exportChart(view.get(), svg, {QSize(1000, 500), 1.0}, stamp, &error),
                 qPrintable(error));
        QSvgRenderer renderer(svg);
        QVERIFY(renderer.isValid());
        QCOMPARE(renderer.viewBox(), QRect(0, 0, 1000, 500));
        QVERIFY(readAll(svg).contains("llama3-70b")); // the stamp is text in the drawing

        const QString pdf = m_dir.filePath(chart + QStringLiteral(".pdf"));
        QVERIFY2(exportChart(view.get(), pdf, {QSize(800, 600), 1.0}, stamp, &error),
                 qPrintable(error));
        const QByteArray bytes = readAll(pdf);
        QVERIFY(bytes.startsWith("%PDF-"));
        QVERIFY(bytes.trimmed().endsWith("%%EOF"));
        // 800 x 600 px at 96 dpi = 600 x 450 pt.
        const QSizeF box = pdfMediaBox(bytes);
        QVERIFY2(qAbs(box.width() - 600) < 1 && qAbs(box.height() - 450) < 1,
                 qPrintable(QStringLiteral("%1x%2").arg(box.width()).arg(box.height())));
    }

    void badRequestsNameTheProblem()
    {
        QString error;
        auto view = makeChart(QStringLiteral("memory"), m_eval, &error);
        QVERIFY(!exportChart(view.get(), m_dir.filePath(QStringLiteral("x.bmp")), {}, {}, &error));
        QVERIFY(error.contains(QStringLiteral(".png, .svg or .pdf")));
        QVERIFY(!exportChart(view.get(), m_dir.filePath(QStringLiteral("x.png")),
                             {QSize(0, 10), 1.0}, {}, &error));
        QVERIFY(error.contains(QStringLiteral("size")));
        QVERIFY(!makeChart(QStringLiteral("pie"), m_eval, &error));
        QVERIFY(error.contains(QStringLiteral("--chart")));
    }

    void reportHasEveryChart()
    {
        QString error;
        auto memory = makeChart(QStringLiteral("memory"), m_eval, &error);
        auto breakdown = makeChart(QStringLiteral("breakdown"), m_eval, &error);
        auto topology = makeChart(QStringLiteral("topology"), m_eval, &error);
        Headline headline;
        headline.setEstimate(m_eval.estimate);
        const QString path = m_dir.filePath(QStringLiteral("report.pdf"));
        QVERIFY2(exportReport(path, m_eval.scenario, &headline,
                              {memory.get(), breakdown.get(), topology.get()}, &error),
                 qPrintable(error));
        const QByteArray bytes = readAll(path);
        QVERIFY(bytes.startsWith("%PDF-"));
        QCOMPARE(pdfPages(bytes), 3); // headline + memory, breakdown, topology
        const QString shots = qEnvironmentVariable("PARALENS_SHOT_DIR");
        if (!shots.isEmpty())
            QFile::copy(path, shots + QStringLiteral("/report.pdf"));
    }

    void commandLineExportWithoutDisplay_data()
    {
        QTest::addColumn<QString>("out");
        QTest::addColumn<QString>("chart");
        QTest::newRow("png") << QStringLiteral("cli.png") << QStringLiteral("memory");
        QTest::newRow("svg") << QStringLiteral("cli.svg") << QStringLiteral("breakdown");
        QTest::newRow("pdf") << QStringLiteral("cli.pdf") << QStringLiteral("topology");
        QTest::newRow("topology-ep") << QStringLiteral("cli-ep.png") << QStringLiteral("topology");
        QTest::newRow("gantt-png") << QStringLiteral("gantt.png") << QStringLiteral("gantt");
        QTest::newRow("gantt-svg") << QStringLiteral("gantt.svg") << QStringLiteral("gantt");
        QTest::newRow("gantt-pdf") << QStringLiteral("gantt.pdf") << QStringLiteral("gantt");
    }
    void commandLineExportWithoutDisplay()
    {
        QFETCH(QString, out);
        QFETCH(QString, chart);
        const QString path = m_dir.filePath(out);
        const testcli::Result r =
            testcli::run({QStringLiteral("export"),
                          QStringLiteral(PARALENS_SOURCE_DIR
                                         "/resources/examples/llama3-70b-64xh100.paralens.json"),
                          QStringLiteral("--chart"), chart, QStringLiteral("--out"), path,
                          QStringLiteral("--size"), QStringLiteral("640x480"),
                          QStringLiteral("--color-by"), QStringLiteral("ep")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        if (out.endsWith(QLatin1String(".png")))
            QCOMPARE(QImage(path).size(), QSize(640, 480));
        else if (out.endsWith(QLatin1String(".svg")))
            QCOMPARE(QSvgRenderer(path).viewBox(), QRect(0, 0, 640, 480));
        else
            QVERIFY(qAbs(pdfMediaBox(readAll(path)).width() - 480) < 1);
    }

    void commandLineErrors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        const QString scenario = QStringLiteral(
            PARALENS_SOURCE_DIR "/resources/examples/llama3-70b-64xh100.paralens.json");
        QTest::newRow("chart") << QStringList{scenario, "--chart", "pie", "--out", "g.png"}
                               << QStringLiteral("--chart");
        QTest::newRow("suffix") << QStringList{scenario, "--chart", "memory", "--out", "g.jpg"}
                                << QStringLiteral("--out");
        QTest::newRow("size") << QStringList{scenario, "--chart", "memory", "--out",
                                             "g.png",  "--size",  "big"}
                              << QStringLiteral("--size");
        QTest::newRow("color-by") << QStringList{scenario, "--chart",    "topology", "--out",
                                                 "g.png",  "--color-by", "rack"}
                                  << QStringLiteral("--color-by");
        QTest::newRow("missing") << QStringList{"/nonexistent.paralens.json", "--chart", "memory",
                                                "--out", "g.png"}
                                 << QStringLiteral("nonexistent");
    }
    void commandLineErrors()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        testcli::Options o;
        o.workingDir = m_dir.path();
        const testcli::Result r = testcli::run(QStringList{QStringLiteral("export")} + args, o);
        QCOMPARE(r.code, 1);
        const QString& err = r.err;
        const QStringList lines = err.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 1); // exactly one line on stderr
        QVERIFY2(lines.first().startsWith(QStringLiteral("error: ")) && err.contains(message),
                 qPrintable(err));
    }
};

QTEST_MAIN(TestExport)
#include "test_export.moc"
