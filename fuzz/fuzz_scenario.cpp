// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: parseScenario on arbitrary text. Any input either parses or throws
// InputError with a message; anything else (crash, other exception, sanitizer report) is a bug.
// A parsed scenario must survive validate(), a save/parse round trip and compare equal.

#include "core/error.h"
#include "core/scenario_io.h"
#include "core/validate.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

using namespace paralens;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    Scenario s;
    try {
        s = parseScenario(text, "fuzz.paralens.json");
    } catch (const InputError& e) {
        if (std::string_view(e.what()).empty())
            std::abort(); // every refusal names the problem
        return 0;
    }
    for (const ValidationError& v : validate(s))
        if (v.rule.empty() || v.fields.empty() || v.message.empty())
            std::abort();
    (void)isRunnable(s);
    // What we write we can read back, unchanged.
    const std::string saved = scenarioToText(s);
    Scenario again;
    try {
        again = parseScenario(saved, "round-trip");
    } catch (const InputError& e) {
        std::fprintf(stderr, "round trip refused: %s\n%s\n", e.what(), saved.c_str());
        std::abort();
    }
    if (!(again == s)) {
        std::fprintf(stderr, "round trip changed the scenario:\n%s\n", saved.c_str());
        std::abort();
    }
    return 0;
}
