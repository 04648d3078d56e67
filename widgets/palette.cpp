// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/palette.h"

#include <qcustomplot.h>

#include <array>

namespace paralens::palette {
namespace {
constexpr std::array<QRgb, 8> kOkabeIto{kOrange, kSkyBlue,    kBluishGreen,   kYellow,
                                        kBlue,   kVermillion, kReddishPurple, kGrey};
} // namespace

QColor categorical(int index)
{
    const int n = static_cast<int>(kOkabeIto.size());
    return QColor(kOkabeIto[static_cast<std::size_t>(((index % n) + n) % n)]);
}

QColor group(int index, int count)
{
    const QColor base = categorical(index);
    if (count <= 8)
        return base;
    // Rounds of eight: base, lighter, darker, then repeat.
    switch ((index / 8) % 3) {
    case 1:
        return base.lighter(140);
    case 2:
        return base.darker(150);
    default:
        return base;
    }
}

bool isDark(const QPalette& p)
{
    return p.color(QPalette::Window).lightness() < 128;
}

QColor warning(const QPalette& p)
{
    const QColor c(kVermillion);
    return isDark(p) ? c.lighter(130) : c;
}

QColor ok(const QPalette& p)
{
    const QColor c(kBluishGreen);
    return isDark(p) ? c.lighter(130) : c;
}

void applyToPlot(QCustomPlot* plot, const QPalette& p)
{
    const QColor bg = p.color(QPalette::Base);
    const QColor fg = p.color(QPalette::Text);
    QColor grid = p.color(QPalette::Mid);
    grid.setAlpha(90);
    plot->setBackground(bg);
    for (QCPAxisRect* rect : plot->axisRects()) {
        for (QCPAxis* axis : rect->axes()) {
            if (axis->basePen() != Qt::NoPen)
                axis->setBasePen(QPen(fg));
            axis->setTickPen(QPen(fg));
            axis->setSubTickPen(QPen(fg));
            axis->setTickLabelColor(fg);
            axis->setLabelColor(fg);
            axis->grid()->setPen(QPen(grid, 0, Qt::DotLine));
        }
    }
    if (plot->legend) {
        plot->legend->setBrush(bg);
        plot->legend->setTextColor(fg);
        plot->legend->setBorderPen(QPen(grid));
    }
    for (int i = 0; i < plot->plotLayout()->elementCount(); ++i)
        if (auto* title = qobject_cast<QCPTextElement*>(plot->plotLayout()->elementAt(i)))
            title->setTextColor(fg);
}

} // namespace paralens::palette
