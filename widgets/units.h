// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The byte, time and count strings the views show, formatted in one place.
#include "core/units.h"

#include <QString>

namespace paralens::units {

/// "78.3 GiB", "512.0 MiB": one decimal, binary prefixes.
QString bytes(double b);
/// "1 KiB", "32 MiB", "1.5 GiB": whole numbers bare, else three significant digits; for
/// power-of-two sizes such as nccl-tests message sizes.
QString sizeBytes(double b);
/// Exact byte count with thousands separators: "84,021,927,936 B".
QString exactBytes(double b);
/// "12.4 s", "873 ms", "41.2 µs": three significant digits.
QString seconds(double s);
/// The unit a time axis uses for times up to `span_seconds`: seconds from 1 s up, else
/// milliseconds; the same switch as seconds(), so an axis and the headline agree.
double timeAxisUnit(double span_seconds);
/// "s" or "ms" for a timeAxisUnit() result.
QString timeAxisUnitName(double unit_seconds);
/// "1.23 M", "45.6 k": three significant digits with SI suffix.
QString count(double n);
/// "43.1 %".
QString percent(double fraction);

} // namespace paralens::units
