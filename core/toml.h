// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// A reader for the subset of TOML v1.0 that torchtitan job configs use: [table] and
// [dotted.table] headers, bare, quoted and dotted keys, basic and literal strings, integers,
// floats, booleans, arrays (nested, over several lines) and inline tables, and comments.
// Anything else (arrays of tables, multi-line strings, dates, hexadecimal integers, inf/nan) is
// refused with an InputError that names it and its line, never skipped.
namespace paralens::toml {

struct Entry;

struct Value
{
    enum class Kind
    {
        String,
        Integer,
        Float,
        Bool,
        Array,
        Table
    };
    Kind kind = Kind::Table;
    std::string str;
    std::int64_t integer = 0;
    double number = 0;
    bool boolean = false;
    std::vector<Value> items;   ///< Array
    std::vector<Entry> entries; ///< Table, in file order
    int line = 0;               ///< where the value starts, 1-based

    /// The entry `key` of a table, or nullptr.
    const Value* find(std::string_view key) const;
};

/// One key of a table and its value.
struct Entry
{
    std::string key;
    Value value;
};

/// "a string", "an integer", "a float", "a boolean", "an array", "a table".
const char* kindName(Value::Kind k);

/// Parses TOML text into its root table. Throws InputError("", "SOURCE:LINE: ...") for a
/// syntax error, a repeated key or table, an unsupported construct, or nesting deeper than 64.
Value parse(std::string_view text, const std::string& source);

} // namespace paralens::toml
