// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: parseRunsText (the measured-runs file) on arbitrary text. Any input either
// parses or throws InputError naming the file; a parsed set goes through validateRuns.
// Inputs whose runs name a scenario "path" are skipped: they would make the fuzzer read files
// of the machine it runs on (tests/core/test_runs_io.cpp covers that branch).

#include "core/error.h"
#include "core/json_reader.h"
#include "fuzz_accuracy_check.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>

using namespace paralens;

namespace {

bool namesAPath(std::string_view text)
{
    try {
        const nlohmann::json j = jsonio::parseText(text, "fuzz");
        if (!j.is_object() || !j.contains("runs") || !j["runs"].is_array())
            return false;
        for (const auto& r : j["runs"])
            if (r.is_object() && r.contains("path"))
                return true;
    } catch (const InputError&) {
    }
    return false;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    if (namesAPath(text))
        return 0;
    RunSet set;
    try {
        set = parseRunsText(text, "fuzz.paralens-runs.json", "/nonexistent-fuzz-dir",
                            PresetLibrary::builtin());
    } catch (const InputError& e) {
        if (std::string_view(e.what()).rfind("fuzz.paralens-runs.json", 0) != 0)
            std::abort(); // every refusal names the file
        return 0;
    }
    if (set.runs.empty())
        std::abort(); // documented: an empty list is an error
    fuzzcheck::checkReport(set);
    return 0;
}
