// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Core's messages name scenario fields by their JSON keys ("parallel.tp × parallel.pp"), which
// is right on the command line, where the user writes that JSON. On screen the same fields
// carry the labels of the controls ("TP × PP"): this is the one table between the two.
#include <QString>

#include <string_view>

namespace paralens {

/// The on-screen label of a scenario field's JSON key ("parallel.virtual_stages" →
/// "virtual stages"); an unknown key loses its section prefix and underscores.
QString fieldLabel(std::string_view key);

/// `message` with every JSON key of a scenario field replaced by its label.
QString withFieldLabels(const QString& message);
QString withFieldLabels(std::string_view message);

} // namespace paralens
