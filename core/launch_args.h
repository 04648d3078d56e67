// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The words of a launch script or argument list, as a shell would split them, and the
// --flag [value] options among them.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace paralens::launch {

struct Word
{
    std::string text;
    int line = 0; ///< 1-based line where the word starts
};

/// Splits a shell script (or a bare argument list) into words: quotes ('..', "..") and
/// backslash escapes resolved, line continuations joined, comments dropped, `;`, `|`, `&`,
/// `(` and `)` separate words. Simple variables (NAME=value, export NAME=value) are expanded
/// where a later word names them ($NAME, ${NAME}, ${NAME:-default}); others stay as written.
/// Throws InputError naming the line of an unterminated quote, of a NUL byte, or when the
/// text holds more than a million words.
std::vector<Word> splitWords(std::string_view text, const std::string& source);

/// The value of the last `NAME=value` word (a variable set for the script or its command,
/// `export NAME=value` included), or nullopt when no word sets NAME.
std::optional<Word> lastAssignment(const std::vector<Word>& words, std::string_view name);

/// The options among the words: "--name value", "--name=value" and "--name" alone. A word
/// after an option that does not start with '-' is taken as its value, so a store-true flag
/// followed by a positional word (the script name) reads that word as its value; readers only
/// ask such flags whether they are present. The last occurrence of a flag wins, as argparse's.
class Flags
{
public:
    Flags(const std::vector<Word>& words, std::string source);

    bool has(std::string_view name) const;
    /// The value, or nullopt when the flag is absent or has none.
    std::optional<std::string> value(std::string_view name) const;
    /// Every word after the flag up to the next option or shell separator (argparse's
    /// nargs='*'); nullopt when the flag is absent, empty when it has none.
    std::optional<std::vector<std::string>> values(std::string_view name) const;
    /// The value as an integer in [min, max]; nullopt when absent. Throws InputError naming
    /// the flag and its line when it is not an integer or out of bounds.
    std::optional<std::int64_t> integer(std::string_view name, std::int64_t min,
                                        std::int64_t max) const;
    /// The value as a finite number; same errors.
    std::optional<double> number(std::string_view name) const;
    /// Names of flags never asked about, in order (what an import note lists as ignored).
    std::vector<std::string> unread() const;
    [[noreturn]] void fail(std::string_view name, const std::string& what) const;

private:
    struct Entry
    {
        std::optional<std::string> value;
        std::vector<std::string> values;
        int line = 0;
        int order = 0;
    };
    const Entry* find(std::string_view name) const;
    std::map<std::string, Entry, std::less<>> m_flags;
    mutable std::map<std::string, bool, std::less<>> m_read;
    std::string m_source;
};

} // namespace paralens::launch
