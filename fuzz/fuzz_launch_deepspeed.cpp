// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: the DeepSpeed JSON config reader on arbitrary text, alone (the model from
// --model) and as the file a Megatron-DeepSpeed launch script names.
#include "core/launch_import_detail.h"
#include "fuzz_launch_check.h"

#include <cstdint>
#include <string>

using namespace paralens;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string text(reinterpret_cast<const char*>(data), size);
    fuzzcheck::guarded([&] {
        std::vector<std::string> notes;
        const LaunchImportOptions options{"llama3-8b", ""};
        launch::ImportContext ctx{"fuzz.json", options, PresetLibrary::builtin(), {}, notes, {}};
        return launch::importDeepSpeedJson(text, ctx);
    });
    fuzzcheck::guarded([&] {
        const std::string script = "deepspeed --num_nodes 1 --num_gpus 8 pretrain_gpt.py "
                                   "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
                                   "--ffn-hidden-size 11008 --swiglu --seq-length 4096 "
                                   "--vocab-size 31999 --tokenizer-type NullTokenizer "
                                   "--deepspeed --deepspeed_config ds.json";
        return importLaunch(script, "fuzz.sh", {}, PresetLibrary::builtin(),
                            [&](const std::string&) { return text; });
    });
    return 0;
}
