// SPDX-License-Identifier: GPL-3.0-or-later
// Whether validate() names a rule for a scenario: the check the settings' test suites share.
#pragma once
#include "core/validate.h"

#include <string>

namespace paralens::testrules {

inline bool breaks(const Scenario& s, const std::string& rule)
{
    for (const ValidationError& e : validate(s))
        if (e.rule == rule)
            return true;
    return false;
}

} // namespace paralens::testrules
