// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: the TOML subset reader (core/toml.cpp) and the torchtitan job-config
// reader on arbitrary text.
#include "core/launch_import_detail.h"
#include "core/toml.h"
#include "fuzz_launch_check.h"

#include <cstdint>

using namespace paralens;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        (void)toml::parse(text, "fuzz.toml");
    } catch (const InputError& e) {
        if (std::string_view(e.what()).empty())
            std::abort();
    }
    fuzzcheck::guarded([&] {
        std::vector<std::string> notes;
        const LaunchImportOptions options{"llama3-8b", ""}; // a shape when the file names none
        launch::ImportContext ctx{
            "fuzz.toml", options, PresetLibrary::builtin(), launch::readHeaderIds(text), notes, {}};
        return launch::importTorchtitanToml(text, ctx);
    });
    return 0;
}
