// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "app/evaluator.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace paralens {

class ChartView;

/// What the PDF report shows: the current evaluation, the pinned baseline when comparing, and
/// the charts (drawn as exported, without on-screen selections).
struct ReportContent
{
    Evaluation current;
    std::optional<Evaluation> baseline;
    QList<ChartView*> charts;
};

/// Where an evaluation's collective and GEMM figures come from, in one line: the profile's
/// file name when it was used, why it was not, or the datasheet.
QString calibrationSource(const Evaluation& e);

/// Writes one PDF (A4 landscape): the scenario, the headline figures (with the baseline and
/// the change from it when comparing), the warnings, the calibration source, the memory of
/// every pipeline stage, then one chart per page. False with `error` set when it cannot.
/// `text`, when given, receives every line of text written (table rows tab-separated).
bool exportReport(const QString& path, const ReportContent& content, QString* error,
                  QStringList* text = nullptr);

} // namespace paralens
