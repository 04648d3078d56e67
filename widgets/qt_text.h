// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The one conversion from core's std::string_view names (toString(Schedule), ...) to QString.
// A string_view need not be NUL-terminated, so the size always goes with the data.
#include <QString>

#include <string_view>

namespace paralens {

inline QString qText(std::string_view s)
{
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

} // namespace paralens
