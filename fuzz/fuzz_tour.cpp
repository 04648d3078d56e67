// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: parseTour on arbitrary text. Any input either parses or throws InputError
// with a message; anything else (crash, other exception, sanitizer report) is a bug. A parsed
// tour has at least one step, every step's scenario passes validate(), and a short tour runs:
// each caption fills or throws InputError, each expect check gives a sentence per failure.

#include "core/error.h"
#include "core/tour.h"
#include "core/validate.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>

using namespace paralens;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    Tour tour;
    try {
        tour = parseTour(text, "fuzz.paralens-tour.json");
    } catch (const InputError& e) {
        if (std::string_view(e.what()).empty())
            std::abort(); // every refusal names the problem
        return 0;
    }
    if (tour.steps.empty())
        std::abort();
    for (const TourStep& step : tour.steps)
        if (!validate(step.scenario).empty())
            std::abort(); // the reader lets no plan through that cannot run
    // Evaluating is the model's work (fuzz_estimate covers it); a few steps keep runs fast.
    if (tour.steps.size() > 4)
        return 0;
    try {
        for (const TourStepResult& r : runTour(tour))
            for (const std::string& f : r.failures)
                if (f.empty())
                    std::abort();
    } catch (const InputError& e) {
        if (std::string_view(e.what()).empty())
            std::abort();
    }
    return 0;
}
