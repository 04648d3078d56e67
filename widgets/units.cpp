// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/units.h"

#include <QLocale>

#include <cmath>

namespace paralens::units {

QString bytes(double b)
{
    if (!std::isfinite(b))
        return QStringLiteral("—");
    const double a = std::abs(b);
    if (a >= kGiB)
        return QStringLiteral("%1 GiB").arg(b / kGiB, 0, 'f', 1);
    if (a >= kMiB)
        return QStringLiteral("%1 MiB").arg(b / kMiB, 0, 'f', 1);
    if (a >= kKiB)
        return QStringLiteral("%1 KiB").arg(b / kKiB, 0, 'f', 1);
    return QStringLiteral("%1 B").arg(b, 0, 'f', 0);
}

QString sizeBytes(double b)
{
    static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    double v = b;
    while (std::abs(v) >= kKiB && u < 5) {
        v /= kKiB;
        ++u;
    }
    const bool whole = std::abs(v - std::round(v)) < 1e-9;
    return QStringLiteral("%1 %2").arg(whole ? QString::number(std::round(v), 'f', 0)
                                             : QString::number(v, 'g', 3),
                                       QLatin1String(kUnits[u]));
}

QString exactBytes(double b)
{
    if (!std::isfinite(b))
        return QStringLiteral("—");
    return QStringLiteral("%1 B").arg(QLocale(QLocale::English, QLocale::UnitedStates)
                                          .toString(static_cast<qlonglong>(std::llround(b))));
}

namespace {
QString threeDigits(double v)
{
    const double a = std::abs(v);
    const int decimals = a >= 100 ? 0 : (a >= 10 ? 1 : 2);
    return QString::number(v, 'f', decimals);
}
} // namespace

QString seconds(double s)
{
    if (!std::isfinite(s))
        return QStringLiteral("—");
    const double a = std::abs(s);
    if (a >= 1.0 || a == 0.0)
        return threeDigits(s) + QStringLiteral(" s");
    if (a >= 1e-3)
        return threeDigits(s * 1e3) + QStringLiteral(" ms");
    return threeDigits(s * 1e6) + QStringLiteral(" µs");
}

double timeAxisUnit(double span_seconds)
{
    return std::abs(span_seconds) >= 1.0 ? 1.0 : 1e-3;
}

QString timeAxisUnitName(double unit_seconds)
{
    return unit_seconds >= 1.0 ? QStringLiteral("s") : QStringLiteral("ms");
}

QString count(double n)
{
    if (!std::isfinite(n))
        return QStringLiteral("—");
    const double a = std::abs(n);
    if (a >= 1e12)
        return threeDigits(n / 1e12) + QStringLiteral(" T");
    if (a >= 1e9)
        return threeDigits(n / 1e9) + QStringLiteral(" G");
    if (a >= 1e6)
        return threeDigits(n / 1e6) + QStringLiteral(" M");
    if (a >= 1e3)
        return threeDigits(n / 1e3) + QStringLiteral(" k");
    return threeDigits(n);
}

QString percent(double fraction)
{
    if (!std::isfinite(fraction))
        return QStringLiteral("—");
    return QStringLiteral("%1 %").arg(fraction * 100.0, 0, 'f', 1);
}

} // namespace paralens::units
