// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: importHfConfig on arbitrary text (a Hugging Face config.json someone
// imports). It either returns a model whose preset loads back to the same spec and whose
// counts are finite, or throws InputError with a message; nothing else.

#include "core/error.h"
#include "core/hf_config.h"
#include "core/params.h"
#include "core/presets.h"
#include "core/spec_io.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

using namespace paralens;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    (void)looksLikeHfConfig(text); // must never throw
    HfImport imp;
    try {
        imp = importHfConfig(text, "fuzz.json");
    } catch (const InputError& e) {
        if (std::string_view(e.what()).empty())
            std::abort();
        return 0;
    }
    const ModelSpec& m = imp.model;
    if (m.layers < 1 || m.hidden < 1 || m.heads < 1 || m.kv_heads < 1 || m.vocab < 1 ||
        m.heads % m.kv_heads != 0)
        std::abort(); // the importer promised a usable shape
    const double total = totalParameters(m), active = activeParameters(m);
    if (!std::isfinite(total) || !std::isfinite(active) || active > total * (1 + 1e-12) ||
        active <= 0)
        std::abort();
    // The preset it writes must load, to the same spec.
    PresetLibrary lib;
    try {
        lib.addText(hfPresetJson(imp, "fuzzed", "fuzz.json").dump(), "fuzzed.json");
    } catch (const InputError&) {
        std::abort();
    }
    if (!(*lib.model("fuzzed") == m))
        std::abort();
    return 0;
}
