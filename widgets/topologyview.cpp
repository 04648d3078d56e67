// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/topologyview.h"
#include "core/topology.h"
#include "widgets/legenditem.h"
#include "widgets/palette.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QToolTip>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace paralens {
namespace {
constexpr int kLegendMax = 12; // more groups than this get a caption instead of a legend
constexpr int kColorCycle = 24;
} // namespace

TopologyView::TopologyView(QWidget* parent) : ChartView(parent)
{
    setAccessibleName(tr("Rank topology"));
    setToolTip(tr("Each cell is a GPU, grouped by node; hover for its rank and coordinates"));
    auto* bar = new QHBoxLayout;
    auto* label = new QLabel(tr("C&olour by"), this);
    m_colorBox = new QComboBox(this);
    m_colorBox->addItems({tr("TP group"), tr("PP stage"), tr("DP replica"), tr("EP shard"),
                          tr("CP chunk"), tr("Node")});
    m_colorBox->setToolTip(tr("Which process group the colours show"));
    m_colorBox->setAccessibleName(tr("Colour GPUs by"));
    label->setBuddy(m_colorBox);
    bar->addWidget(label);
    bar->addWidget(m_colorBox);
    bar->addStretch(1);
    layoutBox()->insertLayout(0, bar);
    connect(m_colorBox, &QComboBox::currentIndexChanged, this, [this](int i) {
        setColorBy(static_cast<ColorBy>(i));
        plot()->replot();
    });

    QCustomPlot* p = plot();
    setUpTitleAndLegend();
    // The caption is part of the plot so exports carry it.
    p->plotLayout()->insertRow(1);
    m_caption = new QCPTextElement(p, QString(), font());
    p->plotLayout()->addElement(1, 0, m_caption);
    palette::applyToPlot(p, palette());
    for (QCPAxis* axis : {p->xAxis, p->yAxis}) {
        axis->grid()->setVisible(false);
        axis->setVisible(false);
        axis->setSubTicks(false);
        axis->setTickLength(0, 0);
        axis->setBasePen(Qt::NoPen);
    }
    p->yAxis->setRangeReversed(true);
    m_map = new QCPColorMap(p->xAxis, p->yAxis);
    m_map->setInterpolate(false);
    m_map->setTightBoundary(false);
    m_map->removeFromLegend();
    p->legend->setVisible(false);
    connect(p, &QCustomPlot::mouseMove, this, &TopologyView::onMouseMove);
    // Square cells need the axis rect's final size: adjust the ranges after each layout.
    connect(p, &QCustomPlot::afterLayout, this, &TopologyView::fitAspect);
    applyColors();
}

void TopologyView::setScenario(const Scenario& s)
{
    m_scenario = s;
    m_hasScenario = true;
    markValid();
    rebuild();
}

void TopologyView::setColorBy(ColorBy by)
{
    m_colorBy = by;
    if (m_colorBox->currentIndex() != by)
        m_colorBox->setCurrentIndex(by); // re-enters through the combo's signal
    else if (m_hasScenario && !isInvalid())
        rebuild();
}

int TopologyView::groupOf(int rank) const
{
    const ParallelPlan& p = m_scenario.parallel;
    const RankCoordinates c = rankCoordinates(p, m_scenario.cluster, rank);
    switch (m_colorBy) {
    case ByTpGroup:
        return rank / std::max(1, p.tp);
    case ByPpStage:
        return c.pp;
    case ByDpReplica:
        return c.dp;
    case ByEpShard:
        return c.ep;
    case ByCpChunk:
        return c.cp;
    case ByNode:
        return c.node;
    }
    return 0;
}

int TopologyView::nodeGap() const
{
    return m_pitch > 1 ? 2 : 1;
}

QPoint TopologyView::cellOf(int unit) const
{
    const int node = unit / m_unitsPerNode;
    const int local = unit % m_unitsPerNode;
    const int nodeX = node % m_nodeCols, nodeY = node / m_nodeCols;
    const int spanX = m_blockW * m_pitch + nodeGap(), spanY = m_blockH * m_pitch + nodeGap();
    return {nodeX * spanX + (local % m_blockW) * m_pitch,
            nodeY * spanY + (local / m_blockW) * m_pitch};
}

void TopologyView::rebuild()
{
    const ParallelPlan& p = m_scenario.parallel;
    const int gpus = std::max(1, p.gpus());
    const int perNode = std::max(1, m_scenario.cluster.gpus_per_node);
    const int nodes = (gpus + perNode - 1) / perNode;
    m_aggregated = gpus > kMaxCells;
    m_unitsPerNode = m_aggregated ? 1 : perNode;
    m_units = m_aggregated ? nodes : gpus;
    m_blockW = m_aggregated ? 1 : std::min(perNode, 8);
    m_blockH = (m_unitsPerNode + m_blockW - 1) / m_blockW;
    m_pitch = gpus <= 4096 ? 4 : 1; // small plans: a gap around every GPU so single GPUs show

    const int groupSpan[] = {gpus / std::max(1, p.tp), p.pp, p.dp, p.ep, p.cp, nodes};
    m_groupCount = std::max(1, groupSpan[m_colorBy]);
    const int levels = std::min(m_groupCount, kColorCycle);
    m_groups.assign(std::size_t(m_units), 0);
    for (int u = 0; u < m_units; ++u) {
        const int rank = m_aggregated ? u * perNode : u;
        m_groups[std::size_t(u)] = rank < gpus ? groupOf(rank) % levels : -1;
    }
    m_nodeCols = 0; // forces layoutCells() to fill the map
    layoutCells();
    m_map->setDataRange(QCPRange(0, std::max(1, levels - 1)));
    applyColors();

    const QString what = m_colorBox->currentText();
    QString caption =
        tr("%1 GPUs · %2 nodes · %3 × %4").arg(gpus).arg(nodes).arg(m_groupCount).arg(what);
    if (m_aggregated)
        caption += tr("\none cell per node, coloured by its first GPU");
    else if (m_groupCount > kColorCycle)
        caption += tr("\ncolours repeat every %1").arg(kColorCycle);
    m_captionText = caption;
    m_caption->setText(
        wrapText(caption, QFontMetrics(m_caption->font()), std::max(40, plot()->width() - 16)));

    const int legendCount = m_groupCount <= kLegendMax ? m_groupCount : 0;
    while (int(m_legendEntries.size()) < legendCount) {
        auto* g = new QCPGraph(plot()->xAxis, plot()->yAxis);
        g->setLineStyle(QCPGraph::lsNone);
        m_legendEntries.push_back(g);
    }
    for (int i = 0; i < int(m_legendEntries.size()); ++i) {
        QCPGraph* g = m_legendEntries[std::size_t(i)];
        const bool used = i < legendCount;
        g->setVisible(used);
        if (used) {
            addToLegend(g);
            const QColor c = palette::group(i, levels);
            g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssSquare, c, c, 9));
        } else {
            g->removeFromLegend();
        }
    }
    cacheLegendItems(plot()->legend); // the entries QCustomPlot added for new graphs
    nameLegendEntries();
    plot()->legend->setVisible(legendCount > 0);
}

// "TP 3" on a roomy plot; the bare "3" on a narrow one, where the prefix would push the numbers
// out of the legend (the caption names the groups).
void TopologyView::nameLegendEntries()
{
    const QString shortNames[] = {tr("TP"), tr("stage"), tr("replica"),
                                  tr("EP"), tr("CP"),    tr("node")};
    for (int i = 0; i < int(m_legendEntries.size()); ++i)
        m_legendEntries[std::size_t(i)]->setName(
            m_shortNames ? QString::number(i)
                         : QStringLiteral("%1 %2").arg(shortNames[m_colorBy]).arg(i));
}

void TopologyView::adaptLayoutTo(const QSize& size)
{
    // The caption sits over the cells' column, beside the legend.
    const int legend =
        plot()->legend->visible() ? plot()->legend->minimumOuterSizeHint().width() + 8 : 0;
    m_caption->setText(wrapText(m_captionText, QFontMetrics(m_caption->font()),
                                std::max(40, size.width() - legend - 16)));
    const bool shortNames = size.width() < 60 * QFontMetrics(font()).averageCharWidth();
    if (shortNames != m_shortNames) {
        m_shortNames = shortNames;
        nameLegendEntries();
    }
}

void TopologyView::labelNodeRows(int step)
{
    m_rowLabelStep = step;
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    const int nodes = (m_units + m_unitsPerNode - 1) / std::max(1, m_unitsPerNode);
    const int spanY = m_blockH * m_pitch + nodeGap();
    for (int r = 0; r < m_nodeRows; r += step) {
        const int first = r * m_nodeCols, last = std::min(nodes, first + m_nodeCols) - 1;
        ticker->addTick(r * spanY + (m_blockH * m_pitch - (m_pitch > 1 ? 2 : 1)) / 2.0,
                        first == last ? tr("node %1").arg(first)
                                      : tr("nodes %1–%2").arg(first).arg(last));
    }
    plot()->yAxis->setTicker(ticker);
}

int TopologyView::bestNodeColumns(QSize area) const
{
    const int nodes = (m_units + m_unitsPerNode - 1) / m_unitsPerNode;
    if (area.width() <= 0 || area.height() <= 0)
        area = QSize(600, 400);
    // The tiling that gives the largest square cells in the area.
    int best = 1;
    double bestCell = 0;
    const int limit = std::min(nodes, 4096);
    for (int nc = 1; nc <= limit; ++nc) {
        const int nr = (nodes + nc - 1) / nc;
        const double cell =
            std::min(double(area.width()) / (nc * (m_blockW * m_pitch + nodeGap())),
                     double(area.height()) / (nr * (m_blockH * m_pitch + nodeGap())));
        if (cell > bestCell * 1.0001) {
            bestCell = cell;
            best = nc;
        }
    }
    return best;
}

void TopologyView::layoutCells()
{
    const int cols0 = bestNodeColumns(plot()->axisRect()->rect().size());
    if (cols0 == m_nodeCols)
        return;
    m_nodeCols = cols0;
    const int nodes = (m_units + m_unitsPerNode - 1) / m_unitsPerNode;
    const int nodeRows = (nodes + m_nodeCols - 1) / m_nodeCols;
    const int trim = nodeGap() + (m_pitch > 1 ? 1 : 0); // no gap after the last node / GPU
    const int cols = m_nodeCols * (m_blockW * m_pitch + nodeGap()) - trim;
    const int rows = nodeRows * (m_blockH * m_pitch + nodeGap()) - trim;
    m_map->data()->setSize(cols, rows);
    m_map->data()->setRange(QCPRange(0, cols - 1), QCPRange(0, rows - 1));
    m_map->data()->fill(std::numeric_limits<double>::quiet_NaN());
    // Row labels name the nodes of each row while there are few enough to read; fitAspect()
    // thins them to the rows' height on screen.
    m_nodeRows = nodeRows;
    const bool labelRows = !m_aggregated && nodeRows <= 512;
    if (labelRows)
        labelNodeRows((nodeRows + 15) / 16); // at most ~16 labels stay readable
    else
        plot()->yAxis->setTicker(QSharedPointer<QCPAxisTickerText>::create());
    plot()->yAxis->setVisible(labelRows);
    const int fill = std::max(1, m_pitch - 1);
    for (int u = 0; u < m_units; ++u) {
        const int g = m_groups[std::size_t(u)];
        if (g < 0)
            continue;
        const QPoint c = cellOf(u);
        for (int dy = 0; dy < fill; ++dy)
            for (int dx = 0; dx < fill; ++dx)
                m_map->data()->setCell(c.x() + dx, c.y() + dy, g);
    }
}

void TopologyView::applyColors()
{
    const int levels = std::max(2, std::min(m_groupCount, kColorCycle));
    QCPColorGradient gradient;
    gradient.clearColorStops();
    for (int i = 0; i < levels; ++i)
        gradient.setColorStopAt(double(i) / (levels - 1), palette::group(i, levels));
    gradient.setLevelCount(levels);
    gradient.setNanHandling(QCPColorGradient::nhTransparent);
    m_map->setGradient(gradient);
}

void TopologyView::clearData()
{
    m_map->data()->clear();
    for (QCPGraph* g : m_legendEntries) {
        g->setVisible(false);
        g->removeFromLegend();
    }
    plot()->legend->setVisible(false);
    m_caption->setText(QString());
    m_captionText.clear();
    m_units = 0;
}

void TopologyView::fitAspect()
{
    if (m_units == 0)
        return;
    layoutCells(); // re-tiles when the area's shape changed
    const QCPRange kx = m_map->data()->keyRange(), ky = m_map->data()->valueRange();
    const QRect r = plot()->axisRect()->rect();
    if (r.width() <= 0 || r.height() <= 0)
        return;
    // Square cells, centred: one scale for both axes.
    const double w = kx.size() + 1.2, h = ky.size() + 1.2;
    const double perPx = std::max(w / r.width(), h / r.height());
    const QCPRange x0 = plot()->xAxis->range(), y0 = plot()->yAxis->range();
    plot()->xAxis->setRange(kx.center(), perPx * r.width(), Qt::AlignCenter);
    plot()->yAxis->setRange(ky.center(), perPx * r.height(), Qt::AlignCenter);
    // Node-row labels no closer than a line of text: every step-th row when the rows are thin.
    if (plot()->yAxis->visible() && m_nodeRows > 0) {
        const double rowPx = (m_blockH * m_pitch + nodeGap()) / perPx;
        const int line = QFontMetrics(plot()->yAxis->tickLabelFont()).height();
        const int step =
            std::max((m_nodeRows + 15) / 16, int(std::ceil(line / std::max(rowPx, 1.0))));
        if (step != m_rowLabelStep) {
            labelNodeRows(step);
            plot()->replot(QCustomPlot::rpQueuedReplot);
        }
    }
    // Ticks were set up for the old ranges: set them up again for this paint. The margins were
    // measured on the old labels, so only when the labels changed is one more draw needed.
    auto moved = [perPx](const QCPRange& a, const QCPRange& b) {
        return std::abs(a.lower - b.lower) + std::abs(a.upper - b.upper) > perPx * 0.5;
    };
    if (moved(x0, plot()->xAxis->range()) || moved(y0, plot()->yAxis->range())) {
        const QVector<QString> xLabels = plot()->xAxis->tickVectorLabels();
        const QVector<QString> yLabels = plot()->yAxis->tickVectorLabels();
        plot()->axisRect()->update(QCPLayoutElement::upPreparation);
        if (plot()->xAxis->tickVectorLabels() != xLabels ||
            plot()->yAxis->tickVectorLabels() != yLabels)
            plot()->replot(QCustomPlot::rpQueuedReplot);
    }
}

int TopologyView::drawnGroup(int rank) const
{
    const int perNode = std::max(1, m_scenario.cluster.gpus_per_node);
    const int unit = m_aggregated ? (rank % perNode == 0 ? rank / perNode : -1) : rank;
    if (unit < 0 || unit >= m_units)
        return -1;
    const QPoint c = cellOf(unit);
    const double v = m_map->data()->cell(c.x(), c.y());
    return std::isnan(v) ? -1 : int(v);
}

int TopologyView::unitAt(const QPointF& pixel) const
{
    double kx = 0, ky = 0;
    m_map->pixelsToCoords(pixel, kx, ky);
    const int fx = int(std::lround(kx)), fy = int(std::lround(ky));
    if (fx < 0 || fy < 0)
        return -1;
    const int spanX = m_blockW * m_pitch + nodeGap(), spanY = m_blockH * m_pitch + nodeGap();
    const int nodeX = fx / spanX, nodeY = fy / spanY;
    const int lx = (fx % spanX) / m_pitch, ly = (fy % spanY) / m_pitch;
    if (lx >= m_blockW || ly >= m_blockH || nodeX >= m_nodeCols)
        return -1;
    const int unit = (nodeY * m_nodeCols + nodeX) * m_unitsPerNode + ly * m_blockW + lx;
    return unit < m_units ? unit : -1;
}

QString TopologyView::rankText(int rank) const
{
    const RankCoordinates c = rankCoordinates(m_scenario.parallel, m_scenario.cluster, rank);
    const int perNode = std::max(1, m_scenario.cluster.gpus_per_node);
    return tr("<b>Rank %1</b> · node %2, GPU %3<br>TP %4 · CP %5 · EP %6 · DP %7 · PP %8")
        .arg(rank)
        .arg(c.node)
        .arg(rank % perNode)
        .arg(c.tp)
        .arg(c.cp)
        .arg(c.ep)
        .arg(c.dp)
        .arg(c.pp);
}

void TopologyView::onMouseMove(QMouseEvent* event)
{
    const int unit = m_units > 0 && !isInvalid() ? unitAt(event->position()) : -1;
    if (unit < 0) {
        QToolTip::hideText();
        return;
    }
    const int perNode = std::max(1, m_scenario.cluster.gpus_per_node);
    const QString text = m_aggregated ? tr("<b>Node %1</b> (ranks %2–%3)<br>first GPU: %4")
                                            .arg(unit)
                                            .arg(unit * perNode)
                                            .arg(unit * perNode + perNode - 1)
                                            .arg(rankText(unit * perNode))
                                      : rankText(unit);
    QToolTip::showText(event->globalPosition().toPoint(), text, plot());
}

} // namespace paralens
