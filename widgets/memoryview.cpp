// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/memoryview.h"
#include "widgets/legenditem.h"
#include "widgets/palette.h"
#include "widgets/units.h"

#include <QToolTip>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace paralens {
namespace {

double partBytes(const StageMemory& s, MemoryView::Part part)
{
    switch (part) {
    case MemoryView::Parameters:
        return s.parameters;
    case MemoryView::Gradients:
        return s.gradients;
    case MemoryView::OptimizerStates:
        return s.optimizer_states;
    case MemoryView::Activations:
        return s.activations;
    case MemoryView::Buffers:
        return s.comm_buffers;
    case MemoryView::Overhead:
        return s.runtime_overhead;
    case MemoryView::PartCount:
        break;
    }
    return 0;
}

// Colour per part: fixed Okabe–Ito slots so a part keeps its colour in every chart.
int colorSlot(MemoryView::Part part)
{
    constexpr int kSlots[] = {4, 1, 2, 0, 6, 7};
    return kSlots[part];
}

// The formula behind each segment, in the notation of docs/formulas.md. Numbers come from core;
// this only names the terms the core used for these settings.
QString formula(MemoryView::Part part, const Scenario& s, const StageMemory& st)
{
    const ParallelPlan& p = s.parallel;
    const QString zero = p.zero > 0 ? QObject::tr(", ÷ DP·CP = %1 (ZeRO-%2)")
                                          .arg(p.shardGroup() * std::max(1, p.cp))
                                          .arg(p.zero)
                                    : QString();
    switch (part) {
    case MemoryView::Parameters:
        return QObject::tr("parameters of the stage's %1 layers%5 ÷ TP = %2%3%4")
            .arg(st.layers)
            .arg(p.tp)
            .arg(s.model.isMoe() ? QObject::tr(", routed experts ÷ EP = %1").arg(p.ep) : QString())
            .arg(p.zero >= 3 ? zero : QString())
            .arg((st.holds_embedding ? QObject::tr(" + word embedding") : QString()) +
                 (st.holds_lm_head ? QObject::tr(" + final norm and LM head") : QString()) +
                 (st.mtp_layers > 0
                      ? QObject::tr(" + %n MTP module(s) (block, 2h×h projection, embedding copy)",
                                    nullptr, st.mtp_layers)
                      : QString()));
    case MemoryView::Gradients:
        return QObject::tr("one gradient per local parameter%1%2")
            .arg(s.training.framework == Framework::Megatron ? QObject::tr(" (fp32 main grads)")
                                                             : QString())
            .arg(p.zero >= 2 ? zero : QString());
    case MemoryView::OptimizerStates:
        return QObject::tr("%1 per local parameter%2%3")
            .arg(s.training.optimizer == Optimizer::Adam
                     ? QObject::tr("fp32 master + 2 Adam moments")
                     : QObject::tr("fp32 master + momentum"))
            .arg(p.zero >= 1 ? zero : QString())
            .arg(p.offload_optimizer ? QObject::tr(", offloaded to host") : QString());
    case MemoryView::Activations: {
        // Names the terms of docs/formulas.md §3.2/3.3 the core sums for these settings.
        const QString sp = p.sequence_parallel ? QStringLiteral("/t") : QString();
        const int recomputed = st.layers - st.stored_layers;
        const QString perLayer =
            s.training.recompute == Recompute::Full && st.stored_layers > 0
                ? QObject::tr("layer inputs 2·s·b·h%1 for the %2 recomputed layers (+ one "
                              "rebuilt in backward), every activation of the other %3")
                      .arg(sp)
                      .arg(recomputed)
                      .arg(st.stored_layers)
            : s.training.recompute == Recompute::Full
                ? QObject::tr("layer inputs 2·s·b·h%1 (+ one layer rebuilt in backward)").arg(sp)
                : QObject::tr("attention (%1) + %2 MLP per layer, %3")
                      .arg(s.training.flash_attention ? QObject::tr("flash, no s² term")
                                                      : QObject::tr("with 5·a·s²·b"))
                      .arg(s.model.gated_mlp ? QObject::tr("gated") : QObject::tr("plain"))
                      .arg(p.sequence_parallel ? QObject::tr("all ÷ TP (sequence parallel)")
                                               : QObject::tr("10·s·b·h replicated over TP"));
        return QObject::tr("Korthikanti et al. 2022: %1, ÷ CP = %2; × %3 layers × %4 "
                           "micro-batches in flight%5 (s = %6, b = %7, t = %8)")
            .arg(perLayer)
            .arg(p.cp)
            .arg(st.layers)
            .arg(st.inflight_microbatches, 0, 'g', 4)
            .arg((st.holds_embedding ? QObject::tr(", + embedding") : QString()) +
                 (st.holds_lm_head ? QObject::tr(", + LM head and logits") : QString()) +
                 (st.mtp_layers > 0 ? QObject::tr(", + %n MTP module(s) with a second fp32 logits",
                                                  nullptr, st.mtp_layers)
                                    : QString()))
            .arg(s.training.seq_len)
            .arg(s.training.micro_batch)
            .arg(p.tp);
    }
    case MemoryView::Buffers:
        return QObject::tr("NCCL buffers per process group + gradient/all-gather buckets%1")
            .arg(p.zero >= 3 ? QObject::tr(" + gathered layers (ZeRO-3)") : QString());
    case MemoryView::Overhead:
        return QObject::tr("CUDA context + temporaries in proportion to activations");
    case MemoryView::PartCount:
        break;
    }
    return {};
}

} // namespace

// A narrow plot (a 1024-pixel screen, a dock beside it): the legend's short names and a
// shorter capacity label leave the bars their room; the hover keeps the full names.
void MemoryView::adaptLayoutTo(const QSize& size)
{
    const bool narrow = size.width() < 60 * QFontMetrics(font()).averageCharWidth();
    if (narrow == m_narrow)
        return;
    m_narrow = narrow;
    const QString shortNames[] = {tr("Params"),      tr("Grads"),   tr("Optimizer"),
                                  tr("Activations"), tr("Buffers"), tr("Runtime")};
    for (int i = 0; i < PartCount; ++i)
        m_bars[std::size_t(i)]->setName(narrow ? shortNames[i] : partName(static_cast<Part>(i)));
    setCapacityText();
}

// The capacity label is a plot item, which keeps the font it was made with: it follows the
// view's font (presentation mode's large type, and back), and the margin follows the label.
void MemoryView::changeEvent(QEvent* event)
{
    ChartView::changeEvent(event);
    if (event->type() == QEvent::FontChange && m_capacityLabel) {
        m_capacityLabel->setFont(font());
        setCapacityText();
    }
}

void MemoryView::setCapacityText()
{
    const bool hasCapacity = m_capacityLabel->visible();
    if (hasCapacity)
        m_capacityLabel->setText((m_narrow ? tr("HBM\n%1") : tr("HBM capacity\n%1"))
                                     .arg(units::bytes(m_capacityGiB * units::kGiB)));
    // Room for the label in the right margin.
    const QFontMetrics fm(m_capacityLabel->font());
    const QRect text = fm.boundingRect(QRect(), Qt::AlignLeft, m_capacityLabel->text());
    plot()->axisRect()->setMinimumMargins(QMargins(0, 0, hasCapacity ? text.width() + 10 : 0, 0));
}

QString MemoryView::partName(Part part)
{
    switch (part) {
    case Parameters:
        return tr("Parameters");
    case Gradients:
        return tr("Gradients");
    case OptimizerStates:
        return tr("Optimizer states");
    case Activations:
        return tr("Activations");
    case Buffers:
        return tr("Comm buffers");
    case Overhead:
        return tr("Runtime overhead");
    case PartCount:
        break;
    }
    return {};
}

MemoryView::MemoryView(QWidget* parent) : ChartView(parent)
{
    setAccessibleName(tr("Memory per GPU by pipeline stage"));
    setToolTip(tr("Memory each GPU of a pipeline stage holds; hover a segment for exact bytes"));
    QCustomPlot* p = plot();
    setUpTitleAndLegend();
    p->xAxis->setLabel(tr("Pipeline stage"));
    p->yAxis->setLabel(tr("GiB per GPU"));
    auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
    ticker->setTickStep(1);
    ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    p->xAxis->setTicker(ticker);
    p->xAxis->grid()->setVisible(false);

    QCPBars* below = nullptr;
    for (int i = 0; i < PartCount; ++i) {
        auto* bars = new QCPBars(p->xAxis, p->yAxis);
        bars->setName(partName(static_cast<Part>(i)));
        bars->setWidthType(QCPBars::wtPlotCoords);
        bars->setWidth(0.7);
        bars->setStackingGap(0);
        if (below)
            bars->moveAbove(below);
        below = bars;
        m_bars[static_cast<std::size_t>(i)] = bars;
    }
    m_ghost = new QCPBars(p->xAxis, p->yAxis);
    m_ghost->setName(tr("Baseline total"));
    m_ghost->setWidthType(QCPBars::wtPlotCoords);
    m_ghost->setWidth(0.9);
    // Its own layer under the stacks (moveBelow would stack it).
    p->addLayer(QStringLiteral("ghost"), p->layer(QStringLiteral("main")), QCustomPlot::limBelow);
    m_ghost->setLayer(QStringLiteral("ghost"));
    m_ghost->removeFromLegend();
    m_highlight = new QCPItemRect(p);
    m_highlight->setLayer(QStringLiteral("background"));
    m_highlight->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
    m_highlight->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
    m_highlight->setVisible(false);
    m_over = new QCPGraph(p->xAxis, p->yAxis);
    m_over->setName(tr("Over capacity"));
    m_over->setLineStyle(QCPGraph::lsNone);

    m_capacityLine = new QCPItemStraightLine(p);
    // The label sits in the axis rect's right margin, level with the line: inside the rect
    // it would cover the tallest bar or the over-capacity marker.
    m_capacityLabel = new QCPItemText(p);
    m_capacityLabel->setClipToAxisRect(false);
    m_capacityLabel->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    m_capacityLabel->setTextAlignment(Qt::AlignLeft);
    m_capacityLabel->setPadding(QMargins(4, 0, 2, 0));
    m_capacityLabel->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
    m_capacityLabel->position->setTypeY(QCPItemPosition::ptPlotCoords);
    m_capacityLine->setVisible(false);
    m_capacityLabel->setVisible(false);

    connect(p, &QCustomPlot::mouseMove, this, &MemoryView::onMouseMove);
    cacheLegendItems(p->legend);
    applyColors();
}

void MemoryView::applyColors()
{
    const QColor edge = palette().color(QPalette::Base);
    for (int i = 0; i < PartCount; ++i) {
        QColor c = palette::categorical(colorSlot(static_cast<Part>(i)));
        m_bars[static_cast<std::size_t>(i)]->setBrush(c);
        m_bars[static_cast<std::size_t>(i)]->setPen(QPen(edge, 1));
    }
    const QColor warn = palette::warning(palette());
    m_over->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssTriangleInverted, warn, warn, 11));
    m_over->setPen(QPen(warn));
    m_capacityLine->setPen(QPen(palette().color(QPalette::Text), 1.5, Qt::DashLine));
    m_capacityLabel->setColor(palette().color(QPalette::Text));
    QColor ghost = palette().color(QPalette::Text);
    m_ghost->setPen(QPen(ghost, 1.5, Qt::DashLine));
    ghost.setAlpha(35);
    m_ghost->setBrush(ghost);
    QColor hl = palette::categorical(5);
    hl.setAlpha(45);
    m_highlight->setBrush(hl);
    m_highlight->setPen(Qt::NoPen);
}

void MemoryView::setHighlightedStage(int stage)
{
    if (stage == m_highlighted)
        return; // every evaluation passes the Gantt's selection again: nothing to redraw
    m_highlighted = stage;
    m_highlight->setVisible(stage >= 0);
    m_highlight->topLeft->setCoords(stage - 0.5, 0);
    m_highlight->bottomRight->setCoords(stage + 0.5, 1);
    plot()->replot(QCustomPlot::rpQueuedReplot);
}

void MemoryView::setBaseline(const Estimate* baseline)
{
    m_ghost->data()->clear();
    if (baseline) {
        QVector<double> keys, values;
        for (std::size_t s = 0; s < baseline->stages.size(); ++s) {
            keys << double(s);
            values << baseline->stages[s].total() / units::kGiB;
        }
        m_ghost->setData(keys, values, true);
        addToLegend(m_ghost);
    } else {
        m_ghost->removeFromLegend();
    }
    updateRanges();
    plot()->replot(QCustomPlot::rpQueuedReplot);
}

void MemoryView::updateRanges()
{
    // The axes hold the current stages and a pinned baseline's, whichever has more (a
    // baseline of more pipeline stages keeps its ghost bars past the current plan's last).
    const int n = std::max(stageCount(), m_ghost->data()->size());
    double top = m_capacityGiB;
    for (int s = 0; s < stageCount(); ++s) {
        double total = 0;
        for (int part = 0; part < PartCount; ++part)
            total += segmentGiB(static_cast<Part>(part), s);
        top = std::max(top, total);
    }
    for (const QCPBarsData& ghost : *m_ghost->data())
        top = std::max(top, ghost.value);
    // 12 % headroom over the tallest bar or the capacity line, for the capacity label.
    plot()->yAxis->setRange(0, top > 0 ? top * 1.12 : 1);
    plot()->xAxis->setRange(-0.6, std::max(0, n - 1) + 0.6);
    auto ticker = qSharedPointerCast<QCPAxisTickerFixed>(plot()->xAxis->ticker());
    ticker->setTickStep(std::max(1.0, std::ceil(n / 16.0)));
}

double MemoryView::baselineGiB(int stage) const
{
    auto it = m_ghost->data()->findBegin(stage, false);
    return it != m_ghost->data()->constEnd() && it->key == stage ? it->value : 0.0;
}

void MemoryView::clearData()
{
    for (QCPBars* b : m_bars)
        b->data()->clear();
    m_over->data()->clear();
    m_capacityLine->setVisible(false);
    m_capacityLabel->setVisible(false);
    m_estimate = Estimate{};
}

void MemoryView::setEstimate(const Estimate& estimate, const Scenario& scenario)
{
    m_estimate = estimate;
    m_scenario = scenario;
    markValid();
    const int n = static_cast<int>(estimate.stages.size());
    QVector<double> keys(n);
    for (int s = 0; s < n; ++s)
        keys[s] = s;
    QVector<double> overKeys, overValues;
    for (int part = 0; part < PartCount; ++part) {
        QVector<double> values(n);
        for (int s = 0; s < n; ++s)
            values[s] =
                partBytes(estimate.stages[static_cast<std::size_t>(s)], static_cast<Part>(part)) /
                units::kGiB;
        m_bars[static_cast<std::size_t>(part)]->setData(keys, values, true);
    }
    m_capacityGiB = estimate.capacity_bytes / units::kGiB;
    for (int s = 0; s < n; ++s) {
        const double total = estimate.stages[static_cast<std::size_t>(s)].total() / units::kGiB;
        if (estimate.capacity_bytes > 0 && total > m_capacityGiB) {
            overKeys << s;
            overValues << total;
        }
    }
    m_over->setData(overKeys, overValues, true);
    updateRanges();

    const bool hasCapacity = estimate.capacity_bytes > 0;
    m_capacityLine->setVisible(hasCapacity);
    m_capacityLabel->setVisible(hasCapacity);
    if (hasCapacity) {
        m_capacityLine->point1->setCoords(-1, m_capacityGiB);
        m_capacityLine->point2->setCoords(1, m_capacityGiB);
        m_capacityLabel->position->setCoords(1.0, m_capacityGiB);
    }
    setCapacityText();

    // The legend names the parts this plan holds.
    for (int part = 0; part < PartCount; ++part) {
        bool any = false;
        for (const StageMemory& st : estimate.stages)
            any |= partBytes(st, static_cast<Part>(part)) > 0;
        if (any)
            addToLegend(m_bars[static_cast<std::size_t>(part)]);
        else
            m_bars[static_cast<std::size_t>(part)]->removeFromLegend();
    }
    if (overKeys.isEmpty())
        m_over->removeFromLegend();
    else
        addToLegend(m_over);
}

QRectF MemoryView::capacityLabelRect() const
{
    if (!m_capacityLabel->visible())
        return {};
    return QRectF(m_capacityLabel->topLeft->pixelPosition(),
                  m_capacityLabel->bottomRight->pixelPosition());
}

QRectF MemoryView::stageBarRect(int stage) const
{
    if (stage < 0 || stage >= stageCount())
        return {};
    double total = 0;
    for (int part = 0; part < PartCount; ++part)
        total += segmentGiB(static_cast<Part>(part), stage);
    const QCPAxis* x = plot()->xAxis;
    const QCPAxis* y = plot()->yAxis;
    const double half = m_bars[0]->width() / 2;
    return QRectF(QPointF(x->coordToPixel(stage - half), y->coordToPixel(total)),
                  QPointF(x->coordToPixel(stage + half), y->coordToPixel(0)))
        .normalized();
}

void MemoryView::exportingChanged(bool on)
{
    // The stage linked from the Gantt is a screen selection, not part of the figure.
    m_highlight->setVisible(!on && m_highlighted >= 0);
}

int MemoryView::stageCount() const
{
    return m_bars[0]->data()->size();
}

double MemoryView::segmentGiB(Part part, int stage) const
{
    const auto& data = m_bars[static_cast<std::size_t>(part)]->data();
    if (stage < 0 || stage >= data->size())
        return 0;
    return data->at(stage)->value;
}

int MemoryView::overCapacityCount() const
{
    return m_over->data()->size();
}

QString MemoryView::tooltipText(Part part, int stage) const
{
    if (stage < 0 || stage >= static_cast<int>(m_estimate.stages.size()))
        return {};
    const StageMemory& st = m_estimate.stages[static_cast<std::size_t>(stage)];
    const double b = partBytes(st, part);
    return tr("<b>Stage %1 · %2</b><br>%3 (%4)<br><i>%5</i><br>Stage total %6 of %7")
        .arg(stage)
        .arg(partName(part), units::bytes(b), units::exactBytes(b),
             formula(part, m_scenario, st).toHtmlEscaped(), units::bytes(st.total()),
             units::bytes(m_estimate.capacity_bytes));
}

void MemoryView::onMouseMove(QMouseEvent* event)
{
    if (isInvalid() || m_estimate.stages.empty()) {
        QToolTip::hideText();
        return;
    }
    const QPointF pos = event->position();
    const double key = plot()->xAxis->pixelToCoord(pos.x());
    const double value = plot()->yAxis->pixelToCoord(pos.y());
    const int stage = static_cast<int>(std::lround(key));
    if (stage < 0 || stage >= stageCount() || std::abs(key - stage) > 0.35 || value < 0) {
        QToolTip::hideText();
        return;
    }
    double base = 0;
    for (int part = 0; part < PartCount; ++part) {
        const double v = segmentGiB(static_cast<Part>(part), stage);
        if (value >= base && value < base + v) {
            QToolTip::showText(event->globalPosition().toPoint(),
                               tooltipText(static_cast<Part>(part), stage), plot());
            return;
        }
        base += v;
    }
    QToolTip::hideText();
}

} // namespace paralens
