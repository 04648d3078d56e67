// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/tour.h"

#include <QString>
#include <QStringList>

#include <vector>

namespace paralens {

/// Writes a tour's handout into `dir` (created when missing), headless: for each step N
/// (01, 02, …) step-NN-memory.png, -breakdown.png, -topology.png, -gantt.png, and
/// step-NN-plan-map.png when the step emphasises the plan map; then handout.pdf, a title page
/// and one page per step (title, caption, headline figures, the emphasised chart), saved
/// atomically. `results` are runTour(tour)'s. Returns false with `error` set when a file
/// cannot be written; `written` receives the paths written.
bool exportTourHandout(const Tour& tour, const std::vector<TourStepResult>& results,
                       const QString& dir, QStringList* written, QString* error);

} // namespace paralens
