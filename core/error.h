// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include <stdexcept>
#include <string>

namespace paralens {

/// Bad input from a user's file or flag. `field` names the offending key as a JSON path
/// ("parallel.tp", "model.moe.experts"); what() is the one-line message shown after "error: ".
class InputError : public std::runtime_error
{
public:
    InputError(std::string field, const std::string& message)
        : std::runtime_error(message), m_field(std::move(field))
    {
    }
    const std::string& field() const { return m_field; }

private:
    std::string m_field;
};

} // namespace paralens
