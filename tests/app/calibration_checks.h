// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Checks that the calibration panel shows a log the way core reads it: every curve's points,
// its fit and its residuals. Shared by the panel's suites (fixtures, and the real logs of the
// extended label).
#include "../plot_data.h"
#include "app/calibrationpanel.h"
#include "core/calibration.h"
#include "core/nccl_log.h"
#include "widgets/calibrationview.h"

#include <QLabel>
#include <QTest>
#include <qcustomplot.h>

#include <cmath>
#include <utility>
#include <vector>

namespace paralens::testcalib {

using paralens::testplot::keys;
using paralens::testplot::values;

inline bool closeTo(double a, double b)
{
    return std::abs(a - b) <= 0.005 * std::abs(b) + 0.01;
}

/// Shows the view's current curve against the log: same sizes, busbw within the log's rounding,
/// fitted curve and residuals from core's fit of that curve.
inline void checkCurve(CalibrationPanel& panel, const std::vector<std::pair<double, double>>& rows)
{
    CalibrationView* v = panel.view();
    const auto& curve = panel.profile().collectives[size_t(v->currentCurve())];
    const auto k = keys(v->measuredGraph());
    const auto b = values(v->measuredGraph());
    QCOMPARE(k.size(), qsizetype(rows.size()));
    for (size_t i = 0; i < rows.size(); ++i) {
        QCOMPARE(k[qsizetype(i)], rows[i].first);
        QVERIFY2(closeTo(b[qsizetype(i)], rows[i].second),
                 qPrintable(QString("size %1: view %2, log %3")
                                .arg(rows[i].first)
                                .arg(b[qsizetype(i)])
                                .arg(rows[i].second)));
    }
    // The residual panel shows core's residuals, point by point.
    const AlphaBetaFit fit = fitAlphaBeta(curve.collective, curve.ranks, curve.points);
    QVERIFY(fit.valid);
    QCOMPARE(values(v->residualGraph()),
             QVector<double>(fit.residual_pct.begin(), fit.residual_pct.end()));
    QCOMPARE(keys(v->residualGraph()), k);
    // The fitted curve: core's α and B_bus; its plateau (S → ∞) is B_bus.
    const double f = busFactor(curve.collective, curve.ranks) > 0
                         ? busFactor(curve.collective, curve.ranks)
                         : 1.0;
    const auto fk = keys(v->fittedGraph());
    const auto fv = values(v->fittedGraph());
    QVERIFY(!fk.isEmpty());
    QCOMPARE(fk.front(), rows.front().first);
    QCOMPARE(fk.back(), rows.back().first);
    for (qsizetype i = 0; i < fk.size(); ++i) {
        const double t = fit.alpha_seconds + fk[i] * f / (fit.busbw_gbps * 1e9);
        QVERIFY(std::abs(fv[i] - fk[i] * f / t / 1e9) <= 1e-9 * fv[i]);
        QVERIFY(fv[i] <= fit.busbw_gbps * (1 + 1e-12));
    }
    QVERIFY(panel.findChild<QLabel*>("calibrationFitLabel")
                ->text()
                .contains(QString::number(fit.busbw_gbps, 'f', 1)));
}

/// Imports the log at `path` into `panel` and checks every curve against the log's tables as
/// the reader gives them (the printed out-of-place busbw column is the oracle).
inline void checkLogInPanel(CalibrationPanel& panel, const QString& path)
{
    QVERIFY2(panel.importFiles({path}), qPrintable(panel.errorText()));
    const auto log = readNcclLog(path.toStdString());
    std::vector<const NcclTable*> used;
    for (const auto& t : log.tables)
        if (t.collective && t.ranks > 0)
            used.push_back(&t);
    QCOMPARE(panel.view()->curveCount(), int(used.size()));
    for (int c = 0; c < panel.view()->curveCount(); ++c) {
        panel.view()->setCurrentCurve(c);
        QCOMPARE(panel.view()->currentCurve(), c);
        std::vector<std::pair<double, double>> rows;
        for (const auto& r : used[size_t(c)]->rows)
            if (r.size_bytes > 0 && r.out_of_place.time_seconds > 0)
                rows.emplace_back(r.size_bytes, r.out_of_place.busbw_gbps);
        checkCurve(panel, rows);
    }
}

} // namespace paralens::testcalib
