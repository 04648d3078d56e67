// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/ganttview.h"
#include "widgets/ganttplot.h"
#include "widgets/legenditem.h"
#include "widgets/palette.h"
#include "widgets/qt_text.h"
#include "widgets/units.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QToolTip>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace paralens {
namespace {

QString scheduleName(Schedule s)
{
    return qText(toString(s));
}

/// Labels keys in ms as seconds when the step is long: the tick steps stay those of the ms
/// axis (a power of ten apart), only the labels are divided.
class MsTicker : public QCPAxisTicker
{
public:
    double unitSeconds = 1e-3;

protected:
    QString getTickLabel(double tick, const QLocale& locale, QChar format, int precision) override
    {
        if (unitSeconds >= 1.0)
            return QCPAxisTicker::getTickLabel(tick / 1e3, locale, format, precision);
        return QCPAxisTicker::getTickLabel(tick, locale, format, precision);
    }
};

QCPAxisRect* makeRect(QCustomPlot* plot, QCPMarginGroup* group)
{
    auto* rect = new QCPAxisRect(plot, true);
    rect->setMarginGroup(QCP::msLeft | QCP::msRight, group);
    rect->setRangeDrag(Qt::Horizontal);
    rect->setRangeZoom(Qt::Horizontal);
    return rect;
}

} // namespace

GanttView::GanttView(QWidget* parent) : ChartView(parent)
{
    setObjectName(QStringLiteral("GanttView"));
    setToolTip(tr("Pipeline schedule: one row per pipeline stage, time in ms. Wheel zooms, drag "
                  "pans, click selects a stage, Home shows the whole step."));
    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(4, 0, 4, 0);
    m_expandBox = new QCheckBox(tr("One row per &chunk"), this);
    m_expandBox->setToolTip(tr("Give each virtual stage (model chunk) of a GPU its own row"));
    m_laneBox = new QCheckBox(tr("&Memory lane"), this);
    m_laneBox->setChecked(true);
    m_laneBox->setToolTip(tr("Activations the selected stage holds over time"));
    bar->addWidget(m_expandBox);
    bar->addWidget(m_laneBox);
    bar->addStretch(1);
    layoutBox()->insertLayout(0, bar);
    connect(m_expandBox, &QCheckBox::toggled, this, &GanttView::setExpandChunks);
    connect(m_laneBox, &QCheckBox::toggled, this, &GanttView::setMemoryLaneVisible);

    QCustomPlot* p = plot();
    auto* group = new QCPMarginGroup(p);
    m_main = p->axisRect();
    m_main->setMarginGroup(QCP::msLeft | QCP::msRight, group);
    m_main->setRangeDrag(Qt::Horizontal);
    m_main->setRangeZoom(Qt::Horizontal);
    m_baseRect = makeRect(p, group);
    m_laneRect = makeRect(p, group);
    m_title = new QCPTextElement(p, chartTitle(),
                                 QFont(font().family(), font().pointSize() + 1, QFont::Bold));
    setTitleElement(m_title);
    p->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);

    m_gantt = new GanttPlottable(m_main->axis(QCPAxis::atBottom), m_main->axis(QCPAxis::atLeft));
    m_baseGantt =
        new GanttPlottable(m_baseRect->axis(QCPAxis::atBottom), m_baseRect->axis(QCPAxis::atLeft));
    m_baseGantt->setGhost(true);
    m_laneGraph =
        new QCPGraph(m_laneRect->axis(QCPAxis::atBottom), m_laneRect->axis(QCPAxis::atLeft));
    m_laneGraph->setLineStyle(QCPGraph::lsStepLeft);
    // Thousands of steps: antialiased filling costs tens of ms and adds nothing to a step line.
    m_laneGraph->setAntialiased(false);
    m_laneGraph->setAntialiasedFill(false);
    m_laneGraph->setName(tr("Activations in flight"));
    for (QCPAxisRect* r : {m_main, m_baseRect, m_laneRect}) {
        r->axis(QCPAxis::atLeft)->setRangeReversed(r != m_laneRect);
        r->axis(QCPAxis::atBottom)->setTicker(QSharedPointer<MsTicker>::create());
    }
    m_laneRect->axis(QCPAxis::atLeft)->setLabel(tr("in flight"));
    m_laneRect->axis(QCPAxis::atLeft)->ticker()->setTickCount(3);

    // Legend: the op kinds as empty bars, in one row under the chart.
    m_legend = p->legend;
    m_main->insetLayout()->take(m_legend);
    m_legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    m_legend->setWrap(0);
    m_legend->setVisible(true);
    m_legend->setMargins(QMargins(6, 2, 6, 2));
    m_gantt->removeFromLegend();
    m_baseGantt->removeFromLegend();
    m_laneGraph->removeFromLegend();
    const std::pair<QString, QColor> kinds[] = {
        {tr("F forward"), GanttPlottable::kindColor(OpKind::F)},
        {tr("B backward"), GanttPlottable::kindColor(OpKind::B)},
        {tr("W weight gradient"), GanttPlottable::kindColor(OpKind::W)},
        {tr("p2p / DP communication"), GanttPlottable::commColor()},
        {tr("later chunks darker"), GanttPlottable::kindColor(OpKind::F).darker(145)}};
    for (const auto& [name, color] : kinds) {
        auto* swatch = new QCPBars(m_main->axis(QCPAxis::atBottom), m_main->axis(QCPAxis::atLeft));
        swatch->setName(name);
        swatch->setBrush(color);
        swatch->setPen(Qt::NoPen);
        m_swatches.push_back(swatch);
    }
    cacheLegendItems(m_legend);

    // Cursor (workshop animation).
    m_cursor = new QCPItemStraightLine(p);
    m_cursor->setClipAxisRect(m_main);
    m_cursor->point1->setAxes(m_main->axis(QCPAxis::atBottom), m_main->axis(QCPAxis::atLeft));
    m_cursor->point2->setAxes(m_main->axis(QCPAxis::atBottom), m_main->axis(QCPAxis::atLeft));
    m_laneCursor = new QCPItemStraightLine(p);
    m_laneCursor->setClipAxisRect(m_laneRect);
    m_laneCursor->point1->setAxes(m_laneRect->axis(QCPAxis::atBottom),
                                  m_laneRect->axis(QCPAxis::atLeft));
    m_laneCursor->point2->setAxes(m_laneRect->axis(QCPAxis::atBottom),
                                  m_laneRect->axis(QCPAxis::atLeft));
    m_cursorLabel = new QCPItemText(p);
    m_cursorLabel->setClipToAxisRect(false);
    m_cursorLabel->setClipAxisRect(m_main);
    m_cursorLabel->position->setAxes(m_main->axis(QCPAxis::atBottom),
                                     m_main->axis(QCPAxis::atLeft));
    m_cursorLabel->position->setAxisRect(m_main);
    m_cursorLabel->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    m_cursorLabel->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
    for (QCPAbstractItem* item :
         std::initializer_list<QCPAbstractItem*>{m_cursor, m_laneCursor, m_cursorLabel})
        item->setVisible(false);

    // Every time axis follows the main one.
    QCPAxis* mainX = m_main->axis(QCPAxis::atBottom);
    for (QCPAxisRect* r : {m_baseRect, m_laneRect}) {
        QCPAxis* x = r->axis(QCPAxis::atBottom);
        connect(mainX, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), x,
                qOverload<const QCPRange&>(&QCPAxis::setRange));
        connect(x, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), mainX,
                qOverload<const QCPRange&>(&QCPAxis::setRange));
    }
    connect(p, &QCustomPlot::mouseWheel, this, [this] { m_autoFit = false; });
    // The rows' heights are known only once the replot has laid them out (a baseline lane
    // just added, a dock resized): labels thinned for other heights are rebuilt, and the
    // axes' ticks set up again for this paint.
    connect(p, &QCustomPlot::afterLayout, this, [this] {
        const bool lane = m_laneRect->visible() && fitLaneLabel();
        if (!rowTicksStale()) {
            if (lane)
                plot()->replot(QCustomPlot::rpQueuedReplot); // the margin for the new label
            return;
        }
        updateRowTicks();
        m_main->update(QCPLayoutElement::upPreparation);
        if (m_baseline)
            m_baseRect->update(QCPLayoutElement::upPreparation);
        plot()->replot(QCustomPlot::rpQueuedReplot); // margins for the new labels
    });
    p->installEventFilter(this);
    p->setMouseTracking(true);
    setMinimumHeight(260);
    rebuildLayout();
    applyColors();
}

GanttView::~GanttView() = default;

void GanttView::rebuildLayout()
{
    QCustomPlot* p = plot();
    QCPLayoutGrid* grid = p->plotLayout();
    // Only elements the grid holds: taking any other makes QCustomPlot complain on stderr.
    for (QCPLayoutElement* e : std::initializer_list<QCPLayoutElement*>{m_title, m_baseRect, m_main,
                                                                        m_laneRect, m_legend})
        if (e->layout() == grid)
            grid->take(e);
    grid->simplify();
    int row = 0;
    grid->addElement(row++, 0, m_title);
    const bool base = m_baseline != nullptr;
    if (base)
        grid->addElement(row++, 0, m_baseRect);
    grid->addElement(row++, 0, m_main);
    const bool lane = m_laneVisible && m_timeline && m_timeline->simulated;
    if (lane)
        grid->addElement(row++, 0, m_laneRect);
    grid->addElement(row++, 0, m_legend);
    // The chart's font reaches only the rects in the layout (ChartView::applyFonts): a lane
    // taken out then put back takes the current one's, or its labels stand larger.
    for (QCPAxisRect* r : {m_baseRect, m_laneRect})
        for (QCPAxis::AxisType t : {QCPAxis::atLeft, QCPAxis::atBottom}) {
            r->axis(t)->setTickLabelFont(m_main->axis(t)->tickLabelFont());
            r->axis(t)->setLabelFont(m_main->axis(t)->labelFont());
        }
    QList<double> stretch{0.001};
    if (base)
        stretch << 1;
    stretch << 1;
    if (lane)
        stretch << 0.3;
    stretch << 0.001;
    grid->setRowStretchFactors(stretch);
    m_baseGantt->setVisible(base);
    m_baseRect->setVisible(base); // out of the layout: its axes must not draw
    m_laneRect->setVisible(lane);
    m_laneGraph->setVisible(lane);
    m_laneCursor->setVisible(lane && m_cursorSeconds >= 0);
    m_main->axis(QCPAxis::atLeft)->setLabel(base ? tr("current") : QString());
    // One "time (ms)" label under the lowest time axis.
    const QString timeLabel = tr("time (%1)").arg(units::timeAxisUnitName(m_unitSeconds));
    m_laneRect->axis(QCPAxis::atBottom)->setLabel(timeLabel);
    m_main->axis(QCPAxis::atBottom)->setLabel(lane ? QString() : timeLabel);
    m_baseRect->axis(QCPAxis::atBottom)->setLabel(QString());
    // Tick labels only on the lowest time axis: the rows get the height.
    m_baseRect->axis(QCPAxis::atBottom)->setTickLabels(false);
    m_main->axis(QCPAxis::atBottom)->setTickLabels(!lane);
    setMinimumHeight(base ? 380 : 260);
    m_baseRect->axis(QCPAxis::atLeft)
        ->setLabel(m_baseLabel.isEmpty() ? tr("baseline") : m_baseLabel);
    palette::applyToPlot(p, palette());
}

std::vector<int> GanttView::labelledRows(int rows, double rowPx, int linePx)
{
    std::vector<int> out;
    if (rows <= 0)
        return out;
    // Rows apart two labels must be so that their line boxes (centred on the rows) do not
    // overlap, and at most ~16 labels; rounded up to a power of two (pipeline sizes mostly are
    // one, so the labels fall on stages 0, 2, 4 … or 0, 4, 8 …).
    const int need = int(std::ceil(double(linePx) / std::max(rowPx, 1e-3) - 1e-9));
    int every = 1;
    while (every < std::max({1, rows / 16, need}))
        every *= 2;
    for (int r = 0; r < rows; r += every)
        out.push_back(r);
    // The last row keeps its label: it takes the place of the one before it where they would
    // overlap, unless that one is row 0 (a lane too short for two labels labels row 0 only).
    const int last = rows - 1;
    if (out.back() != last) {
        if (last - out.back() < need && out.back() != 0)
            out.back() = last;
        else if (last - out.back() >= need)
            out.push_back(last);
    }
    return out;
}

std::vector<int> GanttView::labelledRowsOf(QCPAxisRect* rect, int rows) const
{
    // For the rect's height as laid out last.
    const int line = QFontMetrics(rect->axis(QCPAxis::atLeft)->tickLabelFont()).height();
    const double rowPx = rect->height() > 0 ? double(rect->height()) / std::max(rows, 1) : line;
    return labelledRows(rows, rowPx, line);
}

void GanttView::setRows(QCPAxisRect* rect, GanttPlottable* g)
{
    const int rows = g->rowCount();
    rect->axis(QCPAxis::atLeft)->setRange(-0.5, std::max(rows, 1) - 0.5);
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    // No closer than a line of text on screen: a short chart of many rows labels every few
    // (the baseline lane of a deeper pipeline above all), the first and last row always.
    std::vector<int>& labelled = rect == m_main ? m_mainLabelled : m_baseLabelled;
    labelled = labelledRowsOf(rect, rows);
    const bool cursor = m_cursorSeconds >= 0 && g == m_gantt;
    for (int r : labelled) {
        QString label = g->rowChunk(r) < 0
                            ? tr("stage %1").arg(g->rowDevice(r))
                            : tr("stage %1 · c%2").arg(g->rowDevice(r)).arg(g->rowChunk(r));
        if (cursor && g->rowChunk(r) <= 0)
            label += tr(" · %1 held").arg(inflightAt(g->rowDevice(r), m_cursorSeconds));
        ticker->addTick(r, label);
    }
    rect->axis(QCPAxis::atLeft)->setTicker(ticker);
    rect->axis(QCPAxis::atLeft)->grid()->setVisible(false);
}

bool GanttView::rowTicksStale() const
{
    if (m_gantt->rowCount() > 0 && labelledRowsOf(m_main, m_gantt->rowCount()) != m_mainLabelled)
        return true;
    return m_baseline && m_baseGantt->rowCount() > 0 &&
           labelledRowsOf(m_baseRect, m_baseGantt->rowCount()) != m_baseLabelled;
}

void GanttView::updateRowTicks()
{
    setRows(m_main, m_gantt);
    if (m_baseline)
        setRows(m_baseRect, m_baseGantt);
}

void GanttView::setTimeline(std::shared_ptr<const PipelineTimeline> timeline)
{
    m_timeline = std::move(timeline);
    if (!m_timeline || !m_timeline->simulated) {
        m_gantt->setTimeline(nullptr, m_expand);
        setInvalid(m_timeline ? tr("The schedule has more ops than the simulator runs; the step "
                                   "time uses the closed form.")
                              : tr("No pipeline schedule"));
        return;
    }
    markValid();
    m_gantt->setTimeline(m_timeline, m_expand);
    // Legend: W only where the backward is split, the chunk shade only with chunks.
    const bool split = m_timeline->schedule.split_backward;
    const bool chunks = m_timeline->schedule.chunks > 1;
    QList<QCPAbstractPlottable*> wanted, shown;
    for (int i = 0; i < static_cast<int>(m_swatches.size()); ++i)
        if ((i != 2 || split) && (i != 4 || chunks))
            wanted << m_swatches[i];
    for (QCPAbstractLegendItem* item : legendItems(m_legend))
        if (auto* entry = qobject_cast<QCPPlottableLegendItem*>(item))
            shown << entry->plottable();
    if (shown != wanted) { // the same entries stay (and keep their measured text)
        for (QCPBars* sw : m_swatches)
            sw->removeFromLegend(m_legend);
        for (QCPAbstractPlottable* sw : std::as_const(wanted))
            addToLegend(sw, m_legend);
    }
    fitTimeRange();
    updateTimeUnit();
    m_selectedStage = std::clamp(m_selectedStage, 0, m_timeline->schedule.stages - 1);
    m_gantt->setSelectedRow(m_expand ? m_selectedStage * m_timeline->schedule.chunks
                                     : m_selectedStage);
    rebuildLayout();
    updateRowTicks();
    updateLane();
    updateCursor();
    updateTitle();
}

void GanttView::fitTimeRange()
{
    const double span = m_gantt->spanMs();
    QCPAxis* x = m_main->axis(QCPAxis::atBottom);
    const bool jumped = m_shownSpanMs > 0 &&
                        (span > m_shownSpanMs * kRefitRatio || span * kRefitRatio < m_shownSpanMs);
    const bool outside = x->range().lower >= span || x->range().upper <= 0;
    if (jumped || outside)
        m_autoFit = true; // the user's range belonged to another step
    m_shownSpanMs = span;
    if (m_autoFit || x->range().size() <= 0)
        x->setRange(0, span * 1.01);
    else if (x->range().upper < span && x->range().lower <= 0)
        x->setRange(x->range().lower, span * 1.01); // a longer schedule stays in view
}

void GanttView::updateTimeUnit()
{
    const double span = std::max(m_gantt->spanMs(), m_baseline ? m_baseGantt->spanMs() : 0.0);
    m_unitSeconds = units::timeAxisUnit(span * 1e-3);
    for (QCPAxisRect* r : {m_main, m_baseRect, m_laneRect})
        if (auto t = qSharedPointerDynamicCast<MsTicker>(r->axis(QCPAxis::atBottom)->ticker()))
            t->unitSeconds = m_unitSeconds;
}

void GanttView::adaptLayoutTo(const QSize& size)
{
    // Row labels thinned to the rows' height as laid out last (afterLayout catches a layout
    // that changed since).
    if (m_gantt && m_main && rowTicksStale())
        updateRowTicks();
    // The legend row under the chart breaks into more rows where its entries are wider than
    // the plot, instead of running under the frame: the most columns whose widest entries
    // fit side by side.
    const int room = size.width() - m_legend->margins().left() - m_legend->margins().right() - 8;
    const QList<QCPAbstractLegendItem*> items = legendItems(m_legend);
    const int n = int(items.size());
    int columns = std::max(1, n);
    for (; columns > 1; --columns) {
        std::vector<int> widths(std::size_t(columns), 0);
        for (int i = 0; i < n; ++i) {
            int& w = widths[std::size_t(i % columns)];
            w = std::max(w,
                         static_cast<QCPLayoutElement*>(items[i])->minimumOuterSizeHint().width());
        }
        int total = m_legend->columnSpacing() * (columns - 1);
        for (int w : widths)
            total += w;
        if (total <= room)
            break;
    }
    const int wrap = columns < n ? columns : 0;
    if (wrap != m_legend->wrap()) {
        m_legend->setWrap(wrap);
        m_legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);
    }
}

void GanttView::exportingChanged(bool on)
{
    // The selected stage's band is a cursor for the screen, not part of the schedule.
    const int row =
        m_timeline && m_timeline->simulated
            ? (m_expand ? m_selectedStage * m_timeline->schedule.chunks : m_selectedStage)
            : -1;
    m_gantt->setSelectedRow(on ? -1 : row);
}

void GanttView::updateTitle()
{
    if (!m_timeline || !m_timeline->simulated) {
        setTitleText(chartTitle());
        return;
    }
    const PipelineSchedule& s = m_timeline->schedule;
    QString text = tr("%1 — %2, p = %3, m = %4")
                       .arg(chartTitle(), scheduleName(s.kind))
                       .arg(s.stages)
                       .arg(s.microbatches);
    if (s.chunks > 1)
        text += tr(", v = %1").arg(s.chunks);
    text += tr(" · bubble %1 of the step").arg(units::percent(m_timeline->result.bubble_fraction));
    if (m_baseline && m_baseline->simulated)
        text += tr(" (baseline %1, %2)")
                    .arg(scheduleName(m_baseline->schedule.kind),
                         units::percent(m_baseline->result.bubble_fraction));
    setTitleText(text);
}

void GanttView::setBaseline(std::shared_ptr<const PipelineTimeline> timeline, const QString& label)
{
    m_baseline = timeline && timeline->simulated ? std::move(timeline) : nullptr;
    m_baseLabel = label;
    m_baseGantt->setTimeline(m_baseline, m_expand);
    if (m_baseline) {
        QCPAxis* x = m_main->axis(QCPAxis::atBottom);
        const double span = std::max(m_gantt->spanMs(), m_baseGantt->spanMs());
        if (m_autoFit)
            x->setRange(0, span * 1.01);
    }
    updateTimeUnit();
    rebuildLayout();
    updateRowTicks();
    updateTitle();
    plot()->replot(QCustomPlot::rpQueuedReplot);
}

bool GanttView::hasBaseline() const
{
    return m_baseline != nullptr;
}

void GanttView::setExpandChunks(bool expand)
{
    if (expand == m_expand)
        return;
    m_expand = expand;
    m_expandBox->setChecked(expand);
    m_gantt->setTimeline(m_timeline && m_timeline->simulated ? m_timeline : nullptr, m_expand);
    m_baseGantt->setTimeline(m_baseline, m_expand);
    if (m_timeline && m_timeline->simulated)
        m_gantt->setSelectedRow(m_expand ? m_selectedStage * m_timeline->schedule.chunks
                                         : m_selectedStage);
    updateRowTicks();
    plot()->replot(QCustomPlot::rpQueuedReplot);
}

void GanttView::setMemoryLaneVisible(bool visible)
{
    m_laneVisible = visible;
    m_laneBox->setChecked(visible);
    rebuildLayout();
    updateLane();
    plot()->replot(QCustomPlot::rpQueuedReplot);
}

void GanttView::updateLane()
{
    m_laneGraph->data()->clear();
    if (!m_timeline || !m_timeline->simulated)
        return;
    const auto& lanes = m_timeline->result.memory_timeline;
    if (m_selectedStage >= static_cast<int>(lanes.size()))
        return;
    const auto& points = lanes[m_selectedStage];
    QVector<double> keys, values;
    keys.reserve(static_cast<int>(points.size()) + 2);
    values.reserve(keys.capacity());
    keys << 0;
    values << 0;
    for (const MemoryPoint& pt : points) {
        // Points at one instant (a B frees as the next F takes): the last one holds.
        if (!keys.isEmpty() && pt.time_seconds * 1e3 - keys.back() <= 1e-9 * m_gantt->spanMs()) {
            values.back() = pt.inflight;
            continue;
        }
        keys << pt.time_seconds * 1e3;
        values << pt.inflight;
    }
    keys << m_gantt->spanMs();
    values << (points.empty() ? 0 : points.back().inflight);
    m_laneGraph->setData(keys, values, true);
    const int peak = m_timeline->result.stages.at(m_selectedStage).peak_inflight_microbatches;
    m_laneRect->axis(QCPAxis::atLeft)->setRange(0, std::max(1, peak) * 1.15);
    fitLaneLabel();
}

QString GanttView::laneAxisLabel(int stage, int heightPx, const QFontMetrics& fm)
{
    // The label stands rotated beside the lane: its widest line must fit the lane's height,
    // or it runs into the chart above. Shorter forms for a short lane.
    const QStringList forms{tr("stage %1\nin flight").arg(stage), tr("s%1\nheld").arg(stage),
                            tr("s%1").arg(stage)};
    for (const QString& form : forms) {
        int widest = 0;
        for (const QString& line : form.split(QLatin1Char('\n')))
            widest = std::max(widest, fm.horizontalAdvance(line));
        if (widest <= heightPx)
            return form;
    }
    return forms.back();
}

bool GanttView::fitLaneLabel()
{
    QCPAxis* y = m_laneRect->axis(QCPAxis::atLeft);
    // Before the first layout the lane has no height: the full label until then.
    const int height = m_laneRect->height() > 0 ? m_laneRect->height() : 1 << 20;
    const QString label = laneAxisLabel(m_selectedStage, height, QFontMetrics(y->labelFont()));
    if (label == y->label())
        return false;
    y->setLabel(label);
    return true;
}

void GanttView::setSelectedStage(int stage)
{
    if (!m_timeline || !m_timeline->simulated)
        return;
    stage = std::clamp(stage, 0, m_timeline->schedule.stages - 1);
    const bool changed = stage != m_selectedStage;
    m_selectedStage = stage;
    m_gantt->setSelectedRow(m_expand ? stage * m_timeline->schedule.chunks : stage);
    updateLane();
    updateCursor();
    plot()->replot(QCustomPlot::rpQueuedReplot);
    if (changed)
        emit stageSelected(stage);
}

int GanttView::inflightAt(int stage, double seconds) const
{
    if (!m_timeline || !m_timeline->simulated)
        return 0;
    const auto& lanes = m_timeline->result.memory_timeline;
    if (stage < 0 || stage >= static_cast<int>(lanes.size()))
        return 0;
    const auto& pts = lanes[stage];
    auto it = std::upper_bound(pts.begin(), pts.end(), seconds,
                               [](double t, const MemoryPoint& p) { return t < p.time_seconds; });
    return it == pts.begin() ? 0 : std::prev(it)->inflight;
}

double GanttView::nextEventAfter(double seconds) const
{
    if (!m_timeline || !m_timeline->simulated)
        return 0;
    double next = m_timeline->result.pipeline_seconds;
    const double eps = 1e-12;
    for (int r = 0; r < m_gantt->rowCount(); ++r) {
        const auto& ops = m_gantt->rowOps(r);
        const auto& timing = m_timeline->result.timing;
        auto it = std::upper_bound(ops.begin(), ops.end(), seconds + eps,
                                   [&](double t, std::int32_t i) { return t < timing[i].start; });
        if (it != ops.end())
            next = std::min(next, timing[*it].start);
    }
    return next;
}

void GanttView::setCursorSeconds(double seconds)
{
    m_cursorSeconds = seconds;
    updateCursor();
    updateRowTicks();
    plot()->replot(QCustomPlot::rpQueuedReplot);
}

void GanttView::updateCursor()
{
    const bool on = m_cursorSeconds >= 0 && m_timeline && m_timeline->simulated;
    m_cursor->setVisible(on);
    m_cursorLabel->setVisible(on);
    m_laneCursor->setVisible(on && m_laneGraph->visible());
    if (!on)
        return;
    const double ms = m_cursorSeconds * 1e3;
    m_cursor->point1->setCoords(ms, 0);
    m_cursor->point2->setCoords(ms, 1);
    m_laneCursor->point1->setCoords(ms, 0);
    m_laneCursor->point2->setCoords(ms, 1);
    m_cursorLabel->position->setCoords(ms, 0);
    m_cursorLabel->setText(tr(" t = %1 · stage %2 holds %3")
                               .arg(units::seconds(m_cursorSeconds))
                               .arg(m_selectedStage)
                               .arg(inflightAt(m_selectedStage, m_cursorSeconds)));
}

void GanttView::zoomBy(double factor)
{
    m_autoFit = false;
    QCPAxis* x = m_main->axis(QCPAxis::atBottom);
    x->scaleRange(1.0 / factor, x->range().center());
    plot()->replot(QCustomPlot::rpQueuedReplot);
}

void GanttView::panBy(double fraction)
{
    m_autoFit = false;
    QCPAxis* x = m_main->axis(QCPAxis::atBottom);
    x->moveRange(x->range().size() * fraction);
    plot()->replot(QCustomPlot::rpQueuedReplot);
}

void GanttView::resetZoom()
{
    m_autoFit = true;
    const double span = std::max(m_gantt->spanMs(), m_baseline ? m_baseGantt->spanMs() : 0.0);
    m_main->axis(QCPAxis::atBottom)->setRange(0, std::max(span, 1e-6) * 1.01);
    plot()->replot(QCustomPlot::rpQueuedReplot);
}

double GanttView::visibleStartMs() const
{
    return m_main->axis(QCPAxis::atBottom)->range().lower;
}

double GanttView::visibleEndMs() const
{
    return m_main->axis(QCPAxis::atBottom)->range().upper;
}

void GanttView::setPresentation(bool on)
{
    m_presentation = on;
    // The window's font already grows in presentation; the op labels grow with it.
    const double scale = on ? 1.6 : 1.0;
    m_gantt->setFontScale(scale);
    m_baseGantt->setFontScale(scale);
    QFont f = font();
    QFont title = f;
    title.setBold(true);
    title.setPointSizeF(f.pointSizeF() + 1); // as built: the title returns to its size
    m_title->setFont(title);
    for (QCPAxisRect* r : {m_main, m_baseRect, m_laneRect})
        for (QCPAxis* a : r->axes()) {
            a->setTickLabelFont(f);
            a->setLabelFont(f);
        }
    m_legend->setFont(f);
    m_cursorLabel->setFont(title);
    applyColors();
    plot()->replot(QCustomPlot::rpQueuedReplot);
}

QString GanttView::tooltipAt(int row, double ms) const
{
    const auto op = m_gantt->opAt(row, ms);
    if (!op)
        return {};
    const PipelineSchedule& s = m_timeline->schedule;
    const PipelineOp& o = s.ops[*op];
    const OpTiming& t = m_timeline->result.timing[*op];
    static const char* kNames[] = {QT_TR_NOOP("forward"), QT_TR_NOOP("backward"),
                                   QT_TR_NOOP("weight gradient")};
    const bool split = s.split_backward;
    const QString kind = o.kind == OpKind::B && !split ? tr("backward (input + weight)")
                                                       : tr(kNames[static_cast<int>(o.kind)]);
    return tr("%1 — %2\nmicro-batch %3 of %4\nstage %5, chunk %6 (model stage %7)\nstart %8, "
              "duration %9")
        .arg(GanttPlottable::opLabel(o), kind)
        .arg(o.microbatch + 1)
        .arg(s.microbatches)
        .arg(o.device)
        .arg(o.chunk)
        .arg(s.modelStage(o.device, o.chunk))
        .arg(units::seconds(t.start), units::seconds(t.end - t.start));
}

int GanttView::rowAtPixel(const QPoint& pos, QCPAxisRect** rect) const
{
    for (QCPAxisRect* r : {m_main, m_baseRect}) {
        if (!r->layout() || !r->rect().contains(pos))
            continue;
        if (rect)
            *rect = r;
        return static_cast<int>(std::lround(r->axis(QCPAxis::atLeft)->pixelToCoord(pos.y())));
    }
    return -1;
}

bool GanttView::eventFilter(QObject* watched, QEvent* event)
{
    if (watched != plot())
        return ChartView::eventFilter(watched, event);
    switch (event->type()) {
    case QEvent::KeyPress: {
        auto* key = static_cast<QKeyEvent*>(event);
        switch (key->key()) {
        case Qt::Key_Plus:
        case Qt::Key_Equal:
            zoomBy(1.5);
            return true;
        case Qt::Key_Minus:
            zoomBy(1 / 1.5);
            return true;
        case Qt::Key_Left:
            panBy(-0.2);
            return true;
        case Qt::Key_Right:
            panBy(0.2);
            return true;
        case Qt::Key_Home:
            resetZoom();
            return true;
        case Qt::Key_Up:
            setSelectedStage(m_selectedStage - 1);
            return true;
        case Qt::Key_Down:
            setSelectedStage(m_selectedStage + 1);
            return true;
        default:
            break;
        }
        break;
    }
    case QEvent::MouseButtonPress:
        m_pressPos = static_cast<QMouseEvent*>(event)->pos();
        break;
    case QEvent::MouseButtonRelease: {
        auto* me = static_cast<QMouseEvent*>(event);
        if ((me->pos() - m_pressPos).manhattanLength() > 3) {
            m_autoFit = false; // a drag panned the view
            break;
        }
        QCPAxisRect* rect = nullptr;
        const int row = rowAtPixel(me->pos(), &rect);
        GanttPlottable* g = rect == m_baseRect ? m_baseGantt : m_gantt;
        if (row >= 0 && row < g->rowCount() && rect == m_main)
            setSelectedStage(g->rowDevice(row));
        break;
    }
    case QEvent::MouseMove: {
        auto* me = static_cast<QMouseEvent*>(event);
        if (me->buttons() != Qt::NoButton)
            break;
        QCPAxisRect* rect = nullptr;
        const int row = rowAtPixel(me->pos(), &rect);
        QString text;
        if (rect == m_main && row >= 0)
            text = tooltipAt(row, m_main->axis(QCPAxis::atBottom)->pixelToCoord(me->pos().x()));
        if (text.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(me->globalPosition().toPoint(), text, plot());
        break;
    }
    default:
        break;
    }
    return ChartView::eventFilter(watched, event);
}

void GanttView::clearData()
{
    m_timeline.reset();
    m_gantt->setTimeline(nullptr, m_expand);
    m_laneGraph->data()->clear();
    m_cursor->setVisible(false);
    m_cursorLabel->setVisible(false);
    updateTitle(); // no schedule, so no title naming the last one
}

void GanttView::applyColors()
{
    const QPalette pal = palette();
    QColor lane = palette::categorical(5);
    // Width 1: a wider pen goes through the path stroker, a visible share of a slider tick.
    m_laneGraph->setPen(QPen(lane, 1));
    lane.setAlpha(70);
    m_laneGraph->setBrush(lane);
    QPen cursorPen(palette::warning(pal), m_presentation ? 3.0 : 1.5);
    m_cursor->setPen(cursorPen);
    m_laneCursor->setPen(cursorPen);
    m_cursorLabel->setColor(pal.color(QPalette::Text));
    m_title->setTextColor(pal.color(QPalette::Text));
}

} // namespace paralens
