// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/scenario.h"

#include <string>
#include <vector>

namespace paralens {

/// One broken rule: `rule` is a stable id ("tp_divides_heads"), `fields` the JSON paths
/// involved ("parallel.tp", "model.heads"), `message` the sentence shown to the user.
struct ValidationError
{
    std::string rule;
    std::vector<std::string> fields;
    std::string message;
};

/// Every rule the scenario breaks, in a stable order; empty when the plan can run.
std::vector<ValidationError> validate(const Scenario& s);

/// Cheap yes/no for the search's hot path: same rules, no messages, no allocation.
bool isRunnable(const Scenario& s);

} // namespace paralens
