// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/launch_args.h"

#include "core/error.h"

#include <algorithm>
#include <cctype>

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace paralens::launch {
namespace {

constexpr std::size_t kMaxWords = 1000000;

bool isNameChar(char c, bool first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           (!first && c >= '0' && c <= '9');
}

class Splitter
{
public:
    Splitter(std::string_view text, const std::string& source) : m_text(text), m_source(source) {}

    std::vector<Word> run()
    {
        while (m_pos < m_text.size())
            step();
        finishWord();
        return std::move(m_words);
    }

private:
    [[noreturn]] void fail(int line, const std::string& what) const
    {
        throw InputError("", m_source + ":" + std::to_string(line) + ": " + what);
    }

    void finishWord()
    {
        if (!m_inWord)
            return;
        if (m_words.size() >= kMaxWords)
            fail(m_line, "more than a million words: not a launch script");
        m_words.push_back({expand(m_word), m_wordLine});
        remember(m_words.back().text);
        m_word.clear();
        m_inWord = false;
    }
    void startWord()
    {
        if (!m_inWord) {
            m_inWord = true;
            m_wordLine = m_line;
        }
    }

    // NAME=value at the start of a command defines a variable later words may use.
    void remember(const std::string& w)
    {
        const auto eq = w.find('=');
        if (eq == std::string::npos || eq == 0 || !isNameChar(w[0], true))
            return;
        for (std::size_t i = 1; i < eq; ++i)
            if (!isNameChar(w[i], false))
                return;
        m_vars[w.substr(0, eq)] = w.substr(eq + 1);
    }

    // Expands $NAME, ${NAME} and ${NAME:-default} of known variables; others stay as written.
    std::string expand(const std::string& w) const
    {
        if (w.find('$') == std::string::npos)
            return w;
        std::string out;
        for (std::size_t i = 0; i < w.size(); ++i) {
            if (w[i] != '$' || i + 1 >= w.size()) {
                out += w[i];
                continue;
            }
            std::size_t j = i + 1;
            const bool braced = w[j] == '{';
            if (braced)
                ++j;
            std::size_t k = j;
            while (k < w.size() && isNameChar(w[k], k == j))
                ++k;
            const std::string name = w.substr(j, k - j);
            std::string fallback;
            bool hasFallback = false;
            std::size_t end = k;
            if (braced) {
                const auto close = w.find('}', k);
                if (close == std::string::npos) {
                    out += w[i];
                    continue;
                }
                if (w.compare(k, 2, ":-") == 0) {
                    fallback = w.substr(k + 2, close - k - 2);
                    hasFallback = true;
                } else if (k != close) {
                    out += w[i]; // ${ARR[@]} and the like: left as written
                    continue;
                }
                end = close + 1;
            }
            const auto it = m_vars.find(name);
            if (name.empty() || (it == m_vars.end() && !hasFallback)) {
                out += w.substr(i, end - i);
            } else {
                out += it != m_vars.end() ? it->second : fallback;
            }
            i = end - 1;
        }
        return out;
    }

    void step()
    {
        const char c = m_text[m_pos];
        if (c == '\0')
            fail(m_line, "a NUL byte: not a text file");
        if (c == '\\') {
            if (m_pos + 1 < m_text.size() && m_text[m_pos + 1] == '\n') {
                m_pos += 2; // line continuation
                ++m_line;
                return;
            }
            if (m_pos + 2 < m_text.size() && m_text[m_pos + 1] == '\r' &&
                m_text[m_pos + 2] == '\n') {
                m_pos += 3;
                ++m_line;
                return;
            }
            startWord();
            if (m_pos + 1 < m_text.size())
                m_word += m_text[m_pos + 1];
            m_pos += 2;
            return;
        }
        if (c == '\'' || c == '"') {
            quoted(c);
            return;
        }
        if (c == '#' && !m_inWord) {
            while (m_pos < m_text.size() && m_text[m_pos] != '\n')
                ++m_pos;
            return;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ';' || c == '|' || c == '&' ||
            c == '(' || c == ')') {
            finishWord();
            if (c == '\n')
                ++m_line;
            ++m_pos;
            return;
        }
        startWord();
        m_word += c;
        ++m_pos;
    }

    void quoted(char q)
    {
        startWord();
        const int line = m_line;
        ++m_pos;
        while (true) {
            if (m_pos >= m_text.size())
                fail(line, std::string("unterminated ") + (q == '"' ? "\"" : "'") + " quote");
            const char c = m_text[m_pos];
            if (c == '\0')
                fail(m_line, "a NUL byte: not a text file");
            if (c == q) {
                ++m_pos;
                return;
            }
            if (c == '\n')
                ++m_line;
            if (q == '"' && c == '\\' && m_pos + 1 < m_text.size() &&
                (m_text[m_pos + 1] == '"' || m_text[m_pos + 1] == '\\' ||
                 m_text[m_pos + 1] == '$')) {
                m_word += m_text[m_pos + 1];
                m_pos += 2;
                continue;
            }
            m_word += c;
            ++m_pos;
        }
    }

    std::string_view m_text;
    const std::string& m_source;
    std::size_t m_pos = 0;
    int m_line = 1;
    int m_wordLine = 1;
    bool m_inWord = false;
    std::string m_word;
    std::vector<Word> m_words;
    std::map<std::string, std::string> m_vars;
};

} // namespace

std::vector<Word> splitWords(std::string_view text, const std::string& source)
{
    return Splitter(text, source).run();
}

std::optional<Word> lastAssignment(const std::vector<Word>& words, std::string_view name)
{
    for (auto it = words.rbegin(); it != words.rend(); ++it) {
        const std::string& w = it->text;
        if (w.size() > name.size() && w.compare(0, name.size(), name) == 0 && w[name.size()] == '=')
            return Word{w.substr(name.size() + 1), it->line};
    }
    return std::nullopt;
}

namespace {

// A word an nargs='*' option takes, as argparse would see it: not an option, not a shell
// separator or redirection (splitWords() keeps "2>&1" and "> log" as words).
bool listWord(const std::string& w)
{
    if (w.empty() || w[0] == '-')
        return false;
    return w.find_first_of(";|&()<>") == std::string::npos;
}

} // namespace

Flags::Flags(const std::vector<Word>& words, std::string source) : m_source(std::move(source))
{
    int order = 0;
    for (std::size_t i = 0; i < words.size(); ++i) {
        const std::string& w = words[i].text;
        if (w.size() < 3 || w[0] != '-' || w[1] != '-')
            continue;
        Entry e;
        e.line = words[i].line;
        e.order = order++;
        std::string name = w;
        if (const auto eq = w.find('='); eq != std::string::npos) {
            name = w.substr(0, eq);
            e.value = w.substr(eq + 1);
        } else if (i + 1 < words.size() && !words[i + 1].text.empty() &&
                   (words[i + 1].text[0] != '-' ||
                    (words[i + 1].text.size() > 1 &&
                     std::isdigit(static_cast<unsigned char>(words[i + 1].text[1]))))) {
            e.value = words[i + 1].text;
        }
        if (name.size() == w.size())
            for (std::size_t j = i + 1; j < words.size() && listWord(words[j].text); ++j)
                e.values.push_back(words[j].text);
        m_flags[name] = std::move(e);
    }
}

const Flags::Entry* Flags::find(std::string_view name) const
{
    m_read[std::string(name)] = true;
    const auto it = m_flags.find(name);
    return it == m_flags.end() ? nullptr : &it->second;
}

bool Flags::has(std::string_view name) const
{
    return find(name) != nullptr;
}

std::optional<std::string> Flags::value(std::string_view name) const
{
    const Entry* e = find(name);
    return e ? e->value : std::nullopt;
}

std::optional<std::vector<std::string>> Flags::values(std::string_view name) const
{
    const Entry* e = find(name);
    if (!e)
        return std::nullopt;
    if (e->values.empty() && e->value)
        return std::vector<std::string>{*e->value}; // --name=value
    return e->values;
}

void Flags::fail(std::string_view name, const std::string& what) const
{
    const auto it = m_flags.find(name);
    const std::string where =
        it == m_flags.end() ? m_source : m_source + ":" + std::to_string(it->second.line);
    throw InputError(std::string(name), where + ": " + std::string(name) + ": " + what);
}

std::optional<std::int64_t> Flags::integer(std::string_view name, std::int64_t min,
                                           std::int64_t max) const
{
    const Entry* e = find(name);
    if (!e)
        return std::nullopt;
    if (!e->value)
        fail(name, "needs an integer value");
    const std::string& v = *e->value;
    char* end = nullptr;
    errno = 0;
    const long long n = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || end != v.c_str() + v.size() || errno == ERANGE)
        fail(name, "'" + v + "' is not an integer");
    if (n < min || n > max)
        fail(name, std::to_string(n) + " is out of bounds [" + std::to_string(min) + ", " +
                       std::to_string(max) + "]");
    return n;
}

std::optional<double> Flags::number(std::string_view name) const
{
    const Entry* e = find(name);
    if (!e)
        return std::nullopt;
    if (!e->value)
        fail(name, "needs a numeric value");
    const std::string& v = *e->value;
    char* end = nullptr;
    const double d = std::strtod(v.c_str(), &end);
    if (v.empty() || end != v.c_str() + v.size() || !std::isfinite(d))
        fail(name, "'" + v + "' is not a number");
    return d;
}

std::vector<std::string> Flags::unread() const
{
    std::vector<std::pair<int, std::string>> left;
    for (const auto& [name, e] : m_flags)
        if (!m_read.count(name))
            left.push_back({e.order, name});
    std::sort(left.begin(), left.end());
    std::vector<std::string> out;
    for (auto& [o, n] : left)
        out.push_back(std::move(n));
    return out;
}

} // namespace paralens::launch
