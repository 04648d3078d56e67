// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/hf_config.h"
#include "core/presets.h"

#include <QString>

namespace paralens {

/// A Hugging Face config.json turned into a model preset file (import-model, File ▸ Import
/// Model…, a dropped config.json).
struct ModelImport
{
    HfImport imported;
    QString id;
    QString text; ///< the preset file, JSON
};

/// The preset id when none is given: from `_name_or_path`, else the file's name unless it is
/// config.json, else its folder's name unless that is a snapshot hash, else the family.
QString defaultPresetId(const HfImport& imp, const QString& configPath);

/// Reads the config.json at `configPath` and builds its preset under `id` (defaultPresetId()
/// when empty); the model is named like the default id, in its own spelling. The preset is loaded
/// into a copy of `library` before it is returned, so a malformed one or an id that exists there is
/// an InputError, as is anything wrong in the file.
ModelImport importModelPreset(const QString& configPath, const QString& id,
                              const PresetLibrary& library);

/// `id`, or `id-2`, `id-3`, ... : the first that neither `library` has nor `folder` holds a
/// file for.
QString freePresetId(const QString& id, const PresetLibrary& library, const QString& folder);

/// Writes `text` to `path` atomically (QSaveFile), creating the folder. Returns "" on success,
/// else the reason.
QString writePresetFile(const QString& path, const QString& text);

} // namespace paralens
