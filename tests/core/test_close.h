// SPDX-License-Identifier: GPL-3.0-or-later
// Relative comparison of doubles for the core's hand-computed test oracles.
#pragma once

#include <QTest>

#include <algorithm>
#include <cmath>

namespace paralens::testing {

/// |a − b| within `rel` of the larger magnitude (exact zeros compare equal).
inline bool close(double a, double b, double rel = 1e-9)
{
    return std::fabs(a - b) <= rel * std::max(std::fabs(a), std::fabs(b)) + 1e-300;
}

} // namespace paralens::testing

#define QVERIFY_CLOSE(a, b, rel)                                                                   \
    QVERIFY2(                                                                                      \
        paralens::testing::close((a), (b), (rel)),                                                 \
        qPrintable(                                                                                \
            QString("%1 = %2, expected %3").arg(#a).arg((a), 0, 'g', 17).arg((b), 0, 'g', 17)))
