// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/planmapview.h"
#include "widgets/palette.h"
#include "widgets/qt_text.h"
#include "widgets/units.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QToolTip>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>

namespace paralens {
namespace {

int indexOf(const std::vector<int>& axis, int v)
{
    for (std::size_t i = 0; i < axis.size(); ++i)
        if (axis[i] == v)
            return int(i);
    return -1;
}

/// Viridis (Smith & van der Walt 2015, matplotlib's default map): perceptually uniform and
/// colour-blind safe; five of its published stops, interpolated in RGB.
QCPColorGradient viridis()
{
    QCPColorGradient g;
    g.clearColorStops();
    g.setColorStopAt(0.0, QColor(0x44, 0x01, 0x54));
    g.setColorStopAt(0.25, QColor(0x3b, 0x52, 0x8b));
    g.setColorStopAt(0.5, QColor(0x21, 0x91, 0x8c));
    g.setColorStopAt(0.75, QColor(0x5e, 0xc9, 0x62));
    g.setColorStopAt(1.0, QColor(0xfd, 0xe7, 0x25));
    g.setColorInterpolation(QCPColorGradient::ciRGB);
    return g;
}

QSharedPointer<QCPAxisTickerText> tickerFor(const std::vector<int>& axis)
{
    QSharedPointer<QCPAxisTickerText> t(new QCPAxisTickerText);
    for (std::size_t i = 0; i < axis.size(); ++i)
        t->addTick(double(i), QString::number(axis[i]));
    return t;
}

QString planLine(const SearchPlan& p)
{
    const ParallelPlan& pl = p.parallel;
    QString s = PlanMapView::tr("DP %1 · CP %2").arg(pl.dp).arg(pl.cp);
    if (pl.ep > 1)
        s += PlanMapView::tr(" · EP %1").arg(pl.ep);
    if (pl.pp > 1)
        s += QStringLiteral(" · ") + qText(toString(pl.schedule)) +
             (pl.virtual_stages > 1 ? PlanMapView::tr(" v %1").arg(pl.virtual_stages) : QString());
    s += PlanMapView::tr(" · mb %1 · ZeRO %2 · recompute %3")
             .arg(p.training.micro_batch)
             .arg(pl.zero)
             .arg(qText(toString(p.training.recompute)));
    if (pl.offload_optimizer)
        s += PlanMapView::tr(" · offload");
    return s;
}

} // namespace

PlanMapView::PlanMapView(QWidget* parent)
    : ChartView(parent), m_job(this, [this](Outcome out) { onFinished(out); })
{
    setAccessibleName(tr("Plan map"));
    m_status = new QLabel(this);
    m_status->setWordWrap(true);
    m_status->setTextFormat(Qt::PlainText);
    layoutBox()->setContentsMargins(6, 6, 6, 6);
    layoutBox()->insertWidget(0, m_status);
    // The third axis: "Fixed: [micro-batch] [2]".
    auto* row = new QHBoxLayout;
    row->setContentsMargins(0, 0, 0, 0);
    auto* fixedLabel = new QLabel(tr("&Fixed:"), this);
    m_axisBox = new QComboBox(this);
    m_axisBox->setAccessibleName(tr("Plan map fixed axis"));
    m_axisBox->setToolTip(tr("A setting held at one value in every cell: the map then shows "
                             "the best TP × PP plan at that value"));
    for (PlanMapAxis a : kPlanMapAxes)
        m_axisBox->addItem(a == PlanMapAxis::None ? tr("nothing (best of all)")
                                                  : qText(planMapAxisName(a)),
                           int(a));
    m_axisBox->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    fixedLabel->setBuddy(m_axisBox);
    m_valueBox = new QComboBox(this);
    m_valueBox->setAccessibleName(tr("Plan map fixed value"));
    m_valueBox->setToolTip(tr("The value the fixed setting is held at"));
    m_valueBox->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_valueBox->setEnabled(false);
    row->addWidget(fixedLabel);
    row->addWidget(m_axisBox);
    row->addWidget(m_valueBox);
    row->addStretch(1);
    layoutBox()->insertLayout(1, row);
    connect(m_axisBox, &QComboBox::activated, this, &PlanMapView::onAxisChosen);
    connect(m_valueBox, &QComboBox::activated, this, &PlanMapView::onValueChosen);

    QCustomPlot* p = plot();
    p->setMinimumSize(220, 200);
    p->plotLayout()->insertRow(0);
    QFont titleFont = font();
    titleFont.setBold(true);
    titleFont.setPointSizeF(titleFont.pointSizeF() + 1);
    m_title = new QCPTextElement(p, chartTitle(), titleFont);
    p->plotLayout()->addElement(0, 0, m_title);
    setTitleElement(m_title); // wrapped to the width (ChartView::fitTitle)
    p->setAccessibleName(chartTitle());
    p->xAxis->setLabel(tr("TP (tensor parallel)"));
    p->yAxis->setLabel(tr("PP (pipeline stages)"));
    for (QCPAxis* axis : {p->xAxis, p->yAxis}) {
        axis->grid()->setVisible(false);
        axis->setSubTicks(false);
    }
    m_colorMap = new QCPColorMap(p->xAxis, p->yAxis);
    m_colorMap->setInterpolate(false);
    m_colorMap->setTightBoundary(false);
    m_scale = new QCPColorScale(p);
    m_scale->setType(QCPAxis::atRight);
    m_scale->axis()->setLabel(tr("tokens/s"));
    m_scale->setBarWidth(10);
    p->plotLayout()->addElement(1, 1, m_scale);
    p->plotLayout()->setColumnStretchFactor(1, 0.001);
    m_colorMap->setColorScale(m_scale);
    auto* group = new QCPMarginGroup(p);
    p->axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, group);
    m_scale->setMarginGroup(QCP::msBottom | QCP::msTop, group);
    m_outline = new QCPItemRect(p);
    m_outline->setVisible(false);
    m_outline->setLayer(QStringLiteral("legend"));
    palette::applyToPlot(p, palette());
    applyColors();
    // Laid out, before drawing: the cells' texts as the new layout has room for them (a
    // resize leaves adaptLayoutTo() only an estimate).
    connect(p, &QCustomPlot::afterLayout, this, [this] {
        if (!isExporting())
            fitCellTexts(plot()->axisRect()->width());
    });
    connect(p, &QCustomPlot::mouseMove, this, &PlanMapView::onMouseMove);
    connect(p, &QCustomPlot::mousePress, this, &PlanMapView::onMousePress);
    showMessage(tr("The plan map appears here."));
}

PlanMapView::~PlanMapView() = default;

QString PlanMapView::chartTitle() const
{
    const PlanMapFixed f = m_map.cells.empty() ? m_fixed : m_map.fixed;
    QString t = tr("Plan map: best tokens/s for each TP × PP");
    if (f.axis != PlanMapAxis::None)
        t += tr(" · %1 %2")
                 .arg(qText(planMapAxisName(f.axis)), qText(planMapAxisValueText(f.axis, f.value)));
    return t;
}

void PlanMapView::fillValues()
{
    const auto axis = PlanMapAxis(m_axisBox->currentData().toInt());
    const QSignalBlocker block(m_valueBox);
    m_valueBox->clear();
    const std::vector<int> values = planMapAxisValues(m_scenario, axis);
    for (int v : values)
        m_valueBox->addItem(qText(planMapAxisValueText(axis, v)), v);
    m_valueBox->setEnabled(!values.empty());
    int at = m_valueBox->findData(m_fixed.value);
    if (m_fixed.axis != axis || at < 0)
        at = m_valueBox->findData(planMapAxisValueOf(m_scenario, axis));
    m_valueBox->setCurrentIndex(values.empty() ? -1 : std::max(0, at));
    m_fixed = {axis, values.empty() ? 0 : m_valueBox->currentData().toInt()};
}

void PlanMapView::setFixed(const PlanMapFixed& fixed)
{
    {
        const QSignalBlocker block(m_axisBox);
        m_axisBox->setCurrentIndex(std::max(0, m_axisBox->findData(int(fixed.axis))));
    }
    m_fixed = fixed;
    fillValues();
    m_stale = true;
    setScenario(m_scenario, isVisible());
}

void PlanMapView::onAxisChosen()
{
    fillValues(); // the new axis at the scenario's own value
    m_stale = true;
    setScenario(m_scenario, true);
}

void PlanMapView::onValueChosen()
{
    m_fixed.value = m_valueBox->currentData().toInt();
    m_stale = true;
    setScenario(m_scenario, true);
}

void PlanMapView::setScenario(const Scenario& s, bool active)
{
    const bool batchChanged = s.training.global_batch != m_scenario.training.global_batch ||
                              s.gpus != m_scenario.gpus ||
                              s.model.layers != m_scenario.model.layers ||
                              s.training.seq_len != m_scenario.training.seq_len;
    m_scenario = s;
    if (batchChanged && m_fixed.axis != PlanMapAxis::None)
        fillValues(); // the values the axis lists depend on the problem
    const bool shown = !m_map.cells.empty() || !m_error.isEmpty();
    const Scenario* against = m_havePending ? &m_pendingFor : (shown ? &m_mapScenario : nullptr);
    const PlanMapFixed againstFixed = m_havePending ? m_pendingFixed : m_map.fixed;
    if (!against || !samePlanMapProblem(s, *against) || againstFixed != m_fixed)
        m_stale = true;
    if (active && m_stale)
        start();
    drawOutline();
    updateStatus();
    // Every edit comes here, the dock open or not; a hidden map is drawn when it is shown
    // (ChartView::showEvent) instead of on every slider tick.
    if (isVisible())
        plot()->replot(QCustomPlot::rpQueuedReplot);
}

void PlanMapView::start()
{
    m_stale = false;
    m_pendingFor = m_scenario;
    m_pendingFixed = m_fixed;
    m_havePending = true;
    PlanMapOptions options;
    options.threads = m_threads;
    options.fixed = m_fixed;
    const Scenario s = m_scenario;
    m_job.start([s, options](const JobTicket& ticket) {
        PlanMapOptions run = options;
        run.cancel = ticket.stop; // set when a newer problem supersedes this one
        Outcome out;
        out.scenario = s;
        try {
            out.map = planMap(s, run);
        } catch (const std::exception& e) { // InputError: a broken problem, named
            out.map = PlanMap{};
            out.error = QString::fromStdString(e.what());
        }
        return out;
    });
}

void PlanMapView::onFinished(const Outcome& out)
{
    m_havePending = false;
    m_map = out.map;
    m_mapScenario = out.scenario;
    m_error = out.error;
    if (!m_error.isEmpty()) {
        setInvalid(m_error);
    } else {
        markValid();
        draw();
    }
    updateStatus();
    emit mapReady();
}

void PlanMapView::clearData()
{
    m_colorMap->data()->clear();
    for (QCPItemText* t : m_labels)
        plot()->removeItem(t);
    m_labels.clear();
    m_outline->setVisible(false);
}

void PlanMapView::applyColors()
{
    if (!m_colorMap)
        return; // a palette change while the base class is being built
    QCPColorGradient g = viridis();
    g.setNanHandling(QCPColorGradient::nhNanColor);
    g.setNanColor(palette().color(QPalette::Mid));
    m_colorMap->setGradient(g);
    m_outline->setPen(QPen(palette().color(QPalette::WindowText), 3));
    m_outline->setBrush(Qt::NoBrush);
    if (!m_map.cells.empty() && !isInvalid())
        draw();
}

void PlanMapView::draw()
{
    clearData();
    QCustomPlot* p = plot();
    const int nx = int(m_map.tp.size()), ny = int(m_map.pp.size());
    if (nx == 0 || ny == 0)
        return;
    p->xAxis->setTicker(tickerFor(m_map.tp));
    p->yAxis->setTicker(tickerFor(m_map.pp));
    p->xAxis->setRange(-0.5, nx - 0.5);
    p->yAxis->setRange(-0.5, ny - 0.5);
    QCPColorMapData* data = m_colorMap->data();
    data->setSize(nx, ny);
    data->setRange(QCPRange(0, std::max(1, nx - 1)), QCPRange(0, std::max(1, ny - 1)));
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (const PlanMapCell& c : m_map.cells)
        if (c.best) {
            lo = std::min(lo, c.best->tokens_per_second);
            hi = std::max(hi, c.best->tokens_per_second);
        }
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const QFont small = cellFont(nx);
    for (const PlanMapCell& c : m_map.cells) {
        const int x = indexOf(m_map.tp, c.tp), y = indexOf(m_map.pp, c.pp);
        data->setCell(x, y, c.best ? c.best->tokens_per_second : nan);
        auto* label = new QCPItemText(p);
        label->position->setCoords(x, y);
        label->setFont(small);
        label->setText(cellText(c.tp, c.pp));
        label->setClipToAxisRect(true);
        // Viridis is dark at the low end: white text there, black on the bright end.
        const double t = c.best && hi > lo ? (c.best->tokens_per_second - lo) / (hi - lo) : 1;
        label->setColor(!c.best ? palette().color(QPalette::WindowText)
                                : (t > 0.55 ? QColor(Qt::black) : QColor(Qt::white)));
        m_labels << label;
    }
    if (hi > 0)
        m_colorMap->setDataRange(QCPRange(lo < hi ? lo : hi * 0.9, hi));
    setTitleText(chartTitle());
    p->setAccessibleName(chartTitle());
    drawOutline();
    p->replot();
}

QFont PlanMapView::cellFont(int columns) const
{
    QFont small = font();
    small.setPointSizeF(small.pointSizeF() * (columns > 6 ? 0.8 : 0.9));
    return small;
}

int PlanMapView::cellLabelWidth() const
{
    const int nx = int(m_map.tp.empty() ? planMapTpAxis(m_scenario).size() : m_map.tp.size());
    const QFontMetrics fm(cellFont(nx));
    if (m_labels.isEmpty()) // three digits and a unit (units::count), starred
        return fm.horizontalAdvance(QStringLiteral("★ 88.8 M")) + 4;
    int widest = 0;
    for (const QCPItemText* label : m_labels)
        widest = std::max(widest, fm.horizontalAdvance(label->text()));
    return widest + 4; // as adaptLayoutTo() asks of a cell
}

bool PlanMapView::drawsAllCellTexts() const
{
    if (m_labels.isEmpty())
        return false;
    for (const QCPItemText* label : m_labels)
        if (!label->visible())
            return false;
    return true;
}

QSize PlanMapView::sizeHint() const
{
    const QSize base = ChartView::sizeHint();
    const int nx = int(m_map.tp.empty() ? planMapTpAxis(m_scenario).size() : m_map.tp.size());
    if (nx == 0)
        return base;
    const int cells = nx * (cellLabelWidth() + 6);
    // Beside the cells: the PP axis and its label, the colour scale with its tick labels and
    // label, the paddings. As laid out last, where the map has been laid out; before that
    // an estimate from the font.
    int beside = 0;
    if (const int rect = plot()->axisRect()->width(); rect > 0 && plot()->width() > rect)
        beside = width() - rect;
    else {
        const QFontMetrics fm(font());
        beside = 3 * fm.height() + fm.horizontalAdvance(QStringLiteral("888")) +
                 fm.horizontalAdvance(QStringLiteral("88888 k")) + 80 +
                 layoutBox()->contentsMargins().left() + layoutBox()->contentsMargins().right();
    }
    return {std::max(base.width(), cells + beside), base.height()};
}

// A narrow map (a dock on a small screen) draws only the numbers that fit their cells; the
// colours and the hover still tell every cell.
void PlanMapView::adaptLayoutTo(const QSize& size)
{
    const int nx = int(m_map.tp.size());
    if (nx == 0 || m_labels.isEmpty())
        return;
    // The cells' width at `size`: the axis rect is laid out after this (in the replot), so its
    // last width is that of the plot's last size; what lies beside it keeps its width.
    const int lastRect = plot()->axisRect()->width();
    const int lastPlot = plot()->plotLayout()->outerRect().width();
    int rectWidth = lastRect > 0 && lastPlot > lastRect ? size.width() - (lastPlot - lastRect)
                                                        : size.width() * 2 / 3;
    if (rectWidth <= 0)
        rectWidth = size.width() * 2 / 3;
    fitCellTexts(rectWidth);
}

void PlanMapView::fitCellTexts(int rectWidth)
{
    const int nx = int(m_map.tp.size());
    if (nx == 0 || m_labels.isEmpty() || rectWidth <= 0)
        return;
    const double cell = double(rectWidth) / nx;
    for (QCPItemText* label : std::as_const(m_labels)) {
        const QFontMetrics fm(label->font());
        label->setVisible(fm.horizontalAdvance(label->text()) + 4 <= cell);
    }
}

void PlanMapView::drawOutline()
{
    const QPoint at = outlined();
    m_outline->setVisible(at != QPoint() && !isInvalid());
    if (at == QPoint())
        return;
    const double x = indexOf(m_map.tp, at.x()), y = indexOf(m_map.pp, at.y());
    m_outline->topLeft->setCoords(x - 0.48, y + 0.48);
    m_outline->bottomRight->setCoords(x + 0.48, y - 0.48);
}

QPoint PlanMapView::outlined() const
{
    const int tp = m_scenario.parallel.tp, pp = m_scenario.parallel.pp;
    // On a slice at a fixed value, the current plan is on the map only when it has that value.
    if (m_map.cells.empty() || !samePlanMapProblem(m_scenario, m_mapScenario) ||
        !planMapHolds(m_scenario.parallel, m_scenario.training, m_map.fixed) ||
        indexOf(m_map.tp, tp) < 0 || indexOf(m_map.pp, pp) < 0)
        return {};
    return {tp, pp};
}

QString PlanMapView::cellText(int tp, int pp) const
{
    const PlanMapCell* c = m_map.at(tp, pp);
    if (!c)
        return {};
    const bool best = m_map.best && &m_map.cells[*m_map.best] == c;
    if (c->best)
        return (best ? QStringLiteral("★ ") : QString()) + units::count(c->best->tokens_per_second);
    if (c->rule.empty())
        return QStringLiteral("…"); // cancelled before this cell
    return c->rule == "does_not_fit" ? tr("no fit") : tr("—");
}

QString PlanMapView::cellToolTip(int tp, int pp) const
{
    const PlanMapCell* c = m_map.at(tp, pp);
    if (!c)
        return {};
    QString head = tr("TP %1 · PP %2").arg(tp).arg(pp);
    if (!c->best)
        return head + QLatin1Char('\n') +
               (c->rule == "does_not_fit" ? tr("No fit: %1") : tr("Cannot run: %1"))
                   .arg(QString::fromStdString(c->reason));
    const SearchPlan& b = *c->best;
    return head + QLatin1Char('\n') +
           tr("%1 tokens/s · MFU %2 · peak %3")
               .arg(QLocale().toString(b.tokens_per_second, 'f', 0), units::percent(b.mfu),
                    units::bytes(b.peak_bytes)) +
           QLatin1Char('\n') + planLine(b) + QLatin1Char('\n') +
           tr("%1 of %2 plans fit · click to apply")
               .arg(QLocale().toString(quint64(c->feasible)))
               .arg(QLocale().toString(quint64(c->evaluated)));
}

QPoint PlanMapView::cellCentre(int tp, int pp) const
{
    const int x = indexOf(m_map.tp, tp), y = indexOf(m_map.pp, pp);
    if (x < 0 || y < 0)
        return {};
    return {int(plot()->xAxis->coordToPixel(x)), int(plot()->yAxis->coordToPixel(y))};
}

void PlanMapView::updateStatus()
{
    if (m_havePending) {
        m_status->setText(m_fixed.axis == PlanMapAxis::None
                              ? tr("Searching every TP × PP cell…")
                              : tr("Searching every TP × PP cell at %1 %2…")
                                    .arg(qText(planMapAxisName(m_fixed.axis)),
                                         qText(planMapAxisValueText(m_fixed.axis, m_fixed.value))));
        return;
    }
    if (!m_error.isEmpty() || m_map.cells.empty()) {
        m_status->setText(m_error.isEmpty() ? QString() : tr("Cannot map: %1").arg(m_error));
        return;
    }
    QString text;
    if (m_map.best) {
        const PlanMapCell& b = m_map.cells[*m_map.best];
        text = tr("★ best: TP %1 · PP %2, %3 tokens/s")
                   .arg(b.tp)
                   .arg(b.pp)
                   .arg(QLocale().toString(b.best->tokens_per_second, 'f', 0));
    } else {
        text = tr("No plan fits in GPU memory on this cluster.");
    }
    text += QLatin1Char('\n');
    if (outlined() != QPoint())
        text += tr("Outlined: the current plan. ");
    else if (m_map.fixed.axis != PlanMapAxis::None &&
             !planMapHolds(m_scenario.parallel, m_scenario.training, m_map.fixed))
        text += tr("The current plan (%1 %2) is on another slice. ")
                    .arg(qText(planMapAxisName(m_map.fixed.axis)),
                         qText(planMapAxisValueText(
                             m_map.fixed.axis, planMapAxisValueOf(m_scenario, m_map.fixed.axis))));
    text += tr("Grey: no plan (hover for why). Click a cell to apply its best plan.");
    m_status->setText(text);
}

const PlanMapCell* PlanMapView::cellAtPixel(const QPoint& pos) const
{
    if (m_map.cells.empty() || isInvalid() || !plot()->axisRect()->rect().contains(pos))
        return nullptr;
    const int x = int(std::lround(plot()->xAxis->pixelToCoord(pos.x())));
    const int y = int(std::lround(plot()->yAxis->pixelToCoord(pos.y())));
    if (x < 0 || y < 0 || x >= int(m_map.tp.size()) || y >= int(m_map.pp.size()))
        return nullptr;
    return m_map.at(m_map.tp[std::size_t(x)], m_map.pp[std::size_t(y)]);
}

void PlanMapView::onMouseMove(QMouseEvent* event)
{
    const PlanMapCell* c = cellAtPixel(event->pos());
    if (!c) {
        QToolTip::hideText();
        return;
    }
    QToolTip::showText(event->globalPosition().toPoint(), cellToolTip(c->tp, c->pp), plot());
}

void PlanMapView::onMousePress(QMouseEvent* event)
{
    if (event->button() != Qt::LeftButton)
        return;
    const PlanMapCell* c = cellAtPixel(event->pos());
    if (!c || !c->best)
        return;
    emit planChosen(
        scenarioFor(planMapCellSpace(m_mapScenario, c->tp, c->pp, m_map.fixed), *c->best));
}

} // namespace paralens
