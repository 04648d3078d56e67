// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include <QString>

namespace paralens {

/// The colour theme of the application (View ▸ Theme), kept in QSettings ("ui/theme").
enum class Theme
{
    System, ///< the platform's palette
    Light,
    Dark
};

/// The theme saved in QSettings (System when none or unknown).
Theme savedTheme();
/// Applies `theme` to the whole application (every view recolours on the palette change) and
/// saves it.
void applyTheme(Theme theme);
/// "system", "light" or "dark".
QString themeId(Theme theme);

} // namespace paralens
