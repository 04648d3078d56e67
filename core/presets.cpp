// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/presets.h"

#include "core/embedded.h"
#include "core/error.h"
#include "core/input_file.h"
#include "core/json_reader.h"
#include "core/spec_io.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace paralens {
namespace {

using nlohmann::json;

bool validId(const std::string& id)
{
    if (id.empty() || id.size() > 64)
        return false;
    const auto ok = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    };
    return std::all_of(id.begin(), id.end(), ok) && id.front() != '-' && id.front() != '.';
}

struct Parsed
{
    std::string id;
    std::string kind;
    std::string source;
};

// Reads the preset header (id, kind, source, sources); the spec itself is read by
// modelFromJson / clusterFromJson, which allow these keys.
Parsed readHeader(const json& j)
{
    jsonio::ObjectReader r(j, "");
    Parsed p;
    r.require("id");
    r.require("kind");
    r.require("source");
    r.readString("id", p.id);
    r.readString("kind", p.kind);
    r.readString("source", p.source);
    if (!validId(p.id))
        r.badValue("id", "'" + p.id +
                             "' is not a valid preset id (lowercase letters, digits, '-', '_', "
                             "'.'; at most 64 characters)");
    if (p.kind != "model" && p.kind != "hardware")
        r.badValue("kind", "'" + p.kind + "' is not one of model, hardware");
    if (const json* s = r.child("sources")) {
        if (!s->is_object())
            r.badValue("sources",
                       "expected an object mapping field to citation, got " + jsonio::typeName(*s));
        for (const auto& [k, v] : s->items())
            if (!v.is_string())
                r.badValue("sources." + k, "expected a string, got " + jsonio::typeName(v));
    }
    if (const json* n = r.child("notes"); n && !n->is_string())
        r.badValue("notes", "expected a string, got " + jsonio::typeName(*n));
    return p;
}

} // namespace

PresetLibrary::PresetLibrary()
{
    for (const auto& f : embedded::presetFiles()) {
        const std::string path = f.path;
        if (path.size() < 5 || path.compare(path.size() - 5, 5, ".json") != 0)
            continue;
        addText(f.content, "resources/" + path, true);
    }
}

const PresetLibrary& PresetLibrary::builtin()
{
    static const PresetLibrary library;
    return library;
}

void PresetLibrary::addText(std::string_view text, const std::string& file, bool builtin)
{
    const json j = jsonio::parseText(text, file);
    Parsed header;
    ModelSpec model;
    ClusterSpec cluster;
    try {
        header = readHeader(j);
        if (header.kind == "model")
            model = modelFromJson(j, "", true);
        else
            cluster = clusterFromJson(j, "", true);
    } catch (const InputError& e) {
        throw InputError(e.field(), file + ": " + e.what());
    }
    if (const auto it = m_entries.find(header.id); it != m_entries.end()) {
        throw InputError("id", file + ": preset id '" + header.id + "' already exists (" +
                                   (it->second.builtin ? "built-in" : it->second.file) +
                                   "); a user preset may not replace another, choose a new id");
    }
    m_entries[header.id] = Entry{header.source, builtin, file, header.kind == "model"};
    if (header.kind == "model")
        m_models[header.id] = std::move(model);
    else
        m_hardware[header.id] = std::move(cluster);
}

void PresetLibrary::addFolder(const std::string& dir)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        throw InputError("presets", dir + ": not a folder");
    std::vector<fs::path> files;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
        if (it->is_regular_file(ec) && it->path().extension() == ".json")
            files.push_back(it->path());
    }
    if (ec)
        throw InputError("presets", dir + ": cannot list the folder: " + ec.message());
    std::sort(files.begin(), files.end());
    for (const auto& p : files) {
        addText(readInputFile(p.string(), kMaxPresetFileBytes, "preset file", "presets"),
                p.string(), false);
    }
}

const ModelSpec* PresetLibrary::model(std::string_view id) const
{
    const auto it = m_models.find(id);
    return it == m_models.end() ? nullptr : &it->second;
}

const ClusterSpec* PresetLibrary::hardware(std::string_view id) const
{
    const auto it = m_hardware.find(id);
    return it == m_hardware.end() ? nullptr : &it->second;
}

std::vector<std::string> PresetLibrary::modelIds() const
{
    std::vector<std::string> ids;
    for (const auto& [id, spec] : m_models)
        ids.push_back(id);
    return ids;
}

std::vector<std::string> PresetLibrary::hardwareIds() const
{
    std::vector<std::string> ids;
    for (const auto& [id, spec] : m_hardware)
        ids.push_back(id);
    return ids;
}

std::string PresetLibrary::source(std::string_view id) const
{
    const auto it = m_entries.find(id);
    return it == m_entries.end() ? std::string() : it->second.source;
}

bool PresetLibrary::isBuiltin(std::string_view id) const
{
    const auto it = m_entries.find(id);
    return it != m_entries.end() && it->second.builtin;
}

} // namespace paralens
