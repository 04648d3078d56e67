// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/input_file.h"
#include "core/error.h"

#include <filesystem>
#include <fstream>

namespace paralens {

namespace {

std::string tooLarge(const std::string& path, const std::string& what, std::uint64_t max_bytes,
                     const std::string& size)
{
    return path + ": the " + what + " is " + size + ", above the limit of " +
           std::to_string(max_bytes >> 20) + " MiB (" + std::to_string(max_bytes) + " bytes)";
}

} // namespace

std::string readInputFile(const std::string& path, std::uint64_t max_bytes, const std::string& what,
                          const std::string& field)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::is_directory(path, ec))
        throw InputError(field, path + ": cannot open the " + what + ": it is a folder");
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw InputError(field, path + ": cannot open the " + what);
    if (fs::is_regular_file(path, ec)) {
        const std::uintmax_t size = fs::file_size(path, ec);
        if (!ec && size > max_bytes)
            throw InputError(field,
                             tooLarge(path, what, max_bytes, std::to_string(size) + " bytes"));
    }
    std::string text;
    char buf[1 << 16];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
        text.append(buf, static_cast<std::size_t>(in.gcount()));
        if (text.size() > max_bytes) // the file grew, or is not a regular file
            throw InputError(field, tooLarge(path, what, max_bytes, "more than the limit"));
    }
    if (in.bad())
        throw InputError(field, path + ": cannot read the " + what);
    return text;
}

} // namespace paralens
