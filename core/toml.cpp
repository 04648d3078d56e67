// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/toml.h"

#include "core/error.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>

namespace paralens::toml {

const Value* Value::find(std::string_view key) const
{
    for (const auto& [k, v] : entries)
        if (k == key)
            return &v;
    return nullptr;
}

const char* kindName(Value::Kind k)
{
    switch (k) {
    case Value::Kind::String:
        return "a string";
    case Value::Kind::Integer:
        return "an integer";
    case Value::Kind::Float:
        return "a float";
    case Value::Kind::Bool:
        return "a boolean";
    case Value::Kind::Array:
        return "an array";
    case Value::Kind::Table:
        return "a table";
    }
    return "a value";
}

namespace {

constexpr int kMaxDepth = 64;

bool isBareKeyChar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

class Parser
{
public:
    Parser(std::string_view text, const std::string& source) : m_text(text), m_source(source) {}

    Value run()
    {
        Value root;
        root.line = 1;
        Value* table = &root;
        while (true) {
            skipBlankAndComments();
            if (atEnd())
                break;
            if (peek() == '[')
                table = header(root);
            else
                keyValue(*table);
            endOfLine();
        }
        return root;
    }

private:
    [[noreturn]] void fail(const std::string& what) const
    {
        throw InputError("", m_source + ":" + std::to_string(m_line) + ": " + what);
    }
    bool atEnd() const { return m_pos >= m_text.size(); }
    char peek(std::size_t ahead = 0) const
    {
        return m_pos + ahead < m_text.size() ? m_text[m_pos + ahead] : '\0';
    }
    void advance()
    {
        if (!atEnd() && m_text[m_pos] == '\n')
            ++m_line;
        ++m_pos;
    }
    void skipSpaces()
    {
        while (peek() == ' ' || peek() == '\t')
            advance();
    }
    void skipComment()
    {
        if (peek() != '#')
            return;
        while (!atEnd() && peek() != '\n')
            advance();
    }
    void skipBlankAndComments()
    {
        while (!atEnd()) {
            skipSpaces();
            skipComment();
            if (peek() == '\r' && peek(1) == '\n')
                advance();
            if (peek() != '\n')
                return;
            advance();
        }
    }
    // After a key/value or header: only spaces and a comment before the line ends.
    void endOfLine()
    {
        skipSpaces();
        skipComment();
        if (peek() == '\r' && peek(1) == '\n')
            advance();
        if (!atEnd() && peek() != '\n')
            fail(std::string("unexpected '") + peek() +
                 "' after the value (one key = value a line)");
    }

    std::string key()
    {
        skipSpaces();
        if (peek() == '"' || peek() == '\'')
            return peek() == '"' ? basicString() : literalString();
        std::string k;
        while (isBareKeyChar(peek())) {
            k += peek();
            advance();
        }
        if (k.empty())
            fail(atEnd() || peek() == '\n' ? "expected a key, got the end of the line"
                                           : std::string("expected a key, got '") + peek() + "'");
        return k;
    }
    std::vector<std::string> dottedKey()
    {
        std::vector<std::string> parts{key()};
        skipSpaces();
        while (peek() == '.') {
            advance();
            parts.push_back(key());
            skipSpaces();
        }
        if (parts.size() > kMaxDepth)
            fail("key nested deeper than " + std::to_string(kMaxDepth) + " levels");
        return parts;
    }

    // The table at `path` under `t`, created when absent; fails when a part is not a table.
    Value* descend(Value* t, const std::vector<std::string>& path, std::size_t count)
    {
        for (std::size_t i = 0; i < count; ++i) {
            Value* next = const_cast<Value*>(t->find(path[i]));
            if (!next) {
                Value fresh;
                fresh.line = m_line;
                t->entries.push_back({path[i], std::move(fresh)});
                next = &t->entries.back().value;
            } else if (next->kind != Value::Kind::Table) {
                fail("'" + path[i] + "' is " + kindName(next->kind) + ", not a table");
            }
            t = next;
        }
        return t;
    }

    Value* header(Value& root)
    {
        advance(); // '['
        if (peek() == '[')
            fail("arrays of tables ([[...]]) are not supported");
        const auto path = dottedKey();
        skipSpaces();
        if (peek() != ']')
            fail("expected ']' to close the table header");
        advance();
        std::string joined;
        for (const auto& p : path)
            joined += (joined.empty() ? "" : ".") + p;
        if (!m_headers.insert(joined).second)
            fail("table [" + joined + "] is defined twice");
        return descend(&root, path, path.size());
    }

    void keyValue(Value& table)
    {
        const auto path = dottedKey();
        skipSpaces();
        if (peek() != '=')
            fail("expected '=' after the key '" + path.back() + "'");
        advance();
        skipSpaces();
        Value v = value(0);
        Value* t = descend(&table, path, path.size() - 1);
        if (t->find(path.back()))
            fail("key '" + path.back() + "' is defined twice");
        t->entries.push_back({path.back(), std::move(v)});
    }

    Value value(int depth)
    {
        if (depth > kMaxDepth)
            fail("arrays or inline tables nested deeper than " + std::to_string(kMaxDepth));
        Value v;
        v.line = m_line;
        const char c = peek();
        if (c == '"' || c == '\'') {
            v.kind = Value::Kind::String;
            v.str = c == '"' ? basicString() : literalString();
        } else if (c == '[') {
            array(v, depth);
        } else if (c == '{') {
            inlineTable(v, depth);
        } else if (m_text.substr(m_pos, 4) == "true" && !isBareKeyChar(peek(4))) {
            v.kind = Value::Kind::Bool;
            v.boolean = true;
            m_pos += 4;
        } else if (m_text.substr(m_pos, 5) == "false" && !isBareKeyChar(peek(5))) {
            v.kind = Value::Kind::Bool;
            m_pos += 5;
        } else if (c == '+' || c == '-' || (c >= '0' && c <= '9') || c == 'i' || c == 'n') {
            number(v);
        } else {
            fail(atEnd() || c == '\n' ? "expected a value, got the end of the line"
                                      : std::string("expected a value, got '") + c + "'");
        }
        return v;
    }

    void array(Value& v, int depth)
    {
        v.kind = Value::Kind::Array;
        advance(); // '['
        while (true) {
            skipBlankAndComments();
            if (atEnd())
                fail("unterminated array (no closing ']')");
            if (peek() == ']') {
                advance();
                return;
            }
            v.items.push_back(value(depth + 1));
            skipBlankAndComments();
            if (peek() == ',') {
                advance();
                continue;
            }
            if (peek() != ']')
                fail(atEnd()
                         ? "unterminated array (no closing ']')"
                         : std::string("expected ',' or ']' in the array, got '") + peek() + "'");
        }
    }

    void inlineTable(Value& v, int depth)
    {
        v.kind = Value::Kind::Table;
        advance(); // '{'
        skipSpaces();
        if (peek() == '}') {
            advance();
            return;
        }
        while (true) {
            const auto path = dottedKey();
            skipSpaces();
            if (peek() != '=')
                fail("expected '=' in the inline table");
            advance();
            skipSpaces();
            Value item = value(depth + 1);
            Value* t = descend(&v, path, path.size() - 1);
            if (t->find(path.back()))
                fail("key '" + path.back() + "' is defined twice");
            t->entries.push_back({path.back(), std::move(item)});
            skipSpaces();
            if (peek() == ',') {
                advance();
                skipSpaces();
                continue;
            }
            if (peek() == '}') {
                advance();
                return;
            }
            fail("expected ',' or '}' in the inline table (which stays on one line)");
        }
    }

    void appendUtf8(std::string& out, unsigned long cp)
    {
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            fail("\\u escape is not a Unicode scalar value");
        if (cp < 0x80) {
            out += char(cp);
        } else if (cp < 0x800) {
            out += char(0xC0 | (cp >> 6));
            out += char(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += char(0xE0 | (cp >> 12));
            out += char(0x80 | ((cp >> 6) & 0x3F));
            out += char(0x80 | (cp & 0x3F));
        } else {
            out += char(0xF0 | (cp >> 18));
            out += char(0x80 | ((cp >> 12) & 0x3F));
            out += char(0x80 | ((cp >> 6) & 0x3F));
            out += char(0x80 | (cp & 0x3F));
        }
    }

    std::string basicString()
    {
        if (m_text.substr(m_pos, 3) == "\"\"\"")
            fail("multi-line strings (\"\"\") are not supported");
        advance();
        std::string out;
        while (true) {
            if (atEnd() || peek() == '\n')
                fail("unterminated string (no closing '\"' on the line)");
            const char c = peek();
            advance();
            if (c == '"')
                return out;
            if (c != '\\') {
                out += c;
                continue;
            }
            const char e = peek();
            advance();
            switch (e) {
            case 'b':
                out += '\b';
                break;
            case 't':
                out += '\t';
                break;
            case 'n':
                out += '\n';
                break;
            case 'f':
                out += '\f';
                break;
            case 'r':
                out += '\r';
                break;
            case '"':
                out += '"';
                break;
            case '\\':
                out += '\\';
                break;
            case 'u':
            case 'U': {
                const std::size_t n = e == 'u' ? 4 : 8;
                unsigned long cp = 0;
                for (std::size_t i = 0; i < n; ++i) {
                    const char h = peek();
                    const int d = h >= '0' && h <= '9'   ? h - '0'
                                  : h >= 'a' && h <= 'f' ? h - 'a' + 10
                                  : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                                         : -1;
                    if (d < 0)
                        fail("\\" + std::string(1, e) + " escape needs " + std::to_string(n) +
                             " hexadecimal digits");
                    cp = cp * 16 + unsigned(d);
                    advance();
                }
                appendUtf8(out, cp);
                break;
            }
            default:
                fail(std::string("unknown escape '\\") + (e ? std::string(1, e) : "") + "'");
            }
        }
    }

    std::string literalString()
    {
        if (m_text.substr(m_pos, 3) == "'''")
            fail("multi-line literal strings (''') are not supported");
        advance();
        std::string out;
        while (true) {
            if (atEnd() || peek() == '\n')
                fail("unterminated string (no closing \"'\" on the line)");
            const char c = peek();
            advance();
            if (c == '\'')
                return out;
            out += c;
        }
    }

    void number(Value& v)
    {
        std::string token;
        while (!atEnd() &&
               (isBareKeyChar(peek()) || peek() == '+' || peek() == '.' || peek() == ':')) {
            token += peek();
            advance();
        }
        std::string_view body = token;
        if (!body.empty() && (body[0] == '+' || body[0] == '-'))
            body.remove_prefix(1);
        if (body == "inf" || body == "nan")
            fail("inf and nan are not supported");
        if (body.size() > 1 && body[0] == '0' &&
            (body[1] == 'x' || body[1] == 'o' || body[1] == 'b'))
            fail("hexadecimal, octal and binary integers are not supported ('" + token + "')");
        if (token.find(':') != std::string::npos ||
            (body.size() > 4 && body[4] == '-' && token.find_first_of("eE") == std::string::npos))
            fail("dates and times are not supported ('" + token + "')");
        std::string digits;
        char prev = '\0';
        for (char c : token) {
            if (c == '_') {
                if (!(prev >= '0' && prev <= '9'))
                    fail("'_' must sit between digits ('" + token + "')");
            } else {
                digits += c;
            }
            prev = c;
        }
        if (prev == '_' || digits.empty())
            fail("malformed number '" + token + "'");
        const bool isFloat = digits.find_first_of(".eE") != std::string::npos;
        const std::string_view mag =
            std::string_view(digits).substr(digits[0] == '+' || digits[0] == '-' ? 1 : 0);
        if (mag.size() > 1 && mag[0] == '0' && mag[1] != '.' && mag[1] != 'e' && mag[1] != 'E')
            fail("leading zeros are not allowed ('" + token + "')");
        char* end = nullptr;
        errno = 0;
        if (isFloat) {
            v.kind = Value::Kind::Float;
            v.number = std::strtod(digits.c_str(), &end);
            if (end != digits.c_str() + digits.size() || !std::isfinite(v.number) ||
                errno == ERANGE)
                fail("malformed or out-of-range float '" + token + "'");
        } else {
            v.kind = Value::Kind::Integer;
            v.integer = std::strtoll(digits.c_str(), &end, 10);
            if (end != digits.c_str() + digits.size())
                fail("malformed number '" + token + "'");
            if (errno == ERANGE)
                fail("integer '" + token + "' does not fit in 64 bits");
        }
    }

    std::string_view m_text;
    const std::string& m_source;
    std::size_t m_pos = 0;
    int m_line = 1;
    std::set<std::string> m_headers;
};

} // namespace

Value parse(std::string_view text, const std::string& source)
{
    return Parser(text, source).run();
}

} // namespace paralens::toml
