// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: the Megatron-LM / Megatron-DeepSpeed launch-script reader (shell words,
// --flags, MoE layer patterns) and the Megatron-Bridge run_recipe.py reader (section.field=value
// overrides, MLA widths) on arbitrary text; a --deepspeed_config it names reads as a missing
// file.
#include "core/launch_import_detail.h"
#include "fuzz_launch_check.h"

#include <cstdint>

using namespace paralens;

namespace {

// One reader on the text, with no sibling files and the built-in presets.
void importOnce(std::string_view text,
                LaunchImport (*read)(std::string_view, launch::ImportContext&))
{
    fuzzcheck::guarded([&] {
        std::vector<std::string> notes;
        const LaunchImportOptions options;
        const SiblingReader none = [](const std::string& name) -> std::string {
            throw InputError("", name + ": not here");
        };
        launch::ImportContext ctx{
            "fuzz.sh", options, PresetLibrary::builtin(), launch::readHeaderIds(text), notes, none};
        return read(text, ctx);
    });
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    importOnce(text, launch::importMegatronScript);
    importOnce(text, launch::importBridgeScript);
    return 0;
}
