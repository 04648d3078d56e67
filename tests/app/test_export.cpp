// SPDX-License-Identifier: GPL-3.0-or-later
// Export writes valid PNG/SVG/PDF files of the requested size, from the menu's code path and
// from `paralens export` without a display.
#include "app/compare.h"
#include "app/evaluator.h"
#include "app/export.h"
#include "app/mainwindow.h"
#include "app/report.h"
#include "cli_runner.h"
#include "core/calibration.h"
#include "core/compare.h"
#include "core/evaluate.h"
#include "core/scenario_io.h"
#include "widgets/accuracyview.h"
#include "widgets/calibrationview.h"
#include "widgets/chartview.h"
#include "widgets/headline.h"
#include "widgets/memoryview.h"
#include "widgets/searchview.h"
#include "widgets/units.h"

#include <QFile>
#include <QImage>
#include <QPainter>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QTest>
#include <qcustomplot.h>

#include <cmath>

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

/// Mean absolute difference per channel (0..255) of two images of one size.
double meanDifference(const QImage& a, const QImage& b)
{
    const QImage x = a.convertToFormat(QImage::Format_RGB32);
    const QImage y = b.convertToFormat(QImage::Format_RGB32);
    double sum = 0;
    for (int r = 0; r < x.height(); ++r) {
        const auto* p = reinterpret_cast<const QRgb*>(x.constScanLine(r));
        const auto* q = reinterpret_cast<const QRgb*>(y.constScanLine(r));
        for (int c = 0; c < x.width(); ++c)
            sum += std::abs(qRed(p[c]) - qRed(q[c])) + std::abs(qGreen(p[c]) - qGreen(q[c])) +
                   std::abs(qBlue(p[c]) - qBlue(q[c]));
    }
    return sum / (3.0 * x.width() * x.height());
}

/// Rows that hold anything but the background (the corner pixel's colour), as a profile:
/// text and bars in the same rows at both scales mean the same layout.
QVector<bool> inkRows(const QImage& img)
{
    const QImage x = img.convertToFormat(QImage::Format_RGB32);
    const QRgb bg = x.pixel(0, 0);
    QVector<bool> rows(x.height(), false);
    for (int r = 0; r < x.height(); ++r)
        for (int c = 0; c < x.width() && !rows[r]; ++c) {
            const QRgb p = x.pixel(c, r);
            rows[r] = std::abs(qGray(p) - qGray(bg)) > 60;
        }
    return rows;
}

/// Share of rows whose ink differs between two profiles.
double rowMismatch(const QVector<bool>& a, const QVector<bool>& b)
{
    int differ = 0;
    for (int i = 0; i < a.size(); ++i)
        differ += a[i] != b.value(i);
    return double(differ) / a.size();
}

/// Collects QCustomPlot's complaints (qDebug "QCP…") while it lives.
class QcpMessages
{
public:
    QcpMessages() { s_messages.clear(), m_previous = qInstallMessageHandler(handler); }
    ~QcpMessages() { qInstallMessageHandler(m_previous); }
    QStringList messages() const { return s_messages; }

private:
    static void handler(QtMsgType, const QMessageLogContext&, const QString& text)
    {
        if (text.contains(QLatin1String("QCP")))
            s_messages << text;
    }
    static inline QStringList s_messages;
    QtMessageHandler m_previous = nullptr;
};

} // namespace

class TestExport : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;
    Evaluation m_eval;

    void checkScaleLayout(ChartView* view, double scale)
    {
        const QString chart = view->chartId();
        QString error;
        const QSize size(900, 560);
        view->resize(size);
        const QString stamp = scenarioStamp(m_eval.scenario);
        const QString one = m_dir.filePath(chart + QStringLiteral("-s1.png"));
        const QString big = m_dir.filePath(chart + QStringLiteral("-s%1.png").arg(scale));
        QVERIFY2(exportChart(view, one, {size, 1.0}, stamp, &error), qPrintable(error));
        QVERIFY2(exportChart(view, big, {size, scale}, stamp, &error), qPrintable(error));
        const QImage a(one);
        const QImage b(big);
        QCOMPARE(b.size(), size * scale);
        const QImage shrunk = b.scaled(size, Qt::IgnoreAspectRatio, Qt::SmoothTransformation);
        const double diff = meanDifference(a, shrunk);
        const double rows = rowMismatch(inkRows(a), inkRows(shrunk));
        QVERIFY2(diff < 4.0 && rows < 0.03, qPrintable(QStringLiteral("%1: mean difference %2, "
                                                                      "%3 of rows differ")
                                                           .arg(chart)
                                                           .arg(diff)
                                                           .arg(rows)));
        // The scale-1 PNG is the SVG's picture: one layout for every format.
        const QString svg = m_dir.filePath(chart + QStringLiteral(".layout.svg"));
        QVERIFY(exportChart(view, svg, {size, 1.0}, stamp, &error));
        QImage drawn(size, QImage::Format_RGB32);
        drawn.fill(a.pixel(0, 0));
        {
            QPainter painter(&drawn);
            QSvgRenderer(svg).render(&painter);
        }
        const double svgRows = rowMismatch(inkRows(a), inkRows(drawn));
        QVERIFY2(svgRows < 0.03,
                 qPrintable(QStringLiteral("%1: svg rows differ %2").arg(chart).arg(svgRows)));
        const QString shots = qEnvironmentVariable("PARALENS_SHOT_DIR");
        if (!shots.isEmpty()) {
            QFile::copy(one, shots + QStringLiteral("/%1-s1.png").arg(chart));
            QFile::copy(big, shots + QStringLiteral("/%1-s%2.png").arg(chart).arg(scale));
        }
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QStandardPaths::setTestModeEnabled(true); // the window's settings and autosave
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

    // The PNG at scale 2 is the scale-1 picture at twice the pixels: shrunk back to the
    // scale-1 size it differs only by antialiasing, and its ink sits in the same rows (the old
    // export drew text at twice the size into the scale-1 layout: titles cut, labels clipped).
    void scaleKeepsTheLayout_data()
    {
        QTest::addColumn<QString>("chart");
        QTest::addColumn<double>("scale");
        for (const QString& c : chartIds()) {
            QTest::newRow(qPrintable(c + QStringLiteral("@2"))) << c << 2.0;
            QTest::newRow(qPrintable(c + QStringLiteral("@3"))) << c << 3.0;
        }
    }
    void scaleKeepsTheLayout()
    {
        QFETCH(QString, chart);
        QFETCH(double, scale);
        QString error;
        auto view = makeChart(chart, m_eval, &error);
        QVERIFY2(view, qPrintable(error));
        checkScaleLayout(view.get(), scale);
    }

    // The tool docks' charts export through the same path: calibration (a fitted curve), the
    // search scatter and the accuracy chart (empty, with their message).
    void toolChartsKeepTheLayout()
    {
        CollectiveCurve c;
        c.collective = Collective::AllReduce;
        c.ranks = 8;
        for (int e = 20; e <= 30; e += 2) {
            SizePoint p;
            p.size_bytes = std::ldexp(1.0, e);
            p.time_median_seconds = 10e-6 + p.size_bytes * 1.75 / 100e9; // α 10 µs, 100 GB/s
            p.algbw_gbps = p.size_bytes / p.time_median_seconds / 1e9;
            p.busbw_gbps = p.algbw_gbps * 1.75;
            c.points.push_back(p);
        }
        c.fit = fitAlphaBeta(c.collective, c.ranks, c.points);
        CalibrationProfile profile;
        profile.collectives = {c};
        CalibrationView calibration;
        calibration.setProfile(profile);
        checkScaleLayout(&calibration, 2.0);
        SearchView search;
        checkScaleLayout(&search, 2.0);
        AccuracyView accuracy;
        checkScaleLayout(&accuracy, 2.0);
    }

    // Building, filling, exporting and replotting every chart says nothing on stderr (the
    // Gantt used to take elements its layout did not hold: 40 "Element not in this layout").
    void chartsAndWindowAreQuiet()
    {
        QcpMessages log;
        QString error;
        for (const QString& c : chartIds()) {
            auto view = makeChart(c, m_eval, &error);
            view->resize(700, 420);
            view->show();
            view->plot()->replot(QCustomPlot::rpImmediateRefresh);
            QVERIFY(exportChart(view.get(), m_dir.filePath(c + QStringLiteral("-quiet.png")),
                                {QSize(640, 400), 2.0}, {}, &error));
            view->setInvalid(QStringLiteral("no"));
            view->plot()->replot(QCustomPlot::rpImmediateRefresh);
        }
        {
            MainWindow window;
            window.resize(1024, 700);
            window.show();
            QVERIFY(QTest::qWaitForWindowExposed(&window));
            QTest::qWait(300);
        }
        QVERIFY2(log.messages().isEmpty(), qPrintable(log.messages().join(QLatin1Char('\n'))));
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
        const QString path = m_dir.filePath(QStringLiteral("report.pdf"));
        QVERIFY2(exportReport(
                     path, {m_eval, std::nullopt, {memory.get(), breakdown.get(), topology.get()}},
                     &error),
                 qPrintable(error));
        const QByteArray bytes = readAll(path);
        QVERIFY(bytes.startsWith("%PDF-"));
        QCOMPARE(pdfPages(bytes), 4); // the summary, then memory, breakdown, topology
        const QString shots = qEnvironmentVariable("PARALENS_SHOT_DIR");
        if (!shots.isEmpty())
            QFile::copy(path, shots + QStringLiteral("/report.pdf"));
    }

    // Comparing: the report names both plans, gives each figure for both with the change, the
    // warnings of each, a row per pipeline stage and where the figures come from.
    void reportComparesWithTheBaseline()
    {
        Scenario base = m_eval.scenario;
        base.parallel.tp = 4;
        base.parallel.pp = 8; // 64 GPUs: TP 4 · PP 8 · DP 2
        const Evaluation baseline = Evaluator::evaluateScenario(base);
        QVERIFY2(baseline.ok(), qPrintable(baseline.reason()));
        QString error;
        auto memory = makeChart(QStringLiteral("memory"), m_eval, &error);
        QStringList text;
        const QString path = m_dir.filePath(QStringLiteral("compare.pdf"));
        QVERIFY2(exportReport(path, {m_eval, baseline, {memory.get()}}, &error, &text),
                 qPrintable(error));
        const QString all = text.join(QLatin1Char('\n'));
        QVERIFY2(all.contains(QStringLiteral("Baseline: ") + scenarioStamp(base)), qPrintable(all));
        QVERIFY(all.contains(QStringLiteral("Plan: ") + scenarioStamp(m_eval.scenario)));
        // The step row: current, baseline and the core's delta as the headline words it.
        const EstimateDelta d = delta(m_eval.estimate, baseline.estimate);
        const QString stepRow = QStringList{Headline::figureName(Headline::StepTime),
                                            units::seconds(m_eval.estimate.time.step_seconds),
                                            units::seconds(baseline.estimate.time.step_seconds),
                                            Comparison::stepDeltaText(d.step_seconds, d.step_ratio)}
                                    .join(QLatin1Char('\t'));
        QVERIFY2(text.contains(stepRow), qPrintable(all));
        // One memory row per stage, its total as the estimate's.
        for (const StageMemory& st : m_eval.estimate.stages) {
            const QString prefix = QStringLiteral("%1\t%2\t").arg(st.stage).arg(st.layers);
            bool found = false;
            for (const QString& line : text)
                found |= line.startsWith(prefix) && line.contains(units::bytes(st.total()));
            QVERIFY2(found, qPrintable(prefix));
        }
        QVERIFY(all.contains(QStringLiteral("Calibration: datasheet figures")));
        // Warnings of the plan, word for word from the core.
        Scenario warned = m_eval.scenario;
        // 1F1B with m = p = 4: a bubble of (p − 1) / (m + p − 1) = 43 % of the step.
        warned.parallel.schedule = Schedule::OneF1B;
        warned.parallel.virtual_stages = 1;
        warned.training.global_batch =
            warned.training.micro_batch * warned.parallel.dp * warned.parallel.pp;
        const Evaluation w = Evaluator::evaluateScenario(warned);
        QVERIFY2(w.ok(), qPrintable(w.reason()));
        QVERIFY(!warningTexts(w.estimate).empty());
        text.clear();
        QVERIFY(exportReport(path, {w, std::nullopt, {}}, &error, &text));
        for (const std::string& t : warningTexts(w.estimate))
            QVERIFY2(text.contains(QStringLiteral("• ") + QString::fromStdString(t)),
                     qPrintable(text.join(QLatin1Char('\n'))));
        QVERIFY(!text.join(QLatin1Char('\n')).contains(QStringLiteral("Baseline")));
    }

    // Exports leave out the stage the Gantt selected (an on-screen highlight).
    void exportsOmitTheStageHighlight()
    {
        QString error;
        auto view = makeChart(QStringLiteral("memory"), m_eval, &error);
        auto* memory = qobject_cast<MemoryView*>(view.get());
        const QString plain = m_dir.filePath(QStringLiteral("plain.png"));
        const QString marked = m_dir.filePath(QStringLiteral("marked.png"));
        QVERIFY(exportChart(view.get(), plain, {QSize(700, 400), 1.0}, {}, &error));
        memory->setHighlightedStage(1);
        QVERIFY(exportChart(view.get(), marked, {QSize(700, 400), 1.0}, {}, &error));
        QCOMPARE(QImage(marked), QImage(plain));
        QCOMPARE(memory->highlightedStage(), 1); // still shown on screen
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
