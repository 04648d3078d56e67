// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include <QFont>
#include <QSize>
#include <QString>
#include <qcustomplot.h>

namespace paralens {

/// A plottable's legend entry that measures its text once per name, font and icon size.
/// QCPPlottableLegendItem lays its name out (QFontMetrics::boundingRect) on every size query,
/// and a replot's layout asks each entry several times; the explorer replots on every slider
/// tick (issue 16). Draws exactly as QCPPlottableLegendItem does.
class CachedLegendItem : public QCPPlottableLegendItem
{
    Q_OBJECT
public:
    CachedLegendItem(QCPLegend* parent, QCPAbstractPlottable* plottable);

protected:
    QSize minimumOuterSizeHint() const override;

private:
    mutable QString m_name;
    mutable QFont m_font;
    mutable QSize m_iconSize;
    mutable int m_padding = -1;
    mutable QMargins m_margins;
    mutable QSize m_hint;
};

/// As plottable->addToLegend(legend) (the plot's legend by default), with a CachedLegendItem.
bool addToLegend(QCPAbstractPlottable* plottable, QCPLegend* legend = nullptr);
/// Replaces every plain plottable entry of `legend` (those QCustomPlot adds by itself when a
/// plottable is made) by a CachedLegendItem, in the same order.
void cacheLegendItems(QCPLegend* legend);

} // namespace paralens
