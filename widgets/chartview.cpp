// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/chartview.h"
#include "widgets/palette.h"

#include <QEvent>
#include <QMenu>
#include <QRegularExpression>
#include <QToolTip>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>

namespace paralens {
namespace {

/// Resting the mouse sends the plot a tool-tip event; the plot has no tip of its own, so it
/// would reach the chart view and replace the hover's exact figures with the generic hint.
/// The hint only shows where the hover has nothing to say.
class KeepHoverTip : public QObject
{
public:
    using QObject::QObject;
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (event->type() == QEvent::ToolTip && QToolTip::isVisible()) {
            event->accept(); // handled: QApplication stops passing it to the parents
            return true;
        }
        return QObject::eventFilter(watched, event);
    }
};

/// QCustomPlot copies the widget's font into its elements once, at construction; a font
/// change (presentation mode and back) must reach them, or titles keep the old size.
void applyFonts(QCustomPlot* plot, QCPItemText* message, const QFont& f)
{
    for (QCPLayoutElement* e : plot->plotLayout()->elements(true))
        if (auto* text = qobject_cast<QCPTextElement*>(e)) {
            QFont t = f;
            t.setBold(text->font().bold());
            if (t.bold()) // titles: bold, one point up (setUpTitleAndLegend)
                t.setPointSizeF(f.pointSizeF() + 1);
            text->setFont(t);
        }
    for (QCPAxisRect* rect : plot->axisRects())
        for (QCPAxis* axis : rect->axes()) {
            axis->setTickLabelFont(f);
            axis->setLabelFont(f);
        }
    plot->legend->setFont(f);
    QFont big = f;
    big.setPointSizeF(f.pointSizeF() * 1.2);
    message->setFont(big);
}

} // namespace

ChartView::ChartView(QWidget* parent) : QWidget(parent)
{
    m_layout = new QVBoxLayout(this);
    m_layout->setContentsMargins(0, 0, 0, 0);
    m_layout->setSpacing(2);
    m_plot = new QCustomPlot(this);
    m_plot->setContextMenuPolicy(Qt::CustomContextMenu);
    m_plot->setFocusPolicy(Qt::StrongFocus);
    m_plot->setMinimumSize(200, 120);
    // A replot marks the plot for painting (QWidget::update) instead of repainting it at once:
    // an immediate repaint syncs and flushes the whole window for each chart replotted, where
    // the event loop paints every chart that changed together (issue 16).
    m_plot->setPlottingHint(QCP::phImmediateRefresh, false);
    // QCustomPlot buffers its "overlay" layer apart (lmBuffered) for layer-only replots; no view
    // draws there, so the second buffer was only cleared on every replot and alpha-blended on
    // every paint. One buffer for all layers.
    m_plot->layer(QStringLiteral("overlay"))->setMode(QCPLayer::lmLogical);
    m_layout->addWidget(m_plot, 1);
    connect(m_plot, &QWidget::customContextMenuRequested, this, &ChartView::showContextMenu);
    m_plot->installEventFilter(new KeepHoverTip(this));

    m_message = new QCPItemText(m_plot);
    m_message->setPositionAlignment(Qt::AlignCenter);
    m_message->position->setType(QCPItemPosition::ptAxisRectRatio);
    m_message->position->setCoords(0.5, 0.5);
    m_message->setClipToAxisRect(false);
    m_message->setVisible(false);
    m_message->setLayer(QStringLiteral("legend"));
    QFont f = font();
    f.setPointSizeF(f.pointSizeF() * 1.2);
    m_message->setFont(f);
    palette::applyToPlot(m_plot, palette());
    connect(m_plot, &QCustomPlot::beforeReplot, this, [this] {
        if (!m_exporting)
            adaptLayout(m_plot->size());
    });
}

void ChartView::adaptLayout(const QSize& size)
{
    if (size.width() <= 0 || size.height() <= 0)
        return;
    fitTitle(size.width());
    fitTickCounts(size);
    // A narrow chart's side legend takes smaller swatches, so that its names keep their room.
    if (m_sideLegend) {
        const QSize icon = size.width() < 700 ? QSize(12, 10) : QSize(24, 12);
        if (m_plot->legend->iconSize() != icon)
            m_plot->legend->setIconSize(icon);
    }
    if (m_sideLegend)
        fitSideLegend(size.height());
    adaptLayoutTo(size);
}

void ChartView::setExporting(bool on)
{
    if (on == m_exporting)
        return;
    m_exporting = on;
    exportingChanged(on);
}

QString ChartView::drawnTitle() const
{
    return m_title ? m_title->text() : QString();
}

void ChartView::setTitleElement(QCPTextElement* title)
{
    m_title = title;
    m_titleText = title ? title->text() : QString();
}

void ChartView::setTitleText(const QString& text)
{
    m_titleText = text;
    if (m_title) {
        m_title->setText(text);
        fitTitle(m_plot->width());
    }
}

// Long titles (the Gantt's names the schedule and its bubble) break at their separators
// onto further lines rather than running off both edges of a narrow plot.
void ChartView::fitTitle(int width)
{
    if (!m_title || width <= 0)
        return;
    const QFontMetrics fm(m_title->font());
    // The title is centred over the axis rect's column: the columns beside it (a side legend,
    // a colour scale) are not its room.
    int beside = 0;
    QCPLayoutGrid* grid = m_plot->plotLayout();
    for (int c = 1; c < grid->columnCount(); ++c) {
        int widest = 0;
        for (int r = 0; r < grid->rowCount(); ++r)
            if (QCPLayoutElement* e = grid->hasElement(r, c) ? grid->element(r, c) : nullptr;
                e && e->visible())
                // As laid out last (a colour scale's axis labels are in its margins, which
                // its size hint leaves out), or as hinted before the first layout.
                widest =
                    std::max({widest, e->outerRect().width(), e->minimumOuterSizeHint().width()});
        beside += widest + grid->columnSpacing();
    }
    const int room = std::max(40, width - beside - 16);
    // Every replot comes through here: the wrapping is measured again only when the title,
    // its font or its room changed.
    if (m_wrapped.room == room && m_wrapped.text == m_titleText &&
        m_wrapped.font == m_title->font() && m_wrapped.wrapped == m_title->text())
        return;
    const QString text = wrapText(m_titleText, fm, room);
    m_wrapped = {m_titleText, m_title->font(), room, text};
    if (text != m_title->text())
        m_title->setText(text);
}

// Numeric axes get as many ticks as their labels have room for (about two label widths apart
// across, two lines apart up), so that a narrow chart's labels never run into each other.
// Text, log and time tickers are left to their views.
void ChartView::fitTickCounts(const QSize& size)
{
    for (QCPAxisRect* rect : m_plot->axisRects())
        for (QCPAxis* axis : rect->axes()) {
            const QSharedPointer<QCPAxisTicker> ticker = axis->ticker();
            if (!ticker || ticker.dynamicCast<QCPAxisTickerText>() ||
                ticker.dynamicCast<QCPAxisTickerLog>() || ticker.dynamicCast<QCPAxisTickerTime>() ||
                ticker.dynamicCast<QCPAxisTickerDateTime>() ||
                ticker.dynamicCast<QCPAxisTickerFixed>() || ticker.dynamicCast<QCPAxisTickerPi>())
                continue;
            const QFontMetrics fm(axis->tickLabelFont());
            const bool across = axis->orientation() == Qt::Horizontal;
            const int length = across ? std::max(rect->width(), size.width() / 2)
                                      : std::max(rect->height(), size.height() / 3);
            const int per =
                across ? fm.horizontalAdvance(QStringLiteral("00000")) * 2 : fm.height() * 2;
            // The count the view chose is the most (remembered the first time through).
            QVariant most = axis->property("paralensTicks");
            if (!most.isValid()) {
                most = ticker->tickCount();
                axis->setProperty("paralensTicks", most);
            }
            ticker->setTickCount(
                std::clamp(length / std::max(1, per), 2, std::max(2, most.toInt())));
        }
}

QString ChartView::wrapText(const QString& text, const QFontMetrics& fm, int room)
{
    static const QRegularExpression breaks(QStringLiteral("(?<= — | · |, )"));
    QStringList lines;
    for (const QString& given : text.split(QLatin1Char('\n'))) {
        QString line;
        for (const QString& piece : given.split(breaks)) {
            if (!line.isEmpty() && fm.horizontalAdvance(line + piece.trimmed()) > room) {
                lines << line.trimmed();
                line.clear();
            }
            line += piece;
        }
        lines << line.trimmed();
    }
    // A line with no separator left to break at breaks between words; a word wider than the
    // room on its own is elided.
    QStringList out;
    for (const QString& l : std::as_const(lines)) {
        if (fm.horizontalAdvance(l) <= room) {
            out << l;
            continue;
        }
        QString line;
        for (const QString& word : l.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
            if (!line.isEmpty() && fm.horizontalAdvance(line + QLatin1Char(' ') + word) > room) {
                out << line;
                line.clear();
            }
            line += (line.isEmpty() ? QString() : QStringLiteral(" ")) + word;
        }
        out << line;
    }
    for (QString& l : out)
        l = fm.elidedText(l, Qt::ElideRight, room);
    return out.join(QLatin1Char('\n'));
}

// The side legend gets the plot's height less the text rows above it; when its entries need
// more, they flow into further columns instead of being drawn over each other.
void ChartView::fitSideLegend(int height)
{
    QCPLegend* legend = m_plot->legend;
    int room = height - 12;
    QCPLayoutGrid* grid = m_plot->plotLayout();
    for (int r = 0; r < grid->rowCount(); ++r)
        if (auto* text = qobject_cast<QCPTextElement*>(grid->element(r, 0)))
            room -= static_cast<QCPLayoutElement*>(text)->minimumOuterSizeHint().height();
    room -= legend->margins().top() + legend->margins().bottom();
    const QList<QCPAbstractLegendItem*> items = legendItems(legend);
    int rowHeight = 1;
    for (QCPLayoutElement* item : items)
        rowHeight = std::max(rowHeight, item->minimumOuterSizeHint().height());
    const int rows = std::max(1, room / (rowHeight + legend->rowSpacing()));
    const int wrap = int(items.size()) > rows ? rows : 0;
    if (wrap != legend->wrap() || legend->fillOrder() != QCPLayoutGrid::foRowsFirst) {
        legend->setWrap(wrap);
        legend->setFillOrder(QCPLayoutGrid::foRowsFirst, true);
    }
}

QList<QCPAbstractLegendItem*> ChartView::legendItems(const QCPLegend* legend)
{
    // A wrapped legend's grid has empty cells: item(i) is null there.
    QList<QCPAbstractLegendItem*> items;
    for (int i = 0; i < legend->itemCount(); ++i)
        if (QCPAbstractLegendItem* item = legend->item(i))
            items << item;
    return items;
}

void ChartView::setInvalid(const QString& reason)
{
    m_invalidReason = reason;
    if (reason.isEmpty()) {
        markValid();
        return;
    }
    clearData();
    // The chart shows the first broken rule, wrapped; the panel's banner lists them all.
    const QStringList lines = reason.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QStringList wrapped;
    QString line;
    for (const QString& word : lines.value(0).split(QLatin1Char(' '))) {
        if (!line.isEmpty() && line.size() + word.size() > 48) {
            wrapped << line;
            line.clear();
        }
        line += (line.isEmpty() ? QString() : QStringLiteral(" ")) + word;
    }
    wrapped << line;
    if (lines.size() > 1)
        wrapped << tr("(and %n more)", nullptr, int(lines.size() - 1));
    m_message->setText(tr("Plan cannot run:\n%1").arg(wrapped.join(QLatin1Char('\n'))));
    m_message->setColor(palette::warning(palette()));
    m_message->setVisible(true);
    m_plot->replot();
}

void ChartView::setUpTitleAndLegend()
{
    QCustomPlot* p = m_plot;
    p->plotLayout()->insertRow(0);
    QFont titleFont = font();
    titleFont.setBold(true);
    titleFont.setPointSizeF(titleFont.pointSizeF() + 1);
    auto* title = new QCPTextElement(p, chartTitle(), titleFont);
    p->plotLayout()->addElement(0, 0, title);
    setTitleElement(title);
    m_sideLegend = true;
    p->setAccessibleName(chartTitle());
    p->setAccessibleDescription(toolTip());
    auto* side = new QCPLayoutGrid;
    p->plotLayout()->addElement(1, 1, side);
    p->axisRect()->insetLayout()->take(p->legend);
    side->addElement(0, 0, p->legend);
    side->addElement(1, 0, new QCPLayoutElement(p)); // takes the spare height
    side->setRowStretchFactors({0.001, 1});
    side->setMargins(QMargins(0, 4, 8, 4));
    p->plotLayout()->setColumnStretchFactor(1, 0.001);
    p->legend->setVisible(true);
    p->legend->setMargins(QMargins(6, 2, 6, 2));
    p->legend->setRowSpacing(0);
    palette::applyToPlot(p, palette());
}

void ChartView::markValid()
{
    m_invalidReason.clear();
    m_message->setVisible(false);
}

void ChartView::showMessage(const QString& text)
{
    m_invalidReason.clear();
    m_message->setText(text);
    m_message->setColor(palette().color(QPalette::Text));
    m_message->setVisible(true);
}

void ChartView::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::FontChange && m_plot) {
        applyFonts(m_plot, m_message, font());
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    }
    if (event->type() == QEvent::PaletteChange) {
        palette::applyToPlot(m_plot, palette());
        m_message->setColor(isInvalid() ? palette::warning(palette())
                                        : palette().color(QPalette::Text));
        applyColors();
        m_plot->replot();
    }
    QWidget::changeEvent(event);
}

void ChartView::showEvent(QShowEvent* event)
{
    m_plot->replot(QCustomPlot::rpQueuedReplot);
    QWidget::showEvent(event);
}

void ChartView::showContextMenu(const QPoint& pos)
{
    QMenu menu(this);
    QAction* exportAction = menu.addAction(tr("Export %1…").arg(chartTitle()));
    exportAction->setToolTip(tr("Save this chart as PNG, SVG or PDF"));
    if (menu.exec(m_plot->mapToGlobal(pos)) == exportAction)
        emit exportRequested(this);
}

} // namespace paralens
