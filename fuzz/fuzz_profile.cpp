// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: the calibration-profile reader (parseProfile) on arbitrary text. A profile
// that parses is refitted, written and read back, and queried as MeasuredPerformance: every
// answer must be a finite, non-negative number.

#include "core/calibration.h"
#include "core/error.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

using namespace paralens;

namespace {
void checkAnswer(const std::optional<double>& v)
{
    if (v && (!std::isfinite(*v) || *v < 0))
        std::abort();
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    CalibrationProfile p;
    try {
        p = parseProfile(text, "fuzz-profile.json");
    } catch (const InputError& e) {
        if (std::string_view(e.what()).empty())
            std::abort();
        return 0;
    }
    refit(p);
    try {
        (void)parseProfile(profileToText(p), "round-trip");
    } catch (const InputError&) {
        std::abort(); // what we write we must read
    }
    const CalibratedPerformance perf(p, 989, 1979);
    for (Collective c : {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter,
                         Collective::AllToAll, Collective::SendRecv, Collective::Broadcast})
        for (int ranks : {1, 2, 8, 64})
            for (Span span : {Span::ScaleUp, Span::ScaleOut})
                for (double bytes : {0.0, 1.0, 1e6, 1e10})
                    checkAnswer(perf.collectiveSeconds(c, ranks, span, bytes));
    checkAnswer(perf.gemmEfficiency(4096, 4096, 4096, false));
    checkAnswer(perf.gemmEfficiency(1, 1e6, 8, true));
    checkAnswer(perf.hbmGbps());
    return 0;
}
