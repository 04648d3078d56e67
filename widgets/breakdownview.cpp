// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/breakdownview.h"
#include "widgets/legenditem.h"
#include "widgets/palette.h"
#include "widgets/units.h"

#include <QToolTip>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace paralens {
namespace {

constexpr double kCriticalRow = 2;
constexpr double kHiddenRow = 1;

bool isHiddenSegment(BreakdownView::Segment s)
{
    return s >= BreakdownView::HiddenTp;
}

double secondsOf(const TimeBreakdown& t, BreakdownView::Segment s)
{
    switch (s) {
    case BreakdownView::Compute:
        return t.compute_seconds;
    case BreakdownView::Bubble:
        return t.bubble_seconds;
    case BreakdownView::ExposedTp:
        return t.exposed.tp;
    case BreakdownView::ExposedCp:
        return t.exposed.cp;
    case BreakdownView::ExposedEp:
        return t.exposed.ep;
    case BreakdownView::ExposedPp:
        return t.exposed.pp;
    case BreakdownView::ExposedDp:
        return t.exposed.dp;
    case BreakdownView::OptimizerStep:
        return t.optimizer_seconds;
    case BreakdownView::Offload:
        return t.offload_seconds;
    case BreakdownView::HiddenTp:
        return t.overlapped.tp;
    case BreakdownView::HiddenCp:
        return t.overlapped.cp;
    case BreakdownView::HiddenEp:
        return t.overlapped.ep;
    case BreakdownView::HiddenPp:
        return t.overlapped.pp;
    case BreakdownView::HiddenDp:
        return t.overlapped.dp;
    case BreakdownView::SegmentCount:
        break;
    }
    return 0;
}

/// The hidden (hatched) segment of an exposed communication segment; the segment itself for
/// the others, whose time is never hidden.
BreakdownView::Segment hiddenTwin(BreakdownView::Segment s)
{
    switch (s) {
    case BreakdownView::ExposedTp:
        return BreakdownView::HiddenTp;
    case BreakdownView::ExposedCp:
        return BreakdownView::HiddenCp;
    case BreakdownView::ExposedEp:
        return BreakdownView::HiddenEp;
    case BreakdownView::ExposedPp:
        return BreakdownView::HiddenPp;
    case BreakdownView::ExposedDp:
        return BreakdownView::HiddenDp;
    default:
        return s;
    }
}

int colorSlot(BreakdownView::Segment s)
{
    // compute blue, bubble grey, TP orange, CP sky, EP green, PP yellow, DP vermillion,
    // optimizer purple, offload grey; hidden parts reuse their dimension's colour, hatched.
    constexpr int kSlots[] = {4, 7, 0, 1, 2, 3, 5, 6, 7, 0, 1, 2, 3, 5};
    return kSlots[s];
}

} // namespace

QString BreakdownView::segmentName(Segment s)
{
    switch (s) {
    case Compute:
        return tr("Compute");
    case Bubble:
        return tr("Pipeline bubble");
    case ExposedTp:
        return tr("TP comm");
    case ExposedCp:
        return tr("CP comm");
    case ExposedEp:
        return tr("EP comm");
    case ExposedPp:
        return tr("PP comm");
    case ExposedDp:
        return tr("DP comm");
    case OptimizerStep:
        return tr("Optimizer step");
    case Offload:
        return tr("Offload");
    case HiddenTp:
        return tr("TP comm (hidden)");
    case HiddenCp:
        return tr("CP comm (hidden)");
    case HiddenEp:
        return tr("EP comm (hidden)");
    case HiddenPp:
        return tr("PP comm (hidden)");
    case HiddenDp:
        return tr("DP comm (hidden)");
    case SegmentCount:
        break;
    }
    return {};
}

BreakdownView::BreakdownView(QWidget* parent) : ChartView(parent)
{
    setAccessibleName(tr("Step time breakdown"));
    setToolTip(tr("Where one optimizer step's time goes; hatched: communication hidden under "
                  "compute"));
    QCustomPlot* p = plot();
    setUpTitleAndLegend();
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    ticker->addTick(kCriticalRow, tr("Critical path"));
    ticker->addTick(kHiddenRow, tr("Hidden under\ncompute"));
    p->yAxis->setTicker(ticker);
    // Headroom above the critical-path row keeps the "step" label off its bars.
    p->yAxis->setRange(0.4, 2.95);
    p->yAxis->grid()->setVisible(false);

    QCPBars* below = nullptr;
    QCPBars* belowHidden = nullptr;
    for (int i = 0; i < SegmentCount; ++i) {
        const auto seg = static_cast<Segment>(i);
        auto* bars = new QCPBars(p->yAxis, p->xAxis);
        bars->setName(segmentName(seg));
        bars->setWidthType(QCPBars::wtPlotCoords);
        bars->setWidth(0.6);
        bars->setStackingGap(0);
        QCPBars*& prev = isHiddenSegment(seg) ? belowHidden : below;
        if (prev)
            bars->moveAbove(prev);
        prev = bars;
        if (isHiddenSegment(seg))
            bars->removeFromLegend();
        m_bars[static_cast<std::size_t>(i)] = bars;
    }
    m_ghost = new QCPBars(p->yAxis, p->xAxis);
    m_ghost->setName(tr("Baseline step"));
    m_ghost->setWidthType(QCPBars::wtPlotCoords);
    m_ghost->setWidth(0.16);
    m_ghost->removeFromLegend();
    m_stepLine = new QCPItemStraightLine(p);
    m_stepLabel = new QCPItemText(p);
    m_stepLabel->setPositionAlignment(Qt::AlignRight | Qt::AlignTop);
    m_stepLabel->position->setTypeX(QCPItemPosition::ptPlotCoords);
    m_stepLabel->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    m_stepLine->setVisible(false);
    m_stepLabel->setVisible(false);

    connect(p, &QCustomPlot::mouseMove, this, &BreakdownView::onMouseMove);
    cacheLegendItems(p->legend);
    applyColors();
}

void BreakdownView::applyColors()
{
    const QColor edge = palette().color(QPalette::Base);
    for (int i = 0; i < SegmentCount; ++i) {
        const auto seg = static_cast<Segment>(i);
        QColor c = palette::categorical(colorSlot(seg));
        if (seg == Offload)
            c = c.darker(140);
        QBrush brush(c);
        if (isHiddenSegment(seg))
            brush.setStyle(Qt::BDiagPattern);
        auto* bars = m_bars[static_cast<std::size_t>(i)];
        bars->setBrush(brush);
        bars->setPen(QPen(isHiddenSegment(seg) ? c : edge, 1));
    }
    m_stepLine->setPen(QPen(palette().color(QPalette::Text), 1.5, Qt::DashLine));
    m_stepLabel->setColor(palette().color(QPalette::Text));
    QColor ghost = palette().color(QPalette::Text);
    m_ghost->setPen(QPen(ghost, 1.2, Qt::DashLine));
    ghost.setAlpha(40);
    m_ghost->setBrush(ghost);
}

void BreakdownView::setBaseline(const Estimate* baseline)
{
    m_ghost->data()->clear();
    if (baseline && baseline->time.step_seconds > 0) {
        const double v = baseline->time.step_seconds / m_unit;
        m_ghost->setData(QVector<double>{kCriticalRow + 0.42}, QVector<double>{v}, true);
        if (plot()->xAxis->range().upper < v * 1.08)
            plot()->xAxis->setRange(0, v * 1.08);
        addToLegend(m_ghost);
    } else {
        m_ghost->removeFromLegend();
    }
    plot()->replot(QCustomPlot::rpQueuedReplot);
}

double BreakdownView::baselineStepSeconds() const
{
    return m_ghost->data()->isEmpty() ? 0.0 : m_ghost->data()->at(0)->value * m_unit;
}

void BreakdownView::clearData()
{
    for (QCPBars* b : m_bars)
        b->data()->clear();
    m_stepLine->setVisible(false);
    m_stepLabel->setVisible(false);
    m_estimate = Estimate{};
}

void BreakdownView::setEstimate(const Estimate& estimate)
{
    m_estimate = estimate;
    markValid();
    const TimeBreakdown& t = estimate.time;
    m_unit = units::timeAxisUnit(t.step_seconds);
    double critical = 0, hidden = 0;
    for (int i = 0; i < SegmentCount; ++i) {
        const auto seg = static_cast<Segment>(i);
        const double v = secondsOf(t, seg) / m_unit;
        auto* bars = m_bars[static_cast<std::size_t>(i)];
        bars->setData(QVector<double>{isHiddenSegment(seg) ? kHiddenRow : kCriticalRow},
                      QVector<double>{v}, true);
        (isHiddenSegment(seg) ? hidden : critical) += v;
        // The legend names what this plan spends time on (no CP or EP on a dense model).
        if (!isHiddenSegment(seg)) {
            const double hiddenSeconds = hiddenTwin(seg) != seg ? secondsOf(t, hiddenTwin(seg)) : 0;
            if (v > 0 || hiddenSeconds > 0)
                addToLegend(bars);
            else
                bars->removeFromLegend();
        }
    }
    const double step = t.step_seconds / m_unit;
    const double top = std::max({critical, hidden, step});
    plot()->xAxis->setRange(0, top > 0 ? top * 1.08 : 1);
    plot()->xAxis->setLabel(tr("%1 per step").arg(units::timeAxisUnitName(m_unit)));
    m_stepLine->setVisible(step > 0);
    m_stepLabel->setVisible(step > 0);
    m_stepLine->point1->setCoords(step, 0);
    m_stepLine->point2->setCoords(step, 1);
    m_stepLabel->position->setCoords(step, 0.02);
    m_stepLabel->setText(tr("step %1 ").arg(units::seconds(t.step_seconds)));
}

double BreakdownView::segmentSeconds(Segment s) const
{
    const auto& data = m_bars[static_cast<std::size_t>(s)]->data();
    return data->isEmpty() ? 0.0 : data->at(0)->value * m_unit;
}

void BreakdownView::onMouseMove(QMouseEvent* event)
{
    if (isInvalid() || m_estimate.time.step_seconds <= 0) {
        QToolTip::hideText();
        return;
    }
    const QPointF pos = event->position();
    const double row = plot()->yAxis->pixelToCoord(pos.y());
    const double x = plot()->xAxis->pixelToCoord(pos.x());
    const bool hiddenRow = std::abs(row - kHiddenRow) < 0.3;
    if (!hiddenRow && std::abs(row - kCriticalRow) >= 0.3) {
        QToolTip::hideText();
        return;
    }
    double base = 0;
    for (int i = 0; i < SegmentCount; ++i) {
        const auto seg = static_cast<Segment>(i);
        if (isHiddenSegment(seg) != hiddenRow)
            continue;
        const double v = segmentSeconds(seg) / m_unit;
        if (x >= base && x < base + v) {
            const double sec = secondsOf(m_estimate.time, seg);
            QToolTip::showText(event->globalPosition().toPoint(),
                               tr("<b>%1</b><br>%2 (%3 of the step)")
                                   .arg(segmentName(seg), units::seconds(sec),
                                        units::percent(sec / m_estimate.time.step_seconds)),
                               plot());
            return;
        }
        base += v;
    }
    QToolTip::hideText();
}

} // namespace paralens
