// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/estimate.h"
#include "core/presets.h"
#include "core/scenario.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace paralens {

/// The chart a tour step puts in front (docs/tour-format.md, "view").
enum class TourView
{
    Memory,
    Gantt,
    Breakdown,
    Topology,
    PlanMap
};
std::string_view toString(TourView v); ///< "memory", "gantt", "breakdown", "topology", "plan-map"
std::optional<TourView> parseTourView(std::string_view s);

/// One `expect` bound: the figure (tour_caption.h) must lie in [lo, hi], in its printed unit.
struct TourRange
{
    std::string figure;
    double lo = 0;
    double hi = 0;
};

struct TourExpect
{
    std::optional<bool> fits;
    std::vector<TourRange> ranges; ///< sorted by figure name
    bool empty() const { return !fits && ranges.empty(); }
};

struct TourStep
{
    std::string title;
    std::string caption; ///< with its {placeholders}, checked at load time
    Scenario scenario;   ///< whole, after the step's patch; validate() passed
    bool patched = false;
    TourView view = TourView::Memory;
    TourExpect expect;
    int line = 0; ///< line of the step in the file (1-based)
};

struct Tour
{
    std::string source; ///< the file name, for messages
    std::string title;
    std::string description;
    std::vector<TourStep> steps;
};

/// Parses tour JSON text (docs/tour-format.md). Each step's scenario is the first step's
/// `scenario`, or the previous step's scenario document with the step's `patch` merged in
/// (RFC 7396); it is read with the scenario reader and must pass validate(). Throws InputError
/// "SOURCE:LINE:COL: step N ('title'): ..." for malformed JSON, unknown keys, a bad patch, a
/// scenario that cannot run, an unknown placeholder or a bad expect check.
Tour parseTour(std::string_view text, const std::string& source,
               const PresetLibrary& presets = PresetLibrary::builtin());
/// Reads and parses a tour file (at most kMaxTourFileBytes).
Tour loadTourFile(const std::string& path, const PresetLibrary& presets = PresetLibrary::builtin());

/// A step on the live model: its estimate, its caption filled and what its checks found.
struct TourStepResult
{
    Estimate estimate;
    std::string caption;
    std::vector<std::string> failures; ///< one sentence per expect check that failed
};

/// One failure sentence per broken bound of `expect` ("mfu = 38.2 %, expected 40..46").
std::vector<std::string> checkExpect(const TourExpect& expect, const Scenario& s,
                                     const Estimate& e);
/// Evaluates every step (no calibration profile: a lesson shows the datasheet model) and
/// fills its caption. Throws InputError "SOURCE: step N ('title'): caption: ..." when a figure
/// has no value.
std::vector<TourStepResult> runTour(const Tour& tour);

/// The tours compiled in from resources/tours/: id (file name without .paralens-tour.json)
/// and text, sorted by id.
struct BundledTour
{
    std::string id;
    std::string text;
};
std::vector<BundledTour> bundledTours();

} // namespace paralens
