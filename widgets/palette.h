// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include <QColor>
#include <QPalette>

class QCustomPlot;

namespace paralens::palette {

/// Okabe–Ito categorical colours (colour-blind safe), black replaced by grey so they read on
/// light and dark backgrounds. Index wraps after 8.
QColor categorical(int index);

/// Colour for group `index` of `count` groups: the eight categorical colours, then lighter and
/// darker variants of them so neighbouring groups stay distinct beyond eight.
QColor group(int index, int count);

/// A colour that stands out on the given palette (vermillion, lightened on dark backgrounds).
QColor warning(const QPalette& p);
/// The colour for "everything is fine" (bluish green).
QColor ok(const QPalette& p);

/// True when the window colour is dark.
bool isDark(const QPalette& p);

/// Applies the palette's window, text and mid colours to a plot's background, axes, ticks,
/// grid and legend. Call again on QEvent::PaletteChange.
void applyToPlot(QCustomPlot* plot, const QPalette& p);

} // namespace paralens::palette
