// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/estimate.h"
#include "core/scenario.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

// The live figures a tour caption cites as {name} and an `expect` check bounds
// (docs/tour-format.md lists them). A figure's value is in the unit its placeholder prints:
// GiB, seconds, percent, tokens/s, or a plain count.
namespace paralens::tour {

/// One evaluated step, as the figures see it.
struct StepFigures
{
    const Scenario* scenario = nullptr;
    const Estimate* estimate = nullptr;
};

/// Every figure name, in the documented order.
std::vector<std::string> figureNames();
bool isFigure(std::string_view name);
/// Whether the figure is a number (every figure but fits, model, hardware and schedule), so an
/// `expect` range can bound it.
bool isNumericFigure(std::string_view name);
/// The figure's value in its printed unit; nullopt for a name that is not a numeric figure.
std::optional<double> figureValue(std::string_view name, const StepFigures& step);
/// The figure as the caption prints it ("62.4 GiB", "41.3 %", "TP 8" is written by the author).
/// Throws InputError("", "{name}: ...") when the value is not finite.
std::string figureText(std::string_view name, const StepFigures& step);

/// Checks a caption's placeholders without evaluating anything: each `{name}`, `{prev.name}`
/// (the step before) or `{stepN.name}` (an earlier step, counted from 1) must name a figure and
/// a step before this one, the step_index-th (0-based); `{{` and `}}` are literal braces.
/// Throws InputError("", message) naming the first bad placeholder.
void checkCaption(std::string_view caption, std::size_t step_index);
/// The caption with every placeholder replaced; `earlier` holds the steps before this one, in
/// order. Throws InputError as checkCaption() and figureText() do.
std::string fillCaption(std::string_view caption, const StepFigures& step,
                        const std::vector<StepFigures>& earlier);

} // namespace paralens::tour
