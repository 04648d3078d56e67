// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/accuracyview.h"
#include "widgets/palette.h"
#include "widgets/units.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QResizeEvent>
#include <QToolTip>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace paralens {
namespace {

constexpr double kBand = 0.10;   // the ±10 % band
constexpr double kHitPixels = 8; // how near the cursor must be to a point
constexpr int kGroupsShown = 6;  // groups listed above the chart; the rest in its tooltip

QString qs(std::string_view s)
{
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

QString signedPct(double f)
{
    return QStringLiteral("%1%2 %").arg(f >= 0 ? "+" : "−").arg(std::abs(100 * f), 0, 'f', 1);
}

/// A figure in its own metric's units.
QString figure(RunMetric m, double v)
{
    switch (m) {
    case RunMetric::StepSeconds:
        return units::seconds(v);
    case RunMetric::TokensPerSecond:
        return AccuracyView::tr("%1 tokens/s").arg(units::count(v));
    case RunMetric::TflopsPerGpu:
        return AccuracyView::tr("%1 TFLOP/s per GPU").arg(v, 0, 'f', 1);
    case RunMetric::Mfu:
        return AccuracyView::tr("MFU %1").arg(units::percent(v));
    case RunMetric::PeakMemoryGib:
        return AccuracyView::tr("%1 GiB").arg(v, 0, 'f', 1);
    }
    return QString::number(v);
}

QString groupLine(const GroupSummary& g)
{
    return AccuracyView::tr("%1 (%2 runs): Spearman %3; the model's fastest plan measured #%4, "
                            "%5 slower than the fastest")
        .arg(qs(g.key))
        .arg(g.runs)
        .arg(g.spearman, 0, 'f', 2)
        .arg(g.best_plan_rank)
        .arg(units::percent(g.best_plan_slowdown));
}

} // namespace

AccuracyView::AccuracyView(QWidget* parent) : ChartView(parent)
{
    setToolTip(tr("Each point is a measured run: its measured step time across, the model's "
                  "prediction up. On the diagonal the model is exact; the band is ±10 %."));
    m_colour = new QComboBox(this);
    m_colour->setAccessibleName(tr("Colour runs by"));
    for (AccuracyColour c : allAccuracyColours())
        m_colour->addItem(tr("Colour by %1").arg(qs(accuracyColourName(c))));
    m_summary = new QLabel(tr("No runs loaded."), this);
    m_summary->setObjectName(QStringLiteral("accuracySummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_groups = new QLabel(this);
    m_groups->setObjectName(QStringLiteral("accuracyGroups"));
    m_groups->setWordWrap(true);
    m_groups->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* bar = new QHBoxLayout;
    bar->addWidget(m_summary, 1);
    bar->addWidget(m_colour, 0, Qt::AlignTop);
    layoutBox()->insertLayout(0, bar);
    layoutBox()->insertWidget(1, m_groups);

    QCustomPlot* p = plot();
    setUpTitleAndLegendBelow();
    for (QCPAxis* a : {p->xAxis, p->yAxis}) {
        a->setScaleType(QCPAxis::stLogarithmic);
        auto ticker = QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog);
        ticker->setSubTickCount(8);
        a->setTicker(ticker);
        a->setNumberFormat(QStringLiteral("g"));
    }
    p->xAxis->setLabel(measuredLabel(false));
    p->yAxis->setLabel(predictedLabel(false));
    m_bandLow = p->addGraph();
    m_bandLow->removeFromLegend();
    m_bandHigh = p->addGraph();
    m_bandHigh->setName(tr("±10 % band"));
    m_bandHigh->setChannelFillGraph(m_bandLow);
    m_identity = p->addGraph();
    m_identity->setName(tr("y = x (exact)"));
    applyColors();
    connect(m_colour, &QComboBox::currentIndexChanged, this, &AccuracyView::rebuild);
    connect(p, &QCustomPlot::mouseMove, this, &AccuracyView::hover);
    connect(p, &QCustomPlot::mouseDoubleClick, this, &AccuracyView::doubleClicked);
    updateTexts();
}

// Title above, legend below in columns: a report has up to dozens of groups, and a legend at
// the side would take the scatter's width in a dock.
void AccuracyView::setUpTitleAndLegendBelow()
{
    QCustomPlot* p = plot();
    p->plotLayout()->insertRow(0);
    QFont titleFont = font();
    titleFont.setBold(true);
    titleFont.setPointSizeF(titleFont.pointSizeF() + 1);
    p->plotLayout()->addElement(0, 0, new QCPTextElement(p, chartTitle(), titleFont));
    p->setAccessibleName(chartTitle());
    p->setAccessibleDescription(toolTip());
    p->axisRect()->insetLayout()->take(p->legend);
    p->plotLayout()->addElement(2, 0, p->legend);
    p->plotLayout()->setRowStretchFactor(2, 0.001);
    p->legend->setFillOrder(QCPLegend::foColumnsFirst);
    p->legend->setWrap(3);
    p->legend->setVisible(true);
    p->legend->setMargins(QMargins(6, 2, 6, 2));
    p->legend->setRowSpacing(0);
    palette::applyToPlot(p, palette());
}

void AccuracyView::resizeEvent(QResizeEvent* event)
{
    ChartView::resizeEvent(event);
    // As many legend columns as fit: group names run to some 40 characters.
    const int column = fontMetrics().averageCharWidth() * 44;
    const int wrap = std::clamp(width() / std::max(1, column), 1, 4);
    if (wrap != plot()->legend->wrap()) {
        plot()->legend->setWrap(wrap);
        plot()->replot(QCustomPlot::rpQueuedReplot);
    }
}

void AccuracyView::setReport(const AccuracyReport& report, std::vector<MeasuredRun> runs)
{
    m_report = report;
    m_runs = std::move(runs);
    markValid();
    rebuild();
}

void AccuracyView::clear()
{
    m_report = AccuracyReport{};
    m_runs.clear();
    rebuild();
}

void AccuracyView::setColourBy(AccuracyColour c)
{
    m_colour->setCurrentIndex(int(c));
}

AccuracyColour AccuracyView::colourBy() const
{
    return allAccuracyColours()[std::size_t(std::max(0, m_colour->currentIndex()))];
}

void AccuracyView::clearData()
{
    for (QCPGraph* g : m_series)
        plot()->removeGraph(g);
    m_series.clear();
    m_points = AccuracyPlot{};
    for (QCPGraph* g : {m_bandLow, m_bandHigh, m_identity})
        g->data()->clear();
}

void AccuracyView::rebuild()
{
    clearData();
    m_points = accuracyPlot(m_report, m_runs, colourBy());
    const int n = int(m_points.categories.size());
    for (int c = 0; c < n; ++c) {
        QCPGraph* g = plot()->addGraph();
        g->setName(qs(m_points.categories[std::size_t(c)]));
        g->setLineStyle(QCPGraph::lsNone);
        const QColor col = palette::group(c, n);
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, col, col, 6));
        m_series.push_back(g);
    }
    for (const AccuracyPoint& pt : m_points.points)
        m_series[std::size_t(pt.category)]->addData(pt.measured_seconds, pt.predicted_seconds);
    drawReference();
    updateTexts();
    plot()->replot();
}

void AccuracyView::drawReference()
{
    const double lo = m_points.lower > 0 ? m_points.lower : 0.1;
    const double hi = m_points.upper > lo ? m_points.upper : 10;
    const QVector<double> x{lo, hi};
    m_identity->setData(x, x, true);
    m_bandLow->setData(x, {lo * (1 - kBand), hi * (1 - kBand)}, true);
    m_bandHigh->setData(x, {lo * (1 + kBand), hi * (1 + kBand)}, true);
    plot()->xAxis->setRange(lo, hi);
    plot()->yAxis->setRange(lo, hi);
}

void AccuracyView::applyColors()
{
    const QColor text = palette().color(QPalette::WindowText);
    m_identity->setPen(QPen(text, 1.2));
    QColor band = palette::ok(palette());
    m_bandHigh->setPen(QPen(band, 1, Qt::DashLine));
    m_bandLow->setPen(QPen(band, 1, Qt::DashLine));
    band.setAlpha(70);
    m_bandHigh->setBrush(band);
}

QString AccuracyView::summaryText() const
{
    return m_summary->text();
}

QString AccuracyView::groupsText() const
{
    return m_groups->text();
}

void AccuracyView::updateTexts()
{
    const AccuracySummary& s = m_report.summary;
    if (s.runs == 0 && s.failed == 0) {
        m_summary->setText(tr("No runs loaded."));
        m_groups->clear();
        m_groups->setVisible(false);
        return;
    }
    QString text = tr("%1 runs predicted: mean error %2, median %3, worst %4 (%5)")
                       .arg(s.runs)
                       .arg(units::percent(s.mape), units::percent(s.median_ape),
                            signedPct(s.worst_error), qs(s.worst_name));
    if (s.failed > 0)
        text += tr(" · %1 could not be predicted").arg(s.failed);
    if (m_points.memory_rows > 0)
        text += tr(" · %1 memory figures not drawn").arg(m_points.memory_rows);
    m_summary->setText(text);
    QStringList shown, all;
    for (const GroupSummary& g : m_report.groups) {
        all << groupLine(g);
        if (shown.size() < kGroupsShown)
            shown << all.back();
    }
    if (all.size() > shown.size())
        shown << tr("… and %1 more groups (hover for all)").arg(all.size() - shown.size());
    m_groups->setText(shown.join(QLatin1Char('\n')));
    m_groups->setToolTip(all.join(QLatin1Char('\n')));
    m_groups->setVisible(!all.isEmpty());
}

QPointF AccuracyView::pointPixel(int i) const
{
    if (i < 0 || i >= pointCount())
        return {};
    const AccuracyPoint& p = m_points.points[std::size_t(i)];
    return {plot()->xAxis->coordToPixel(p.measured_seconds),
            plot()->yAxis->coordToPixel(p.predicted_seconds)};
}

int AccuracyView::pointAt(const QPointF& pos) const
{
    int best = -1;
    double bestD = kHitPixels * kHitPixels;
    for (int i = 0; i < pointCount(); ++i) {
        const QPointF d = pointPixel(i) - pos;
        const double dd = d.x() * d.x() + d.y() * d.y();
        if (dd <= bestD) {
            best = i;
            bestD = dd;
        }
    }
    return best;
}

QString AccuracyView::pointToolTip(int i) const
{
    if (i < 0 || i >= pointCount())
        return {};
    const RunResult& r = m_report.rows[m_points.points[std::size_t(i)].row];
    QStringList lines{qs(r.name)};
    lines << tr("measured %1, predicted %2 (%3)")
                 .arg(figure(r.metric, r.measured), figure(r.metric, r.predicted),
                      signedPct(r.error));
    lines << tr("predicted step %1: compute %2, bubble %3, exposed comm %4, optimizer %5")
                 .arg(units::seconds(r.step_seconds), units::seconds(r.compute_seconds),
                      units::seconds(r.bubble_seconds), units::seconds(r.comm_seconds),
                      units::seconds(r.optimizer_seconds));
    if (r.run_index < m_runs.size()) {
        const Scenario& s = m_runs[r.run_index].scenario;
        const ParallelPlan& p = s.parallel;
        lines << tr("TP %1 · PP %2 · DP %3 · CP %4 · EP %5 · micro-batch %6 · %7 GPUs")
                     .arg(p.tp)
                     .arg(p.pp)
                     .arg(p.dp)
                     .arg(p.cp)
                     .arg(p.ep)
                     .arg(s.training.micro_batch)
                     .arg(p.gpus());
    }
    if (!r.group.empty())
        lines << tr("group: %1").arg(qs(r.group));
    lines << tr("double-click to open this run");
    return lines.join(QLatin1Char('\n'));
}

void AccuracyView::choosePoint(int i)
{
    if (i < 0 || i >= pointCount())
        return;
    const RunResult& r = m_report.rows[m_points.points[std::size_t(i)].row];
    if (r.run_index < m_runs.size())
        emit runChosen(m_runs[r.run_index].scenario, qs(r.name));
}

void AccuracyView::hover(QMouseEvent* event)
{
    const int i = pointAt(event->position());
    if (i < 0) {
        QToolTip::hideText();
        return;
    }
    QToolTip::showText(event->globalPosition().toPoint(), pointToolTip(i), plot());
}

void AccuracyView::doubleClicked(QMouseEvent* event)
{
    choosePoint(pointAt(event->position()));
}

QString AccuracyView::measuredLabel(bool brief)
{
    return brief ? tr("measured (s)") : tr("measured step time (s)");
}

QString AccuracyView::predictedLabel(bool brief)
{
    return brief ? tr("predicted (s)") : tr("predicted step time (s)");
}

// A short dock leaves the vertical axis less height than its title: the title then says
// less rather than being cut ("predicted step time (s" in a 1600 × 1000 window with every
// dock open).
void AccuracyView::adaptLayoutTo(const QSize& size)
{
    const QFontMetrics fm(plot()->yAxis->labelFont());
    const bool brief = fm.horizontalAdvance(predictedLabel(false)) > size.height() / 2;
    if (plot()->yAxis->label() == predictedLabel(brief))
        return; // a new label invalidates the margins: only when it changes
    plot()->yAxis->setLabel(predictedLabel(brief));
    plot()->xAxis->setLabel(measuredLabel(brief));
}

} // namespace paralens
