// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/tour.h"

#include "core/embedded.h"
#include "core/error.h"
#include "core/evaluate.h"
#include "core/input_file.h"
#include "core/json_reader.h"
#include "core/scenario_io.h"
#include "core/tour_caption.h"
#include "core/validate.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace paralens {
namespace {

using jsonio::ObjectReader;
using nlohmann::json;

/// More steps than any lesson needs; bounds the work a hostile file can ask for.
constexpr std::size_t kMaxTourSteps = 200;
constexpr const char* kTourSuffix = ".paralens-tour.json";

std::string stepPath(std::size_t i)
{
    return "steps[" + std::to_string(i) + "]";
}

/// "step 3 ('Title')": steps are counted from 1, as the presenter's counter shows them.
std::string stepName(std::size_t i, const std::string& title)
{
    std::string s = "step " + std::to_string(i + 1);
    if (!title.empty())
        s += " ('" + title + "')";
    return s;
}

TourExpect readExpect(const json& j, const std::string& path)
{
    if (!j.is_object())
        throw InputError(path, path + ": expected an object, got " + jsonio::typeName(j));
    TourExpect ex;
    for (const auto& [key, value] : j.items()) {
        const std::string at = jsonio::join(path, key);
        if (key == "fits") {
            if (!value.is_boolean())
                throw InputError(at, at + ": expected a boolean, got " + jsonio::typeName(value));
            ex.fits = value.get<bool>();
            continue;
        }
        if (!tour::isNumericFigure(key))
            throw InputError(
                at, at + ": unknown check (fits, or a numeric figure: " + [] {
                    std::string s;
                    for (const auto& n : tour::figureNames())
                        if (tour::isNumericFigure(n))
                            s += (s.empty() ? "" : ", ") + n;
                    return s;
                }() + ")");
        if (!value.is_array() || value.size() != 2 || !value[0].is_number() ||
            !value[1].is_number())
            throw InputError(at, at + ": expected a range [lo, hi] of two numbers, got " +
                                     jsonio::typeName(value));
        const double lo = value[0].get<double>();
        const double hi = value[1].get<double>();
        if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi)
            throw InputError(at, at + ": the range [" + jsonio::number(lo) + ", " +
                                     jsonio::number(hi) + "] must have lo <= hi");
        ex.ranges.push_back({key, lo, hi});
    }
    return ex;
}

/// The scenario document of step i: the first step's `scenario`, or the previous document with
/// the `patch` merged in. Throws with the step's key path as the field.
json stepDocument(ObjectReader& r, std::size_t i, const json* previous)
{
    const std::string path = stepPath(i);
    const json* whole = r.child("scenario");
    const json* patch = r.child("patch");
    if (whole && patch)
        throw InputError(path, path + ": give either scenario or patch, not both");
    if (!whole && !patch)
        throw InputError(path, path + (i == 0 ? ": the first step needs a scenario"
                                              : ": needs a scenario or a patch"));
    if (whole) {
        if (!whole->is_object())
            throw InputError(path + ".scenario", path + ".scenario: expected an object, got " +
                                                     jsonio::typeName(*whole));
        return *whole;
    }
    if (!previous)
        throw InputError(path + ".patch",
                         path + ".patch: the first step has no scenario to patch; give scenario");
    if (!patch->is_object())
        throw InputError(path + ".patch", path +
                                              ".patch: expected an object (a JSON merge "
                                              "patch, RFC 7396), got " +
                                              jsonio::typeName(*patch));
    json doc = *previous;
    doc.merge_patch(*patch);
    return doc;
}

/// Reads the scenario document; errors name the key inside the step's scenario or patch.
Scenario stepScenario(const json& doc, const std::string& base, const PresetLibrary& presets)
{
    Scenario s;
    try {
        s = scenarioFromJson(doc, presets);
    } catch (const InputError& e) {
        throw InputError(jsonio::join(base, e.field()), e.what());
    }
    if (!s.calibration.empty())
        throw InputError(base + ".calibration",
                         "calibration: a tour shows the datasheet model; remove the profile");
    const std::vector<ValidationError> errors = validate(s);
    if (!errors.empty()) {
        const ValidationError& v = errors.front();
        const std::string field = v.fields.empty() ? base : jsonio::join(base, v.fields.front());
        throw InputError(field, "the plan cannot run: " + v.message);
    }
    return s;
}

TourStep readStep(const json& j, std::size_t i, json& document, const PresetLibrary& presets)
{
    const std::string path = stepPath(i);
    ObjectReader r(j, path);
    TourStep step;
    r.require("title");
    r.readString("title", step.title);
    try {
        r.require("caption");
        r.readString("caption", step.caption);
        const bool had_previous = !document.is_null();
        json doc = stepDocument(r, i, had_previous ? &document : nullptr);
        step.patched = r.has("patch");
        step.scenario = stepScenario(doc, path + (step.patched ? ".patch" : ".scenario"), presets);
        document = std::move(doc);
        r.readEnum("view", step.view, parseTourView,
                   "memory, gantt, breakdown, topology, plan-map");
        if (const json* ex = r.child("expect"))
            step.expect = readExpect(*ex, path + ".expect");
        try {
            tour::checkCaption(step.caption, i);
        } catch (const InputError& e) {
            throw InputError(path + ".caption", std::string("caption: ") + e.what());
        }
        r.finish();
    } catch (const InputError& e) {
        throw InputError(e.field(), stepName(i, step.title) + ": " + e.what());
    }
    return step;
}

std::string errorAt(std::string_view text, const std::string& source, const InputError& e)
{
    return source + ":" + jsonio::locate(text, e.field()) + ": " + e.what();
}

} // namespace

std::string_view toString(TourView v)
{
    switch (v) {
    case TourView::Memory:
        return "memory";
    case TourView::Gantt:
        return "gantt";
    case TourView::Breakdown:
        return "breakdown";
    case TourView::Topology:
        return "topology";
    case TourView::PlanMap:
        return "plan-map";
    }
    return "memory";
}

std::optional<TourView> parseTourView(std::string_view s)
{
    for (TourView v : {TourView::Memory, TourView::Gantt, TourView::Breakdown, TourView::Topology,
                       TourView::PlanMap})
        if (s == toString(v))
            return v;
    return std::nullopt;
}

Tour parseTour(std::string_view text, const std::string& source, const PresetLibrary& presets)
{
    const json j = jsonio::parseText(text, source);
    Tour tour;
    tour.source = source;
    try {
        ObjectReader r(j, "");
        r.require("title");
        r.readString("title", tour.title);
        r.readString("description", tour.description);
        r.require("steps");
        const json* steps = r.child("steps");
        if (!steps->is_array() || steps->empty())
            throw InputError("steps", "steps: expected a non-empty array of steps, got " +
                                          jsonio::typeName(*steps));
        if (steps->size() > kMaxTourSteps)
            throw InputError("steps", "steps: " + std::to_string(steps->size()) +
                                          " steps; a tour holds at most " +
                                          std::to_string(kMaxTourSteps));
        r.finish();
        json document; // the previous step's scenario document (null before the first)
        for (std::size_t i = 0; i < steps->size(); ++i) {
            TourStep step = readStep((*steps)[i], i, document, presets);
            step.line = std::stoi(jsonio::locate(text, stepPath(i)));
            tour.steps.push_back(std::move(step));
        }
    } catch (const InputError& e) {
        throw InputError(e.field(), errorAt(text, source, e));
    }
    return tour;
}

Tour loadTourFile(const std::string& path, const PresetLibrary& presets)
{
    return parseTour(readInputFile(path, kMaxTourFileBytes, "tour file", ""), path, presets);
}

std::vector<std::string> checkExpect(const TourExpect& expect, const Scenario& s, const Estimate& e)
{
    std::vector<std::string> failures;
    if (expect.fits && *expect.fits != e.fits)
        failures.push_back(std::string("fits = ") + (e.fits ? "true" : "false") + ", expected " +
                           (*expect.fits ? "true" : "false"));
    const tour::StepFigures figures{&s, &e};
    for (const TourRange& r : expect.ranges) {
        const double v = tour::figureValue(r.figure, figures).value_or(std::nan(""));
        if (!(v >= r.lo && v <= r.hi)) // a NaN fails too
            failures.push_back(r.figure + " = " + jsonio::number(v) + ", expected " +
                               jsonio::number(r.lo) + ".." + jsonio::number(r.hi));
    }
    return failures;
}

std::vector<TourStepResult> runTour(const Tour& tour)
{
    std::vector<TourStepResult> results(tour.steps.size());
    for (std::size_t i = 0; i < tour.steps.size(); ++i) {
        const TourStep& step = tour.steps[i];
        TourStepResult& r = results[i];
        evaluate(step.scenario, r.estimate);
        r.failures = checkExpect(step.expect, step.scenario, r.estimate);
        const tour::StepFigures now{&step.scenario, &r.estimate};
        std::vector<tour::StepFigures> earlier;
        for (std::size_t k = 0; k < i; ++k)
            earlier.push_back({&tour.steps[k].scenario, &results[k].estimate});
        try {
            r.caption = tour::fillCaption(step.caption, now, earlier);
        } catch (const InputError& e) {
            throw InputError("steps[" + std::to_string(i) + "].caption",
                             tour.source + ": " + stepName(i, step.title) +
                                 ": caption: " + e.what());
        }
    }
    return results;
}

std::vector<BundledTour> bundledTours()
{
    std::vector<BundledTour> tours;
    const std::string suffix = kTourSuffix;
    for (const auto& f : embedded::tourFiles()) {
        std::string id = f.path;
        id = id.substr(id.find_last_of('/') + 1);
        if (id.size() > suffix.size() &&
            id.compare(id.size() - suffix.size(), suffix.size(), suffix) == 0)
            id.resize(id.size() - suffix.size());
        tours.push_back({id, f.content});
    }
    std::sort(tours.begin(), tours.end(),
              [](const BundledTour& a, const BundledTour& b) { return a.id < b.id; });
    return tours;
}

} // namespace paralens
