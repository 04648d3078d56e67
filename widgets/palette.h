// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include <QColor>
#include <QPalette>

class QCustomPlot;

namespace paralens::palette {

// Okabe & Ito (2008), "Color Universal Design": the categorical set, colour-blind safe.
inline constexpr QRgb kOrange = 0xE69F00;
inline constexpr QRgb kSkyBlue = 0x56B4E9;
inline constexpr QRgb kBluishGreen = 0x009E73;
inline constexpr QRgb kYellow = 0xF0E442;
inline constexpr QRgb kBlue = 0x0072B2;
inline constexpr QRgb kVermillion = 0xD55E00;
inline constexpr QRgb kReddishPurple = 0xCC79A7;
inline constexpr QRgb kGrey = 0x999999; ///< stands in for Okabe-Ito black on dark themes

// Pipeline op kinds in the Gantt chart: Narayanan et al. (2021) draw forwards blue and
// backwards green; Qi et al. (2024, zero bubble) add the weight-gradient pass in a third hue.
inline constexpr QRgb kForward = 0x3B7DD8;
inline constexpr QRgb kBackward = 0x2EA05A;
inline constexpr QRgb kWeightGradient = kOrange;
inline constexpr QRgb kCommunication = 0xCC457A;

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
