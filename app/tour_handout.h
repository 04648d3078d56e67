// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/tour.h"

#include <QString>
#include <QStringList>

#include <vector>

namespace paralens {

struct TourHandoutOptions
{
    /// Also write each page of handout.pdf as a PNG (handout-title.png, handout-step-NN.png),
    /// drawn by the same code as the PDF page, so that a handout can be looked at without a
    /// PDF viewer.
    bool pageImages = false;
    /// Search threads per plan-map cell (0 = all cores).
    unsigned planMapThreads = 2;
};

/// Writes a tour's handout into `dir` (created when missing), headless: for each step N
/// (01, 02, …) step-NN-memory.png, -breakdown.png, -topology.png, -gantt.png, and
/// step-NN-plan-map.png (the plan map's heat map, the step's plan outlined) when the step
/// emphasises the plan map; then handout.pdf, a title page and one page per step (title,
/// caption, headline figures, the emphasised chart), and with `pageImages` each page as PNG,
/// every file saved atomically. `results` are runTour(tour)'s. Returns false with `error` set
/// when a file cannot be written or a plan map cannot be drawn; `written` receives the paths
/// written.
bool exportTourHandout(const Tour& tour, const std::vector<TourStepResult>& results,
                       const QString& dir, QStringList* written, QString* error,
                       const TourHandoutOptions& options = {});

} // namespace paralens
