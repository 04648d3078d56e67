// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/nccl_log.h"

#include "core/error.h"
#include "core/input_file.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

namespace paralens {
namespace {

std::vector<std::string_view> split(std::string_view s)
{
    std::vector<std::string_view> out;
    size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])))
            ++i;
        size_t j = i;
        while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j])))
            ++j;
        if (j > i)
            out.push_back(s.substr(i, j - i));
        i = j;
    }
    return out;
}

std::string_view trim(std::string_view s)
{
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return s;
}

bool parseInt(std::string_view s, long long& v)
{
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc() && p == s.data() + s.size();
}

bool parseDouble(std::string_view s, double& v)
{
    // from_chars for double is available in libstdc++ 11+; strtod keeps older compilers happy.
    std::string tmp(s);
    char* end = nullptr;
    v = std::strtod(tmp.c_str(), &end);
    return !tmp.empty() && end == tmp.c_str() + tmp.size() && std::isfinite(v);
}

/// Removes launcher prefixes: srun -l ("  0: "), mpirun --tag-output ("[1,0]<stdout>:").
std::string_view stripPrefix(std::string_view line)
{
    if (!line.empty() && line.back() == '\r')
        line.remove_suffix(1);
    if (line.starts_with('[')) {
        const auto close = line.find("]<");
        const auto colon = line.find(">:");
        if (close != std::string_view::npos && colon != std::string_view::npos && close < colon)
            return line.substr(colon + 2);
    }
    size_t i = 0;
    while (i < line.size() && line[i] == ' ')
        ++i;
    size_t j = i;
    while (j < line.size() && std::isdigit(static_cast<unsigned char>(line[j])))
        ++j;
    if (j > i && j < line.size() && line[j] == ':' && (j + 1 == line.size() || line[j + 1] == ' '))
        return line.substr(j + 1);
    return line;
}

/// "22902" -> "2.29.2" (NCCL_VERSION_CODE = major*10000 + minor*100 + patch since 2.9).
std::string versionFromCode(std::string_view code)
{
    long long v = 0;
    if (!parseInt(code, v) || v <= 0)
        return {};
    if (v < 10000) // pre-2.9 encoding: major*1000 + minor*100 + patch
        return std::to_string(v / 1000) + "." + std::to_string(v / 100 % 10) + "." +
               std::to_string(v % 100);
    return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
           std::to_string(v % 100);
}

/// Finds "<name>_perf" in a line (binary name or test header) and returns "<name>".
std::string opFromPerfName(std::string_view line)
{
    const auto pos = line.find("_perf");
    if (pos == std::string_view::npos)
        return {};
    size_t b = pos;
    while (b > 0 && (std::isalnum(static_cast<unsigned char>(line[b - 1])) || line[b - 1] == '_'))
        --b;
    return std::string(line.substr(b, pos - b));
}

struct Device
{
    int rank = 0;
    std::string host;
    std::string name;
};

/// "#  Rank  0 Group  0 Pid 4180122 on cnode3-002 device  0 [0000:1b:00] NVIDIA H100 ..."
/// (older nccl-tests omit "Group").
std::optional<Device> parseDevice(std::string_view body)
{
    const auto t = split(body);
    if (t.size() < 7 || t[0] != "Rank")
        return std::nullopt;
    Device d;
    long long rank = 0;
    if (!parseInt(t[1], rank))
        return std::nullopt;
    d.rank = static_cast<int>(rank);
    size_t i = 2;
    while (i < t.size() && t[i] != "on")
        ++i;
    if (i + 1 >= t.size())
        return std::nullopt;
    d.host = std::string(t[i + 1]);
    const auto bracket = body.find(']');
    if (bracket != std::string_view::npos)
        d.name = std::string(trim(body.substr(bracket + 1)));
    return d;
}

struct Columns
{
    bool known = false; ///< a column header was seen
    bool redop = true;
    bool root = true;
    int groups = 2; ///< out-of-place and in-place
};

Columns parseColumnHeader(std::string_view body)
{
    Columns c;
    c.known = true;
    const auto t = split(body);
    c.redop = std::find(t.begin(), t.end(), "redop") != t.end();
    c.root = std::find(t.begin(), t.end(), "root") != t.end();
    c.groups = static_cast<int>(std::count(t.begin(), t.end(), "time"));
    if (c.groups < 1 || c.groups > 2)
        c.groups = 2;
    return c;
}

bool parseTiming(const std::vector<std::string_view>& t, size_t at, NcclTiming& out,
                 std::string& why)
{
    double time_us = 0;
    if (!parseDouble(t[at], time_us) || time_us < 0) {
        why = "time '" + std::string(t[at]) + "' is not a non-negative number";
        return false;
    }
    if (!parseDouble(t[at + 1], out.algbw_gbps) || out.algbw_gbps < 0 ||
        !parseDouble(t[at + 2], out.busbw_gbps) || out.busbw_gbps < 0) {
        why = "bandwidth columns are not non-negative numbers";
        return false;
    }
    out.time_seconds = time_us * 1e-6;
    double maxError = 0;
    if (parseInt(t[at + 3], out.wrong) && out.wrong >= 0) {
        // a count of wrong elements (nccl-tests >= 2.10)
    } else if (t[at + 3] == "N/A" || (parseDouble(t[at + 3], maxError) && maxError >= 0)) {
        out.wrong = -1; // N/A, or older nccl-tests' largest error ("1e-07"): no count
    } else {
        why = "#wrong '" + std::string(t[at + 3]) + "' is neither a count nor N/A";
        return false;
    }
    return true;
}

/// Parses a row; returns false with a reason when it does not fit the columns.
bool parseRow(std::string_view body, const Columns& cols, NcclRow& row, std::string& why)
{
    const auto t = split(body);
    int middle = 0;
    int groups = cols.groups;
    if (cols.known) {
        middle = (cols.redop ? 1 : 0) + (cols.root ? 1 : 0);
        if (static_cast<int>(t.size()) != 3 + middle + 4 * groups) {
            why = "expected " + std::to_string(3 + middle + 4 * groups) + " columns, found " +
                  std::to_string(t.size());
            return false;
        }
    } else {
        // No header seen: infer the layout from the column count.
        const int n = static_cast<int>(t.size());
        if (n >= 11 && n <= 13) {
            groups = 2;
            middle = n - 11;
        } else if (n >= 7 && n <= 9) {
            groups = 1;
            middle = n - 7;
        } else {
            why = "unexpected number of columns (" + std::to_string(n) + ")";
            return false;
        }
    }
    long long size = 0;
    if (!parseInt(t[0], size) || size < 0) {
        why = "size '" + std::string(t[0]) + "' is not a byte count";
        return false;
    }
    if (!parseInt(t[1], row.count) || row.count < 0) {
        why = "count '" + std::string(t[1]) + "' is not an element count";
        return false;
    }
    row.size_bytes = static_cast<double>(size);
    row.type = std::string(t[2]);
    size_t at = 3;
    auto takeRoot = [&](std::string_view s) {
        long long r = 0;
        if (!parseInt(s, r))
            return false;
        row.root = static_cast<int>(r);
        return true;
    };
    if (cols.known) {
        if (cols.redop)
            row.redop = std::string(t[at++]);
        if (cols.root && !takeRoot(t[at++])) {
            why = "root '" + std::string(t[at - 1]) + "' is not a rank";
            return false;
        }
    } else {
        for (int i = 0; i < middle; ++i, ++at) {
            if (!takeRoot(t[at]))
                row.redop = std::string(t[at]);
        }
    }
    if (!parseTiming(t, at, row.out_of_place, why))
        return false;
    if (groups == 2) {
        NcclTiming ip;
        if (!parseTiming(t, at + 4, ip, why))
            return false;
        row.in_place = ip;
    }
    return true;
}

bool startsWithInteger(std::string_view body)
{
    body = trim(body);
    return !body.empty() && std::isdigit(static_cast<unsigned char>(body.front()));
}

bool near(double a, double b, double tol)
{
    return std::abs(a - b) <= tol * std::max(std::abs(a), std::abs(b));
}

class Parser
{
public:
    Parser(const NcclLogConfig& config) : m_config(config) {}

    NcclLogResult run(std::string_view text)
    {
        size_t pos = 0;
        int lineNo = 0;
        while (pos <= text.size()) {
            auto end = text.find('\n', pos);
            if (end == std::string_view::npos)
                end = text.size();
            ++lineNo;
            line(stripPrefix(text.substr(pos, end - pos)), lineNo);
            if (m_config.progress && lineNo % 256 == 0 &&
                !m_config.progress(static_cast<double>(end) /
                                   static_cast<double>(std::max<size_t>(1, text.size()))))
                throw InputError(m_config.source, m_config.source + ": reading cancelled");
            if (end == text.size())
                break;
            pos = end + 1;
        }
        finish(lineNo, /*atEnd=*/true);
        if (m_result.tables.empty())
            throw InputError(m_config.source, m_config.source +
                                                  ": no nccl-tests result table found (expected "
                                                  "rows under a '# size count type ...' header)");
        if (m_config.progress)
            m_config.progress(1.0);
        return std::move(m_result);
    }

private:
    void warn(int line, std::string msg) { m_result.warnings.push_back({line, std::move(msg)}); }

    std::string where(int line) const { return m_config.source + ":" + std::to_string(line); }

    void line(std::string_view l, int lineNo)
    {
        const auto body = trim(l);
        if (body.empty())
            return;
        if (body.front() == '#') {
            comment(trim(body.substr(1)), lineNo);
            return;
        }
        if (startsWithInteger(body)) {
            row(body, lineNo);
            return;
        }
        if (body.find("NCCL INFO") != std::string_view::npos) {
            const auto v = body.find("NCCL version ");
            if (v != std::string_view::npos && m_ncclVersion.empty()) {
                const auto t = split(body.substr(v + 13));
                if (!t.empty())
                    m_ncclVersion = std::string(t[0].substr(0, t[0].find('+')));
            }
            return;
        }
        const auto op = opFromPerfName(body);
        if (!op.empty() && !m_table) {
            m_pendingOp = op;
            return;
        }
        if (body.find("NCCL WARN") != std::string_view::npos ||
            body.find("failure") != std::string_view::npos ||
            body.find("rror") != std::string_view::npos)
            warn(lineNo, std::string(body));
    }

    // The NCCL version after "nccl-library=" at `lib`; empty when nothing follows it.
    static std::string ncclVersionAfter(std::string_view c, std::size_t lib)
    {
        const auto t = split(c.substr(lib + 13));
        return t.empty() ? std::string() : versionFromCode(t.front());
    }

    void comment(std::string_view c, int lineNo)
    {
        if (blockComment(c, lineNo) || tableComment(c, lineNo))
            return;
        if (c.starts_with("Out of bounds values")) {
            if (c.find("FAILED") != std::string_view::npos)
                warn(lineNo, "nccl-tests reported wrong results: " + std::string(c));
            return;
        }
        if (c.starts_with("Reducing maxBytes") || c.find("WARN") != std::string_view::npos)
            warn(lineNo, "nccl-tests: " + std::string(c));
        else if (!m_table) {
            const auto op = opFromPerfName(c);
            if (!op.empty())
                m_pendingOp = op;
        }
    }

    // A comment that starts or ends a test block or names its versions, iterations or
    // devices; false when `c` is none of those.
    bool blockComment(std::string_view c, int lineNo)
    {
        if (c.starts_with("nccl-tests version")) {
            finish(lineNo, false);
            const auto t = split(c);
            if (t.size() > 2)
                m_testsVersion = std::string(t[2]);
            const auto lib = c.find("nccl-library=");
            if (lib != std::string_view::npos)
                m_ncclVersion = ncclVersionAfter(c, lib);
            return true;
        }
        if (c.starts_with("paralens-measure")) { // paralens-measure's stdout
            finish(lineNo, false);
            const auto lib = c.find("nccl-library=");
            if (lib != std::string_view::npos)
                m_ncclVersion = ncclVersionAfter(c, lib);
            return true;
        }
        if (c.starts_with("Collective test starting:")) {
            finish(lineNo, false);
            m_pendingOp = opFromPerfName(c);
            m_blockLine = lineNo;
            return true;
        }
        if (c.starts_with("Collective test concluded")) {
            finish(lineNo, false);
            m_pendingOp.clear();
            return true;
        }
        if (c.starts_with("nThread")) {
            const auto t = split(c);
            for (size_t i = 0; i + 1 < t.size(); ++i) {
                long long v = 0;
                if (t[i] == "iters:" && (i == 0 || t[i - 1] != "agg") && parseInt(t[i + 1], v))
                    m_iterations = static_cast<int>(v);
            }
            return true;
        }
        if (c.starts_with("Using devices")) {
            finish(lineNo, false);
            m_devices.clear();
            if (m_blockLine == 0)
                m_blockLine = lineNo;
            return true;
        }
        if (c.starts_with("Rank")) {
            if (auto d = parseDevice(c)) {
                if (m_table && !m_table->rows.empty())
                    finish(lineNo, false);
                m_devices.push_back(*d);
            }
            return true;
        }
        return false;
    }

    // A table's column header or its "Avg bus bandwidth" footer; false when `c` is neither.
    bool tableComment(std::string_view c, int lineNo)
    {
        if (c.find("algbw") != std::string_view::npos &&
            c.find("busbw") != std::string_view::npos) {
            if (m_table && !m_table->rows.empty())
                finish(lineNo, false);
            m_columns = parseColumnHeader(c);
            openTable(lineNo);
            return true;
        }
        if (!c.starts_with("Avg bus bandwidth"))
            return false;
        if (m_table) {
            const auto colon = c.find(':');
            double v = 0;
            if (colon != std::string_view::npos && parseDouble(trim(c.substr(colon + 1)), v))
                m_table->avg_busbw_gbps = v;
            if (m_bad) {
                // A bad row followed by the footer is a broken row, not a cut-off log.
                throw InputError(where(m_bad->line), where(m_bad->line) +
                                                         ": malformed nccl-tests row (" +
                                                         m_bad->why + ")");
            }
            m_table->complete = true;
            finish(lineNo, false);
        }
        return true;
    }

    void openTable(int lineNo)
    {
        m_table = NcclTable{};
        m_table->first_line = m_blockLine ? m_blockLine : lineNo;
        m_bad.reset();
    }

    void row(std::string_view body, int lineNo)
    {
        if (!m_table) {
            m_columns = Columns{};
            openTable(lineNo);
        }
        NcclRow r;
        std::string why;
        if (!parseRow(body, m_columns, r, why)) {
            if (m_bad)
                throw InputError(where(m_bad->line), where(m_bad->line) +
                                                         ": malformed nccl-tests row (" +
                                                         m_bad->why + ")");
            m_bad = Bad{lineNo, why};
            return;
        }
        if (m_bad)
            throw InputError(where(m_bad->line), where(m_bad->line) +
                                                     ": malformed nccl-tests row (" + m_bad->why +
                                                     ")");
        r.line = lineNo;
        if (r.out_of_place.wrong > 0 || (r.in_place && r.in_place->wrong > 0))
            warn(lineNo, "nccl-tests counted wrong elements at size " +
                             std::to_string(static_cast<long long>(r.size_bytes)));
        m_table->rows.push_back(std::move(r));
    }

    void finish(int lineNo, bool atEnd)
    {
        if (!m_table)
            return;
        NcclTable t = std::move(*m_table);
        m_table.reset();
        if (m_bad) {
            warn(m_bad->line, "truncated row ignored (" + m_bad->why + ")");
            m_bad.reset();
        }
        if (t.rows.empty()) {
            m_pendingOp.clear();
            m_blockLine = 0;
            return;
        }
        if (!t.complete)
            warn(atEnd ? lineNo : t.rows.back().line,
                 "table starting at line " + std::to_string(t.first_line) +
                     " has no 'Avg bus bandwidth' footer (log cut off?)");
        t.nccl_version = m_ncclVersion;
        t.nccl_tests_version = m_testsVersion;
        t.iterations = m_iterations;
        t.ranks = static_cast<int>(m_devices.size());
        for (const auto& d : m_devices)
            if (std::find(t.hosts.begin(), t.hosts.end(), d.host) == t.hosts.end())
                t.hosts.push_back(d.host);
        t.nodes = static_cast<int>(t.hosts.size());
        if (!m_devices.empty())
            t.device_name = m_devices.front().name;
        t.op = m_pendingOp.empty() ? m_config.default_op : m_pendingOp;
        if (t.op.empty())
            t.op = inferOp(t);
        t.collective = parseCollective(t.op);
        if (!t.collective)
            warn(t.first_line, "operation '" + t.op + "' is not one the model prices; kept");
        if (t.ranks == 0)
            inferRanks(t);
        if (t.nodes == 0)
            warn(t.first_line, "table at line " + std::to_string(t.first_line) +
                                   " names no hosts; assuming one node");
        m_result.tables.push_back(std::move(t));
        m_pendingOp.clear();
        m_blockLine = 0;
    }

    /// busbw/algbw of the largest row (the factor, printed with 2 decimals so the largest
    /// numbers are the most precise).
    static double factorOf(const NcclTable& t)
    {
        const auto& r = *std::max_element(t.rows.begin(), t.rows.end(), [](auto& a, auto& b) {
            return a.out_of_place.algbw_gbps < b.out_of_place.algbw_gbps;
        });
        return r.out_of_place.algbw_gbps > 0 ? r.out_of_place.busbw_gbps / r.out_of_place.algbw_gbps
                                             : 0.0;
    }

    std::string inferOp(const NcclTable& t)
    {
        const double f = factorOf(t);
        const auto& r = t.rows.back();
        const bool reduces = !r.redop.empty() && r.redop != "none";
        std::string op;
        if (f > 1.02)
            op = "all_reduce";
        else if (near(f, 1.0, 0.02))
            op = r.root >= 0 ? (reduces ? "reduce" : "broadcast") : "sendrecv";
        else if (f > 0 && reduces)
            op = "reduce_scatter";
        else
            throw InputError(where(t.first_line),
                             where(t.first_line) +
                                 ": the table does not name its operation and its columns fit both "
                                 "all_gather and alltoall; give the operation explicitly (--op)");
        warn(t.first_line, "table at line " + std::to_string(t.first_line) +
                               " does not name its operation; inferred '" + op +
                               "' from its columns");
        return op;
    }

    void inferRanks(NcclTable& t)
    {
        const double f = factorOf(t);
        double n = 0;
        if (t.collective == Collective::AllReduce && f < 2.0)
            n = 2.0 / (2.0 - f);
        else if ((t.collective == Collective::AllGather ||
                  t.collective == Collective::ReduceScatter ||
                  t.collective == Collective::AllToAll) &&
                 f < 1.0)
            n = 1.0 / (1.0 - f);
        if (n >= 1.5) {
            t.ranks = static_cast<int>(std::lround(n));
            warn(t.first_line, "table at line " + std::to_string(t.first_line) +
                                   " lists no devices; inferred " + std::to_string(t.ranks) +
                                   " ranks from busbw/algbw");
        } else {
            warn(t.first_line, "table at line " + std::to_string(t.first_line) +
                                   " lists no devices; rank count unknown");
        }
    }

    struct Bad
    {
        int line;
        std::string why;
    };

    const NcclLogConfig& m_config;
    NcclLogResult m_result;
    std::optional<NcclTable> m_table;
    std::optional<Bad> m_bad;
    Columns m_columns;
    std::vector<Device> m_devices;
    std::string m_pendingOp;
    std::string m_ncclVersion;
    std::string m_testsVersion;
    int m_iterations = 0;
    int m_blockLine = 0;
};

} // namespace

NcclLogResult parseNcclLog(std::string_view text, const NcclLogConfig& config)
{
    return Parser(config).run(text);
}

NcclLogResult readNcclLog(const std::string& path, NcclLogConfig config)
{
    const std::string text = readInputFile(path, kMaxNcclLogFileBytes, "nccl-tests log", path);
    if (config.source == NcclLogConfig{}.source)
        config.source = path;
    return parseNcclLog(text, config);
}

bool looksLikeNcclLog(std::string_view text)
{
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first != std::string_view::npos && text[first] == '{')
        return false;
    return text.find("algbw") != std::string_view::npos &&
           text.find("busbw") != std::string_view::npos;
}

int ncclTypeBytes(std::string_view type)
{
    if (type == "int8" || type == "uint8" || type == "char" || type == "f8e4m3" || type == "f8e5m2")
        return 1;
    if (type == "half" || type == "bfloat16" || type == "float16")
        return 2;
    if (type == "int32" || type == "uint32" || type == "float" || type == "int" ||
        type == "float32")
        return 4;
    if (type == "int64" || type == "uint64" || type == "double" || type == "float64")
        return 8;
    return 0;
}

} // namespace paralens
