// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/report.h"
#include "app/compare.h"
#include "app/export.h"
#include "core/compare.h"
#include "core/evaluate.h"
#include "widgets/chartview.h"
#include "widgets/headline.h"
#include "widgets/units.h"

#include <QFileInfo>
#include <QPageSize>
#include <QPdfWriter>
#include <qcustomplot.h>

#include <vector>

namespace paralens {
namespace {

constexpr int kDpi = 96;

/// A column of a table: its heading, its share of the page width and its alignment.
struct Column
{
    QString heading;
    double width;
    Qt::Alignment align = Qt::AlignLeft;
};

/// Lays text and tables out down the pages of the report, starting a page when the next
/// block does not fit.
class ReportWriter
{
public:
    ReportWriter(QPdfWriter* pdf, QCPPainter* painter, QStringList* log)
        : m_pdf(pdf), m_painter(painter), m_log(log),
          m_area(QPoint(0, 0), pdf->pageLayout().paintRectPixels(kDpi).size())
    {
        m_body = painter->font();
        m_body.setPointSizeF(9.5);
        m_line = QFontMetrics(m_body, pdf).height();
    }

    const QRect& area() const { return m_area; }
    int y() const { return m_y; }

    void newPage()
    {
        m_pdf->newPage();
        m_y = 0;
    }

    void title(const QString& text, double points)
    {
        QFont f = m_body;
        f.setPointSizeF(points);
        f.setBold(true);
        const int h = QFontMetrics(f, m_pdf).height();
        ensure(h + m_line * 2);
        m_painter->setFont(f);
        m_painter->setPen(Qt::black);
        m_painter->drawText(QRect(0, m_y, m_area.width(), h), Qt::AlignLeft, text);
        record(text);
        m_y += h + 4;
    }

    void paragraph(const QString& text, const QColor& color = Qt::black)
    {
        m_painter->setFont(m_body);
        const QRect box = QFontMetrics(m_body, m_pdf)
                              .boundingRect(QRect(0, 0, m_area.width(), 10000),
                                            Qt::AlignLeft | Qt::TextWordWrap, text);
        ensure(box.height());
        m_painter->setPen(color);
        m_painter->drawText(QRect(0, m_y, m_area.width(), box.height()),
                            Qt::AlignLeft | Qt::TextWordWrap, text);
        record(text);
        m_y += box.height() + 2;
    }

    void gap(int px) { m_y += px; }

    /// A table with a bold heading row, repeated on every page it runs onto.
    void table(const std::vector<Column>& columns, const QList<QStringList>& rows)
    {
        ensure(m_line * 3);
        heading(columns);
        for (const QStringList& row : rows) {
            if (m_y + m_line > m_area.height()) {
                newPage();
                heading(columns);
            }
            drawRow(columns, row, false);
        }
        m_y += m_line / 2;
    }

private:
    void ensure(int height)
    {
        if (m_y > 0 && m_y + height > m_area.height())
            newPage();
    }

    void heading(const std::vector<Column>& columns)
    {
        QStringList names;
        for (const Column& c : columns)
            names << c.heading;
        drawRow(columns, names, true);
        m_painter->setPen(QPen(Qt::gray, 0.8));
        m_painter->drawLine(QLineF(0, m_y, m_area.width(), m_y));
        m_y += 2;
    }

    void drawRow(const std::vector<Column>& columns, const QStringList& cells, bool bold)
    {
        QFont f = m_body;
        f.setBold(bold);
        m_painter->setFont(f);
        m_painter->setPen(Qt::black);
        const QFontMetrics fm(f, m_pdf);
        int x = 0;
        for (std::size_t i = 0; i < columns.size(); ++i) {
            const int w = int(columns[i].width * m_area.width());
            const QRect cell(x + 2, m_y, w - 6, m_line);
            m_painter->drawText(cell, columns[i].align | Qt::AlignVCenter,
                                fm.elidedText(cells.value(int(i)), Qt::ElideRight, cell.width()));
            x += w;
        }
        record(cells.join(QLatin1Char('\t')));
        m_y += m_line;
    }

    void record(const QString& text)
    {
        if (m_log)
            *m_log << text;
    }

    QPdfWriter* m_pdf;
    QCPPainter* m_painter;
    QStringList* m_log;
    QRect m_area;
    QFont m_body;
    int m_line = 14;
    int m_y = 0;
};

QString figureDelta(Headline::Figure f, const EstimateDelta& d)
{
    switch (f) {
    case Headline::StepTime:
        return Comparison::stepDeltaText(d.step_seconds, d.step_ratio);
    case Headline::Mfu:
        return Comparison::mfuDeltaText(d.mfu);
    case Headline::PeakMemory:
        return Comparison::bytesDeltaText(d.peak_bytes);
    case Headline::TokensPerSecond:
        return QObject::tr("%1%2 vs baseline")
            .arg(d.tokens_per_second < 0 ? QStringLiteral("−") : QStringLiteral("+"),
                 units::count(std::abs(d.tokens_per_second)));
    case Headline::TflopsPerGpu:
        return QObject::tr("%1%2 vs baseline")
            .arg(d.tflops_per_gpu < 0 ? QStringLiteral("−") : QStringLiteral("+"))
            .arg(std::abs(d.tflops_per_gpu), 0, 'f', 0);
    default:
        return {};
    }
}

void writeFigures(ReportWriter& w, const ReportContent& c)
{
    const bool compare = c.baseline && c.baseline->ok();
    std::vector<Column> columns{{QObject::tr("Figure"), 0.2}, {QObject::tr("Current"), 0.25}};
    if (compare) {
        columns.push_back({QObject::tr("Baseline"), 0.25});
        columns.push_back({QObject::tr("Change"), 0.3});
    }
    const EstimateDelta d =
        compare ? delta(c.current.estimate, c.baseline->estimate) : EstimateDelta{};
    QList<QStringList> rows;
    for (int i = 0; i < Headline::FigureCount; ++i) {
        const auto f = static_cast<Headline::Figure>(i);
        QStringList row{Headline::figureName(f), Headline::figureText(f, c.current.estimate)};
        if (compare)
            row << Headline::figureText(f, c.baseline->estimate) << figureDelta(f, d);
        rows << row;
    }
    w.table(columns, rows);
}

void writeWarnings(ReportWriter& w, const Evaluation& e, const QString& heading)
{
    const std::vector<std::string> texts = warningTexts(e.estimate);
    if (texts.empty())
        return;
    w.title(heading, 12);
    for (const std::string& t : texts)
        w.paragraph(QStringLiteral("• ") + QString::fromStdString(t), QColor(0xB0, 0x40, 0x00));
    w.gap(6);
}

void writeStageMemory(ReportWriter& w, const Estimate& e)
{
    w.title(QObject::tr("Memory per GPU by pipeline stage"), 12);
    const std::vector<Column> columns{{QObject::tr("Stage"), 0.07},
                                      {QObject::tr("Layers"), 0.07, Qt::AlignRight},
                                      {QObject::tr("Parameters"), 0.1, Qt::AlignRight},
                                      {QObject::tr("Gradients"), 0.1, Qt::AlignRight},
                                      {QObject::tr("Optimizer"), 0.1, Qt::AlignRight},
                                      {QObject::tr("Activations"), 0.1, Qt::AlignRight},
                                      {QObject::tr("Comm buffers"), 0.1, Qt::AlignRight},
                                      {QObject::tr("Overhead"), 0.1, Qt::AlignRight},
                                      {QObject::tr("Total"), 0.1, Qt::AlignRight},
                                      {QObject::tr("of HBM"), 0.08, Qt::AlignRight},
                                      {QString(), 0.08}};
    QList<QStringList> rows;
    for (const StageMemory& s : e.stages) {
        const bool over = e.capacity_bytes > 0 && s.total() > e.capacity_bytes;
        rows << QStringList{QString::number(s.stage),
                            QString::number(s.layers),
                            units::bytes(s.parameters),
                            units::bytes(s.gradients),
                            units::bytes(s.optimizer_states),
                            units::bytes(s.activations),
                            units::bytes(s.comm_buffers),
                            units::bytes(s.runtime_overhead),
                            units::bytes(s.total()),
                            e.capacity_bytes > 0 ? units::percent(s.total() / e.capacity_bytes)
                                                 : QStringLiteral("—"),
                            over ? QObject::tr("over") : QString()};
    }
    w.table(columns, rows);
}

} // namespace

QString calibrationSource(const Evaluation& e)
{
    const QString path = QString::fromStdString(e.scenario.calibration);
    if (e.estimate.calibrated)
        return QObject::tr("measured calibration profile %1")
            .arg(path.isEmpty() ? QObject::tr("(unsaved)") : QFileInfo(path).fileName());
    if (!e.calibration.isEmpty())
        return QObject::tr("datasheet figures: %1").arg(e.calibration);
    return QObject::tr("datasheet figures (no calibration profile)");
}

bool exportReport(const QString& path, const ReportContent& content, QString* error,
                  QStringList* text)
{
    QPdfWriter pdf(path);
    pdf.setResolution(kDpi);
    pdf.setTitle(QObject::tr("ParaLens report"));
    pdf.setCreator(QStringLiteral("ParaLens " PARALENS_VERSION));
    pdf.setPageSize(QPageSize(QPageSize::A4));
    pdf.setPageOrientation(QPageLayout::Landscape);
    pdf.setPageMargins(QMarginsF(12, 12, 12, 12), QPageLayout::Millimeter);
    QCPPainter painter;
    if (!painter.begin(&pdf)) {
        if (error)
            *error = QObject::tr("Cannot write %1").arg(path);
        return false;
    }
    painter.setMode(QCPPainter::pmVectorized);
    painter.setMode(QCPPainter::pmNoCaching);
    ReportWriter w(&pdf, &painter, text);
    const Evaluation& e = content.current;
    const bool compare = content.baseline && content.baseline->ok();
    w.title(QObject::tr("ParaLens report"), 18);
    w.paragraph(QObject::tr("Plan: %1").arg(scenarioStamp(e.scenario)));
    if (compare)
        w.paragraph(QObject::tr("Baseline: %1").arg(scenarioStamp(content.baseline->scenario)));
    w.paragraph(QObject::tr("Calibration: %1").arg(calibrationSource(e)));
    w.gap(6);
    if (e.ok()) {
        writeFigures(w, content);
        writeWarnings(w, e, QObject::tr("Warnings"));
        if (compare)
            writeWarnings(w, *content.baseline, QObject::tr("Warnings on the baseline"));
        writeStageMemory(w, e.estimate);
    } else {
        w.paragraph(QObject::tr("The plan cannot run: %1").arg(e.reason()),
                    QColor(0xB0, 0x40, 0x00));
    }
    const QPalette palette; // reports are printed: the default light palette
    for (ChartView* chart : content.charts) {
        w.newPage();
        paintChart(chart, &painter, w.area(), QString(), palette);
    }
    painter.end();
    if (QFileInfo(path).size() == 0) {
        if (error)
            *error = QObject::tr("Cannot write %1").arg(path);
        return false;
    }
    return true;
}

} // namespace paralens
