// SPDX-License-Identifier: GPL-3.0-or-later
// The measured-runs file (`*.paralens-runs.json`, docs/runs-format.md).
#include "core/accuracy.h"

#include "core/error.h"
#include "core/input_file.h"
#include "core/json_reader.h"
#include "core/scenario_io.h"
#include "core/spec_io.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

namespace paralens {
namespace {

using jsonio::ObjectReader;
using nlohmann::json;

constexpr double kMaxStepSeconds = 1e7;      // ~4 months: anything longer is a unit mistake
constexpr double kMaxTokensPerSecond = 1e15; // 10⁶ GPUs at 10⁹ tokens/s each
constexpr const char* kFlopsNames = "full, causal, narayanan-eq3";
constexpr const char* kMemoryNames = "allocated, reserved";

std::optional<MeasuredFlops> parseFlops(std::string_view s)
{
    if (s == "full")
        return MeasuredFlops::Full;
    if (s == "causal")
        return MeasuredFlops::Causal;
    if (s == "narayanan-eq3")
        return MeasuredFlops::NarayananEq3;
    return std::nullopt;
}

std::optional<MemoryKind> parseMemoryKind(std::string_view s)
{
    if (s == "allocated")
        return MemoryKind::Allocated;
    if (s == "reserved")
        return MemoryKind::Reserved;
    return std::nullopt;
}

// The "measured" object: at least one figure, each with the convention it needs.
std::vector<Measurement> readMeasured(const json& j, const std::string& path)
{
    ObjectReader r(j, path);
    std::vector<Measurement> out;
    MeasuredFlops flops = MeasuredFlops::Full;
    MemoryKind memory = MemoryKind::Allocated;
    const bool hasFlops = r.readEnum("flops_convention", flops, parseFlops, kFlopsNames);
    const bool hasMemory = r.readEnum("memory_kind", memory, parseMemoryKind, kMemoryNames);
    const auto add = [&](std::string_view key, RunMetric metric, double max) {
        double v = 0;
        if (r.readDouble(key, v, 0, max, /*min_exclusive=*/true))
            out.push_back({metric, v, flops, memory});
        return r.has(key);
    };
    add("step_seconds", RunMetric::StepSeconds, kMaxStepSeconds);
    add("tokens_per_second", RunMetric::TokensPerSecond, kMaxTokensPerSecond);
    const bool tflops = add("tflops_per_gpu", RunMetric::TflopsPerGpu, bounds::kMaxTflops);
    const bool mfu = add("mfu", RunMetric::Mfu, 1.0);
    const bool mem = add("peak_memory_gib", RunMetric::PeakMemoryGib, bounds::kMaxMemoryGib);
    r.finish();
    // A FLOP rate without its convention is ambiguous by up to a third (causal vs full s²,
    // recompute counted or not); a memory figure without its kind by the allocator's slack.
    if ((tflops || mfu) && !hasFlops)
        r.badValue(tflops ? "tflops_per_gpu" : "mfu",
                   std::string("needs \"flops_convention\" (") + kFlopsNames + ")");
    if (hasFlops && !tflops && !mfu)
        r.badValue("flops_convention", "given without tflops_per_gpu or mfu");
    if (mem && !hasMemory)
        r.badValue("peak_memory_gib", std::string("needs \"memory_kind\" (") + kMemoryNames + ")");
    if (hasMemory && !mem)
        r.badValue("memory_kind", "given without peak_memory_gib");
    if (out.empty())
        throw InputError(path, path + ": no measured figure (give step_seconds, tokens_per_second, "
                                      "tflops_per_gpu, mfu or peak_memory_gib)");
    return out;
}

// Rewrites an error of the scenario reader (keys relative to the scenario) under `prefix`.
[[noreturn]] void rethrowUnder(const InputError& e, const std::string& prefix)
{
    const std::string& f = e.field();
    const std::string what = e.what();
    const std::string field = jsonio::join(prefix, f);
    if (!f.empty() && what.rfind(f + ":", 0) == 0)
        throw InputError(field, prefix + "." + what);
    throw InputError(field, prefix + ": " + what);
}

struct Context
{
    const std::string& file;
    std::filesystem::path base_dir;
    const PresetLibrary& presets;
    std::map<std::string, Scenario> loaded; // scenario files by resolved path
};

Scenario readScenarioRef(const json* inline_scenario, const json* path_value,
                         const std::string& path, Context& cx, ObjectReader& r)
{
    if (inline_scenario && path_value)
        r.badValue("path", "give either \"scenario\" or \"path\", not both");
    if (!inline_scenario && !path_value)
        throw InputError(path, path + ": needs a \"scenario\" object or a \"path\" to a "
                                      ".paralens.json file");
    if (inline_scenario) {
        if (!inline_scenario->is_object())
            r.badValue("scenario", "expected an object, got " + jsonio::typeName(*inline_scenario) +
                                       " (a file is named by \"path\")");
        try {
            return scenarioFromJson(*inline_scenario, cx.presets);
        } catch (const InputError& e) {
            rethrowUnder(e, jsonio::join(path, "scenario"));
        }
    }
    if (!path_value->is_string() || path_value->get<std::string>().empty())
        r.badValue("path", "expected the path of a .paralens.json file (a non-empty string), got " +
                               jsonio::typeName(*path_value));
    std::filesystem::path p(path_value->get<std::string>());
    if (p.is_relative())
        p = cx.base_dir / p;
    const std::string resolved = p.lexically_normal().string();
    if (const auto it = cx.loaded.find(resolved); it != cx.loaded.end())
        return it->second;
    try {
        return cx.loaded[resolved] = loadScenarioFile(resolved, cx.presets);
    } catch (const InputError& e) {
        r.badValue("path", e.what());
    }
}

MeasuredRun readRun(const json& j, const std::string& path, Context& cx, std::string_view text)
{
    ObjectReader r(j, path);
    MeasuredRun run;
    r.require("name");
    r.readString("name", run.name);
    if (run.name.empty())
        r.badValue("name", "must not be empty");
    const json* sc = r.child("scenario");
    const json* pa = r.child("path");
    run.scenario = readScenarioRef(sc, pa, path, cx, r);
    r.require("measured");
    run.measured = readMeasured(*r.child("measured"), jsonio::join(path, "measured"));
    r.readString("source", run.source);
    r.readString("notes", run.notes);
    r.finish();
    const std::string lc = jsonio::locate(text, path);
    run.origin = cx.file + ":" + lc.substr(0, lc.find(':'));
    return run;
}

} // namespace

RunSet parseRunsText(std::string_view text, const std::string& file, const std::string& base_dir,
                     const PresetLibrary& presets)
{
    const json j = jsonio::parseText(text, file);
    RunSet set;
    set.file = file;
    Context cx{file,
               base_dir.empty() ? std::filesystem::path(".") : std::filesystem::path(base_dir),
               presets,
               {}};
    try {
        ObjectReader top(j, "");
        top.require("runs");
        const json& runs = *top.child("runs");
        // A file of one publication names it once; its notes are the set's assumptions.
        std::string fileSource, fileNotes;
        top.readString("source", fileSource);
        top.readString("notes", fileNotes);
        top.finish();
        if (!fileNotes.empty())
            set.assumptions.push_back(fileNotes);
        if (!runs.is_array())
            top.badValue("runs", "expected an array of runs, got " + jsonio::typeName(runs));
        if (runs.empty())
            top.badValue("runs", "the list is empty (a runs file lists at least one run)");
        std::map<std::string, std::string> names; // name -> path of the run that has it
        for (std::size_t i = 0; i < runs.size(); ++i) {
            const std::string path = "runs[" + std::to_string(i) + "]";
            MeasuredRun run = readRun(runs[i], path, cx, text);
            if (run.source.empty())
                run.source = fileSource;
            if (const auto [it, fresh] = names.emplace(run.name, path); !fresh)
                throw InputError(path + ".name", path + ".name: '" + run.name +
                                                     "' is already the name of " + it->second +
                                                     " (names identify runs in the report)");
            set.runs.push_back(std::move(run));
        }
    } catch (const InputError& e) {
        throw InputError(e.field(), file + ":" + jsonio::locate(text, e.field()) + ": " + e.what());
    }
    return set;
}

RunSet readRunsFile(const std::string& path, const PresetLibrary& presets)
{
    const std::string text = readInputFile(path, kMaxRunsFileBytes, "runs file", "");
    return parseRunsText(text, path, std::filesystem::path(path).parent_path().string(), presets);
}

RunsFormat detectRunsFormat(const std::string& path, std::string_view content)
{
    const std::string ext = std::filesystem::path(path).extension().string();
    if (ext == ".csv" || ext == ".CSV")
        return RunsFormat::IterationCsv;
    if (ext == ".json" || ext == ".JSON")
        return RunsFormat::RunsJson;
    const auto first = content.find_first_not_of(" \t\r\n");
    return first != std::string_view::npos && content[first] == '{' ? RunsFormat::RunsJson
                                                                    : RunsFormat::IterationCsv;
}

RunSet readRuns(const std::string& path, const PresetLibrary& presets,
                const Scenario* cluster_template)
{
    const std::string text = readInputFile(path, kMaxRunsFileBytes, "runs file", "");
    if (detectRunsFormat(path, text) == RunsFormat::RunsJson)
        return parseRunsText(text, path, std::filesystem::path(path).parent_path().string(),
                             presets);
    if (!cluster_template)
        throw InputError("hardware", path + ": a measured-iteration CSV does not say which "
                                            "cluster it ran on: give --hardware ID|FILE");
    return parseIterationCsv(text, path, *cluster_template);
}

Scenario hardwareTemplate(const std::string& id_or_file, const PresetLibrary& presets)
{
    Scenario s;
    if (const ClusterSpec* c = presets.hardware(id_or_file)) {
        s.hardware_id = id_or_file;
        s.cluster = *c;
        return s;
    }
    std::error_code ec;
    if (!std::filesystem::exists(id_or_file, ec)) {
        std::string ids;
        for (const auto& id : presets.hardwareIds())
            ids += (ids.empty() ? "" : ", ") + id;
        throw InputError("hardware", "hardware: '" + id_or_file +
                                         "' is neither a hardware preset id (" + ids +
                                         ") nor a file");
    }
    // Read with the preset rules, into a library of its own so that the file's id may repeat
    // one of the user's presets.
    PresetLibrary lib = PresetLibrary::builtin();
    const std::vector<std::string> before = lib.hardwareIds();
    lib.addText(readInputFile(id_or_file, kMaxPresetFileBytes, "hardware file", "hardware"),
                id_or_file);
    for (const auto& id : lib.hardwareIds())
        if (std::find(before.begin(), before.end(), id) == before.end()) {
            s.cluster = *lib.hardware(id); // a custom cluster: scenarios write it in full
            return s;
        }
    throw InputError("hardware", id_or_file + ": a model preset, not a hardware preset");
}

} // namespace paralens
