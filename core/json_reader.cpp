// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/json_reader.h"

#include "core/error.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace paralens::jsonio {
namespace {

using nlohmann::json;

// nlohmann's parse_error::what() reads "[json.exception.parse_error.101] parse error at line 1,
// column 5: syntax error while ..."; keep only the part after the position.
std::string stripNlohmannPrefix(const std::string& what)
{
    const auto col = what.find("column ");
    if (col != std::string::npos) {
        const auto colon = what.find(": ", col);
        if (colon != std::string::npos)
            return what.substr(colon + 2);
    }
    const auto bracket = what.find("] ");
    return bracket == std::string::npos ? what : what.substr(bracket + 2);
}

std::string lineColumn(std::string_view text, std::size_t byte)
{
    // nlohmann counts the characters read, so the offending one is at index byte - 1.
    std::size_t index = byte > 0 ? byte - 1 : 0;
    index = std::min(index, text.size());
    std::size_t line = 1;
    std::size_t line_start = 0;
    for (std::size_t i = 0; i < index; ++i) {
        if (text[i] == '\n') {
            ++line;
            line_start = i + 1;
        }
    }
    return std::to_string(line) + ":" + std::to_string(index - line_start + 1);
}

// Walks JSON text for locate(), keeping the key path of the current value; every read is
// bounds-checked, so text that is not JSON only gives a poor position.
class Locator
{
public:
    Locator(std::string_view text, std::string_view path) : m_t(text), m_path(path)
    {
        ws();
        m_best = std::min(m_i, m_t.size());
    }

    std::size_t run()
    {
        bool value = true; // a value comes next (else a key, ',' or a closing bracket)
        while (!done()) {
            ws();
            if (m_i >= m_t.size())
                break;
            value = value ? openValue() : afterValue();
        }
        return m_best;
    }

private:
    struct Frame
    {
        bool array;
        std::size_t base; // length of the container's own path
        std::size_t index;
    };

    bool done() const { return m_found || m_i >= m_t.size(); }
    char peek() const { return m_i < m_t.size() ? m_t[m_i] : '\0'; }
    void ws()
    {
        while (m_i < m_t.size() &&
               (m_t[m_i] == ' ' || m_t[m_i] == '\t' || m_t[m_i] == '\n' || m_t[m_i] == '\r'))
            ++m_i;
    }
    // A string token at m_i: its raw content (escapes kept); moves past it.
    std::string_view string()
    {
        const std::size_t start = ++m_i;
        while (m_i < m_t.size() && m_t[m_i] != '"')
            m_i += m_t[m_i] == '\\' ? 2 : 1;
        const std::size_t stop = std::min(m_i, m_t.size());
        ++m_i;
        return m_t.substr(start, stop - start);
    }
    // m_cur names what starts at `at`: keep it when it is the deepest prefix of the path so far.
    void consider(std::size_t at)
    {
        const std::size_t n = m_cur.size();
        const bool prefix = n <= m_path.size() && m_path.substr(0, n) == m_cur &&
                            (n == m_path.size() || m_path[n] == '.' || m_path[n] == '[');
        if (prefix && n > m_bestLen) {
            m_best = at;
            m_bestLen = n;
        }
        m_found = prefix && n == m_path.size();
    }
    void element()
    {
        Frame& f = m_stack.back();
        m_cur.resize(f.base);
        m_cur += "[" + std::to_string(f.index) + "]";
        ws();
        consider(m_i);
    }
    // Returns whether a value comes next.
    bool openValue()
    {
        const char c = peek();
        if (c != '{' && c != '[') { // a scalar
            if (c == '"')
                string();
            else
                while (m_i < m_t.size() &&
                       std::string_view(",}] \t\r\n").find(m_t[m_i]) == std::string_view::npos)
                    ++m_i;
            return false;
        }
        m_stack.push_back({c == '[', m_cur.size(), 0});
        ++m_i;
        ws();
        if (c == '[' && peek() != ']') {
            element();
            return true;
        }
        return false; // a key follows, or the empty container closes
    }
    bool afterValue()
    {
        const char c = peek();
        if (c == '"' && !m_stack.empty() && !m_stack.back().array) { // a key
            const std::size_t at = m_i;
            const std::string_view key = string();
            m_cur.resize(m_stack.back().base);
            if (!m_cur.empty())
                m_cur += '.';
            m_cur += key;
            consider(at);
            ws();
            if (peek() == ':')
                ++m_i;
            return true;
        }
        ++m_i;
        if (c == ',' && !m_stack.empty() && m_stack.back().array) {
            ++m_stack.back().index;
            element();
            return true;
        }
        if ((c == '}' || c == ']') && !m_stack.empty()) {
            m_cur.resize(m_stack.back().base);
            m_stack.pop_back();
        }
        return false; // after ',' in an object a key follows; anything else is skipped
    }

    std::string_view m_t, m_path;
    std::size_t m_i = 0, m_best = 0, m_bestLen = 0;
    bool m_found = false;
    std::string m_cur;
    std::vector<Frame> m_stack;
};

} // namespace

std::string locate(std::string_view text, std::string_view path)
{
    return lineColumn(text, Locator(text, path).run() + 1);
}

json parseText(std::string_view text, const std::string& source)
{
    // Track the keys of every open object to reject duplicates (nlohmann keeps the last one
    // silently, which would hide a typo'd second "tp").
    std::vector<std::set<std::string>> open;
    std::string duplicate;
    auto callback = [&](int, json::parse_event_t event, json& parsed) {
        switch (event) {
        case json::parse_event_t::object_start:
            open.emplace_back();
            break;
        case json::parse_event_t::object_end:
            if (!open.empty())
                open.pop_back();
            break;
        case json::parse_event_t::key:
            if (!open.empty() && !open.back().insert(parsed.get<std::string>()).second &&
                duplicate.empty())
                duplicate = parsed.get<std::string>();
            break;
        default:
            break;
        }
        return true;
    };
    json j;
    try {
        j = json::parse(text.begin(), text.end(), callback, /*allow_exceptions=*/true,
                        /*ignore_comments=*/false);
    } catch (const json::parse_error& e) {
        throw InputError("", source + ":" + lineColumn(text, e.byte) +
                                 ": malformed JSON: " + stripNlohmannPrefix(e.what()));
    } catch (const json::exception& e) {
        // Out-of-range numbers ("number overflow parsing '1e400'") carry no offset: find the
        // quoted token in the text instead.
        const std::string what = e.what();
        std::string where = source;
        const auto q = what.find("parsing '");
        if (q != std::string::npos) {
            const auto end = what.find('\'', q + 9);
            const auto at = text.find(what.substr(q + 9, end - q - 9));
            if (end != std::string::npos && at != std::string_view::npos)
                where += ":" + lineColumn(text, at + 1);
        }
        throw InputError("", where + ": malformed JSON: " + stripNlohmannPrefix(what));
    }
    if (!duplicate.empty())
        throw InputError(duplicate, source + ": duplicate key '" + duplicate +
                                        "' (each key may appear once per object)");
    return j;
}

std::string typeName(const json& j)
{
    switch (j.type()) {
    case json::value_t::string:
        return "a string";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
        return "an integer";
    case json::value_t::number_float:
        return "a number";
    case json::value_t::boolean:
        return "a boolean";
    case json::value_t::object:
        return "an object";
    case json::value_t::array:
        return "an array";
    default:
        return "null";
    }
}

std::string join(const std::string& path, std::string_view key)
{
    return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string number(double v)
{
    char buf[64];
    if (std::isfinite(v) && std::fabs(v) < 1e15 && v == std::floor(v))
        std::snprintf(buf, sizeof buf, "%.0f", v);
    else
        std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

ObjectReader::ObjectReader(const json& j, std::string path) : m_j(j), m_path(std::move(path))
{
    if (!j.is_object())
        throw InputError(m_path, m_path.empty()
                                     ? "expected a JSON object at the top level, got " + typeName(j)
                                     : m_path + ": expected an object, got " + typeName(j));
}

bool ObjectReader::has(std::string_view key) const
{
    return m_j.contains(std::string(key));
}

void ObjectReader::allow(std::initializer_list<std::string_view> keys)
{
    for (auto k : keys)
        m_known.emplace_back(k);
}

void ObjectReader::require(std::string_view key) const
{
    if (!has(key))
        throw InputError(join(m_path, key), join(m_path, key) + ": required key missing");
}

const json* ObjectReader::find(std::string_view key)
{
    m_known.emplace_back(key);
    const auto it = m_j.find(std::string(key));
    return it == m_j.end() ? nullptr : &*it;
}

const json* ObjectReader::child(std::string_view key)
{
    return find(key);
}

void ObjectReader::badValue(std::string_view key, const std::string& what) const
{
    throw InputError(join(m_path, key), join(m_path, key) + ": " + what);
}

bool ObjectReader::readInt64(std::string_view key, std::int64_t& out, std::int64_t min,
                             std::int64_t max)
{
    const json* v = find(key);
    if (!v)
        return false;
    if (v->is_number_unsigned()) {
        const auto u = v->get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(max))
            badValue(key, std::to_string(u) + " exceeds the bound " + std::to_string(max));
        if (static_cast<std::int64_t>(u) < min)
            badValue(key, std::to_string(u) + " is below the minimum " + std::to_string(min));
        out = static_cast<std::int64_t>(u);
        return true;
    }
    if (v->is_number_integer()) {
        const auto i = v->get<std::int64_t>();
        if (i < min)
            badValue(key, std::to_string(i) + " is below the minimum " + std::to_string(min));
        if (i > max)
            badValue(key, std::to_string(i) + " exceeds the bound " + std::to_string(max));
        out = i;
        return true;
    }
    if (v->is_number_float()) {
        const double value = v->get<double>();
        if (!std::isfinite(value) || value != std::floor(value))
            badValue(key, "expected an integer, got " + number(value));
        if (value < static_cast<double>(min))
            badValue(key, number(value) + " is below the minimum " + std::to_string(min));
        if (value > static_cast<double>(max))
            badValue(key, number(value) + " exceeds the bound " + std::to_string(max));
        out = static_cast<std::int64_t>(value);
        return true;
    }
    badValue(key, "expected an integer, got " + typeName(*v));
}

bool ObjectReader::readInt(std::string_view key, int& out, std::int64_t min, std::int64_t max)
{
    std::int64_t v = 0;
    if (!readInt64(key, v, min, max))
        return false;
    out = static_cast<int>(v);
    return true;
}

bool ObjectReader::readDouble(std::string_view key, double& out, double min, double max,
                              bool min_exclusive)
{
    const json* v = find(key);
    if (!v)
        return false;
    if (!v->is_number())
        badValue(key, "expected a number, got " + typeName(*v));
    const double d = v->get<double>();
    if (!std::isfinite(d))
        badValue(key, "expected a finite number");
    if (min_exclusive ? d <= min : d < min)
        badValue(key, number(d) +
                          (min_exclusive ? " must be greater than " : " is below the minimum ") +
                          number(min));
    if (d > max)
        badValue(key, number(d) + " exceeds the bound " + number(max));
    out = d;
    return true;
}

bool ObjectReader::readBool(std::string_view key, bool& out)
{
    const json* v = find(key);
    if (!v)
        return false;
    if (!v->is_boolean())
        badValue(key, "expected a boolean (true or false), got " + typeName(*v));
    out = v->get<bool>();
    return true;
}

bool ObjectReader::readString(std::string_view key, std::string& out)
{
    const json* v = find(key);
    if (!v)
        return false;
    if (!v->is_string())
        badValue(key, "expected a string, got " + typeName(*v));
    out = v->get<std::string>();
    return true;
}

void ObjectReader::finish() const
{
    for (const auto& [key, value] : m_j.items()) {
        if (std::find(m_known.begin(), m_known.end(), key) != m_known.end())
            continue;
        std::string allowed;
        std::vector<std::string> sorted = m_known;
        std::sort(sorted.begin(), sorted.end());
        sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
        for (const auto& k : sorted)
            allowed += (allowed.empty() ? "" : ", ") + k;
        throw InputError(join(m_path, key),
                         join(m_path, key) + ": unknown key (allowed here: " + allowed + ")");
    }
}

} // namespace paralens::jsonio
