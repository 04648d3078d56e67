// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/legenditem.h"

namespace paralens {

CachedLegendItem::CachedLegendItem(QCPLegend* parent, QCPAbstractPlottable* plottable)
    : QCPPlottableLegendItem(parent, plottable)
{
}

QSize CachedLegendItem::minimumOuterSizeHint() const
{
    if (!mPlottable)
        return QCPPlottableLegendItem::minimumOuterSizeHint();
    // Everything the base class's measure depends on.
    const QFont font = getFont();
    const QSize icon = mParentLegend->iconSize();
    const int padding = mParentLegend->iconTextPadding();
    if (m_padding != padding || m_iconSize != icon || m_margins != mMargins ||
        m_name != mPlottable->name() || m_font != font) {
        m_hint = QCPPlottableLegendItem::minimumOuterSizeHint();
        m_name = mPlottable->name();
        m_font = font;
        m_iconSize = icon;
        m_padding = padding;
        m_margins = mMargins;
    }
    return m_hint;
}

bool addToLegend(QCPAbstractPlottable* plottable, QCPLegend* legend)
{
    if (!legend)
        legend = plottable->parentPlot()->legend;
    if (!legend || legend->parentPlot() != plottable->parentPlot() ||
        legend->hasItemWithPlottable(plottable))
        return false;
    legend->addItem(new CachedLegendItem(legend, plottable));
    return true;
}

void cacheLegendItems(QCPLegend* legend)
{
    QList<QCPAbstractPlottable*> plottables;
    bool plain = false;
    for (int i = 0; i < legend->itemCount(); ++i) {
        QCPAbstractLegendItem* entry = legend->item(i);
        if (!entry)
            continue; // an empty cell of a wrapped legend's grid
        auto* item = qobject_cast<QCPPlottableLegendItem*>(entry);
        if (!item)
            return; // an entry of another kind: the legend is left as it is
        plain |= qobject_cast<CachedLegendItem*>(item) == nullptr;
        plottables << item->plottable();
    }
    if (!plain)
        return;
    legend->clearItems();
    for (QCPAbstractPlottable* p : std::as_const(plottables))
        legend->addItem(new CachedLegendItem(legend, p));
}

} // namespace paralens
