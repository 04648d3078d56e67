// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/presets.h"
#include "core/scenario.h"

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

namespace paralens {

/// Parses scenario JSON text (docs/scenario-format.md). Throws InputError: malformed JSON names
/// `source`, line and column; unknown keys, wrong types and out-of-bound values name the key.
/// Omitted keys take the documented defaults. Does not check the plan (see validate.h).
Scenario parseScenario(std::string_view text, const std::string& source,
                       const PresetLibrary& presets = PresetLibrary::builtin());

/// Reads and parses a scenario file. Throws InputError when it cannot be read.
Scenario loadScenarioFile(const std::string& path,
                          const PresetLibrary& presets = PresetLibrary::builtin());

Scenario scenarioFromJson(const nlohmann::json& j,
                          const PresetLibrary& presets = PresetLibrary::builtin());
/// The normalised scenario: every key written (training.overlap_grad_reduce and calibration
/// only when they differ from the default); model/hardware as the preset id when
/// model_id/hardware_id is set (clear the id when the spec is edited), else as an object.
nlohmann::json scenarioToJson(const Scenario& s);
/// Pretty-printed JSON text, ready to be written to a `.paralens.json` file.
std::string scenarioToText(const Scenario& s);

/// Llama-3 70B on 64 H100 SXM with a plan that fits.
Scenario defaultScenario(const PresetLibrary& presets = PresetLibrary::builtin());

/// Field-by-field equality (used by round-trip tests and the document's dirty check).
bool operator==(const ParallelPlan& a, const ParallelPlan& b);
bool operator==(const TrainingSettings& a, const TrainingSettings& b);
bool operator==(const Scenario& a, const Scenario& b);

} // namespace paralens
