// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/estimate.h"
#include "core/pipeline_cost.h"
#include "core/scenario.h"

#include <QList>
#include <QPalette>
#include <QRect>
#include <QSize>
#include <QString>

#include <memory>
#include <optional>

class QCPPainter;

namespace paralens {

class ChartView;
struct Evaluation;

enum class ExportFormat
{
    Png,
    Svg,
    Pdf
};

/// The format a file name asks for (by suffix, case-insensitive); nullopt for others.
std::optional<ExportFormat> exportFormatFor(const QString& path);

/// Size of an exported chart in pixels at 96 dpi (a PDF page is size × 0.75 points);
/// a PNG is size × scale pixels.
struct ExportOptions
{
    QSize size{1200, 800};
    double scale = 1.0;
};

/// One line naming the scenario for the stamp under every export:
/// "llama3-70b · 64 × h100-sxm · TP 8 · PP 4 · DP 2 · ...".
QString scenarioStamp(const Scenario& s);

/// Writes one chart (PNG, SVG or PDF by suffix) with the scenario stamp under it. This is the
/// single export path of the menu, the context menus and `paralens export`.
bool exportChart(ChartView* view, const QString& path, const ExportOptions& options,
                 const QString& stamp, QString* error);

/// Draws `view` into `target` (logical pixels) as exports show it (at the target's size,
/// without on-screen selections), with the stamp line under it; the view's on-screen
/// layout comes back afterwards. The one drawing path of chart exports and the report.
void paintChart(ChartView* view, QCPPainter* painter, const QRect& target, const QString& stamp,
                const QPalette& palette);

/// Writes the simulated schedule as Chrome trace-event JSON (Perfetto, chrome://tracing)
/// atomically (QSaveFile); false with `error` set when it cannot.
bool exportTrace(const PipelineTimeline& timeline, const QString& path, QString* error);

/// The chart ids `paralens export --chart` accepts.
QStringList chartIds();

/// Builds a view by id ("memory", "breakdown", "topology") filled from an evaluation; nullptr
/// and `error` set for an unknown id or a chart that does not exist yet.
std::unique_ptr<ChartView> makeChart(const QString& id, const Evaluation& evaluation,
                                     QString* error);

} // namespace paralens
