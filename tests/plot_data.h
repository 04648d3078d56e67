// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The points a QCustomPlot graph holds, for tests that compare a chart with core's numbers.
#include <QVector>
#include <qcustomplot.h>

namespace paralens::testplot {

inline QVector<double> keys(QCPGraph* g)
{
    QVector<double> v;
    for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it)
        v << it->key;
    return v;
}

inline QVector<double> values(QCPGraph* g)
{
    QVector<double> v;
    for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it)
        v << it->value;
    return v;
}

} // namespace paralens::testplot
