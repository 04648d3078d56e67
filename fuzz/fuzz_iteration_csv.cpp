// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: parseIterationCsv (the measured-iteration CSV) on arbitrary text. Any input
// either parses or throws InputError naming the file; a parsed set goes through validateRuns.

#include "core/error.h"
#include "fuzz_accuracy_check.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>

using namespace paralens;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static const Scenario cluster = hardwareTemplate("a100-80gb", PresetLibrary::builtin());
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    RunSet set;
    try {
        set = parseIterationCsv(text, "fuzz.csv", cluster);
    } catch (const InputError& e) {
        if (std::string_view(e.what()).rfind("fuzz.csv", 0) != 0)
            std::abort(); // every refusal names the file (and the line)
        return 0;
    }
    if (set.runs.empty() || set.assumptions.empty())
        std::abort();
    fuzzcheck::checkReport(set);
    return 0;
}
