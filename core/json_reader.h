// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// Strict JSON reading for user files: every error names the key path, the expected type or
// the bound that was broken. Used by scenario_io.cpp, spec_io.cpp and presets.cpp.
namespace paralens::jsonio {

/// Parses text as JSON. Throws InputError("", "SOURCE:LINE:COL: malformed JSON: ...") for a
/// syntax error (line and column are 1-based, computed from nlohmann's byte offset) and
/// "SOURCE: duplicate key 'k' ..." when an object repeats a key.
nlohmann::json parseText(std::string_view text, const std::string& source);

/// "LINE:COL" (1-based) in `text` of the value a key path names ("runs[2].measured.step_seconds":
/// keys joined by '.', array elements as [i], 0-based): the position of its key inside an
/// object, of the element inside an array. A path that is not in the text (a key that was
/// omitted) gives its deepest part that is. `text` should be JSON that parseText() accepted;
/// anything else gives some position inside it, never a read past its end.
std::string locate(std::string_view text, std::string_view path);

/// "a string", "an integer", "a number", "a boolean", "an object", "an array", "null".
std::string typeName(const nlohmann::json& j);

/// Joins a parent path and a key: ("parallel", "tp") -> "parallel.tp"; ("", "gpus") -> "gpus".
std::string join(const std::string& path, std::string_view key);

/// Formats a number for messages: integers without a decimal point, others with up to 6
/// significant digits.
std::string number(double v);

/// Reads one JSON object. Each read registers its key as known; finish() rejects any other
/// key. Readers leave `out` untouched and return false when the key is absent.
class ObjectReader
{
public:
    /// Throws InputError when j is not an object.
    ObjectReader(const nlohmann::json& j, std::string path);

    const std::string& path() const { return m_path; }
    bool has(std::string_view key) const;
    /// Registers keys that are allowed but read elsewhere (or ignored).
    void allow(std::initializer_list<std::string_view> keys);
    /// Throws "PATH.key: required key missing" when absent.
    void require(std::string_view key) const;

    bool readInt(std::string_view key, int& out, std::int64_t min, std::int64_t max);
    bool readInt64(std::string_view key, std::int64_t& out, std::int64_t min, std::int64_t max);
    /// min_exclusive: the value must be > min rather than >= min.
    bool readDouble(std::string_view key, double& out, double min, double max,
                    bool min_exclusive = false);
    bool readBool(std::string_view key, bool& out);
    bool readString(std::string_view key, std::string& out);
    /// Reads a string and maps it through parse(); allowed lists the names for the message.
    template <typename E, typename Parse>
    bool readEnum(std::string_view key, E& out, Parse parse, std::string_view allowed)
    {
        std::string s;
        if (!readString(key, s))
            return false;
        const auto v = parse(s);
        if (!v)
            badValue(key, "'" + s + "' is not one of " + std::string(allowed));
        out = *v;
        return true;
    }
    /// The child value (registered as known), or nullptr when absent.
    const nlohmann::json* child(std::string_view key);

    /// Throws for the first key that was never registered.
    void finish() const;

    [[noreturn]] void badValue(std::string_view key, const std::string& what) const;

private:
    const nlohmann::json* find(std::string_view key);
    const nlohmann::json& m_j;
    std::string m_path;
    std::vector<std::string> m_known;
};

} // namespace paralens::jsonio
