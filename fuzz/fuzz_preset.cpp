// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: PresetLibrary::addText on arbitrary text (a user's preset file). It either
// adds a preset or throws InputError naming the problem; the library stays usable either way.

#include "core/error.h"
#include "core/presets.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>

using namespace paralens;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    PresetLibrary lib = PresetLibrary::builtin(); // a copy: parsing the built-ins per input is slow
    const std::size_t models = lib.modelIds().size(), hardware = lib.hardwareIds().size();
    try {
        lib.addText(text, "fuzz.json", false);
    } catch (const InputError& e) {
        if (std::string_view(e.what()).empty())
            std::abort();
        // A refused file adds nothing.
        if (lib.modelIds().size() != models || lib.hardwareIds().size() != hardware)
            std::abort();
        return 0;
    }
    if (lib.modelIds().size() + lib.hardwareIds().size() != models + hardware + 1)
        std::abort(); // one file, one preset
    for (const std::string& id : lib.modelIds())
        if (!lib.model(id))
            std::abort();
    for (const std::string& id : lib.hardwareIds())
        if (!lib.hardware(id))
            std::abort();
    return 0;
}
