// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: the nccl-tests log reader (parseNcclLog) on arbitrary text, then the
// calibration built from what it read: curves, fits and the profile writer.

#include "core/calibration.h"
#include "core/error.h"
#include "core/nccl_log.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

using namespace paralens;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    (void)looksLikeNcclLog(text);
    NcclLogResult log;
    try {
        log = parseNcclLog(text);
    } catch (const InputError& e) {
        if (std::string_view(e.what()).empty())
            std::abort();
        return 0;
    }
    if (log.tables.empty())
        std::abort(); // documented: no table is an error
    for (const NcclTable& t : log.tables)
        for (const NcclRow& r : t.rows)
            if (!std::isfinite(r.size_bytes) || r.size_bytes < 0 ||
                !std::isfinite(r.out_of_place.time_seconds) || r.out_of_place.time_seconds < 0)
                std::abort();
    CalibrationProfile p;
    try {
        addNcclLog(p, log, "fuzz.log");
    } catch (const InputError&) {
        return 0;
    }
    for (const CollectiveCurve& c : p.collectives) {
        if (c.fit.valid && (!std::isfinite(c.fit.alpha_seconds) || c.fit.alpha_seconds < 0 ||
                            !std::isfinite(c.fit.busbw_gbps) || c.fit.busbw_gbps < 0))
            std::abort();
        if (auto t = c.seconds(1 << 20); t && (!std::isfinite(*t) || *t < 0))
            std::abort();
    }
    try {
        (void)parseProfile(profileToText(p), "round-trip");
    } catch (const InputError&) {
        std::abort();
    }
    return 0;
}
