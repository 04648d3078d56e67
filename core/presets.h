// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/cluster_spec.h"
#include "core/model_spec.h"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace paralens {

/// Model and hardware presets: the built-in ones (compiled in from resources/presets) plus
/// any the user adds from folders. A user preset may not reuse a built-in id.
class PresetLibrary
{
public:
    /// Loads the built-in presets. Throws InputError if a built-in file is broken (a bug).
    PresetLibrary();

    /// The built-in presets, parsed once.
    static const PresetLibrary& builtin();

    /// Adds every *.json under dir (models and hardware). Throws InputError naming the file
    /// for a malformed preset or an id that already exists.
    void addFolder(const std::string& dir);
    /// Adds one preset from JSON text; `file` names it in errors. Same rules as addFolder.
    void addText(std::string_view text, const std::string& file, bool builtin = false);

    const ModelSpec* model(std::string_view id) const;
    const ClusterSpec* hardware(std::string_view id) const;
    std::vector<std::string> modelIds() const;
    std::vector<std::string> hardwareIds() const;
    /// Where a preset's figures come from ("source" of the preset file), for display.
    std::string source(std::string_view id) const;
    bool isBuiltin(std::string_view id) const;

private:
    struct Entry
    {
        std::string source;
        bool builtin = true;
        std::string file; ///< where it was loaded from ("resources/presets/..." when built in)
        bool is_model = true;
    };
    std::map<std::string, ModelSpec, std::less<>> m_models;
    std::map<std::string, ClusterSpec, std::less<>> m_hardware;
    std::map<std::string, Entry, std::less<>> m_entries;
};

} // namespace paralens
