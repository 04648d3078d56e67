// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/collective.h"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace paralens {

/// One half of an nccl-tests row (out-of-place or in-place).
struct NcclTiming
{
    double time_seconds = 0; ///< nccl-tests' "time" column (printed in µs), converted
    double algbw_gbps = 0;   ///< "algbw" column, 1e9 B/s
    double busbw_gbps = 0;   ///< "busbw" column, 1e9 B/s
    long long wrong = -1;    ///< "#wrong" column; -1 when printed as N/A (validation off)
};

/// One result row of an nccl-tests table.
struct NcclRow
{
    double size_bytes = 0; ///< nccl-tests' size column (see MeasuredPerformance for its meaning)
    long long count = 0;   ///< elements
    std::string type;      ///< "float", "double", "bfloat16", ...
    std::string redop;     ///< "sum", "none", ... or empty when the table has no redop column
    int root = -1;         ///< -1 when none
    NcclTiming out_of_place;
    std::optional<NcclTiming> in_place; ///< absent when the table has only one group of columns
    int line = 0;                       ///< 1-based line in the input
};

/// One test table (one nccl-tests run of one operation).
struct NcclTable
{
    std::string op;                       ///< nccl-tests' name without "_perf": "all_reduce"
    std::optional<Collective> collective; ///< nullopt for ops the model does not use (reduce)
    int ranks = 0;                        ///< "#  Rank N ..." device lines, or inferred
    int nodes = 0;                        ///< distinct host names in the device lines
    std::vector<std::string> hosts;       ///< in order of first appearance
    std::string device_name;              ///< of rank 0, e.g. "NVIDIA H100 80GB HBM3"
    std::string nccl_version;             ///< "2.29.2" from "nccl-library=22902", or empty
    std::string nccl_tests_version;       ///< "2.17.8", or empty
    int iterations = 0;                   ///< "iters:" of the header, 0 when absent
    std::vector<NcclRow> rows;
    std::optional<double> avg_busbw_gbps; ///< the "# Avg bus bandwidth" footer
    bool complete = false;                ///< true when the footer was seen
    int first_line = 0;                   ///< 1-based line where the table's block starts

    /// Collective span: more than one host in the device lines means inter-node.
    Span span() const { return nodes > 1 ? Span::ScaleOut : Span::ScaleUp; }
};

/// Something in the log worth telling the user that did not stop the parse.
struct NcclLogWarning
{
    int line = 0; ///< 1-based, 0 when it concerns the whole input
    std::string message;
};

/// What the reader should assume. PlotJuggler-style: a config struct in, a result struct out.
struct NcclLogConfig
{
    std::string source = "<nccl-tests log>"; ///< name used in messages (file path)
    /// Operation to assume for tables whose header does not name one (e.g. "all_reduce").
    /// When empty, the reader infers the operation from the columns and warns.
    std::string default_op;
    /// Called with the fraction of input read (0..1); return false to cancel (InputError).
    std::function<bool(double)> progress;
};

struct NcclLogResult
{
    std::vector<NcclTable> tables;
    std::vector<NcclLogWarning> warnings;
};

/// Parses nccl-tests' standard text output: one or several tables (several operations per
/// file, "# Collective test starting: X_perf" headers or "# Using devices" blocks), comment
/// lines, srun/mpirun line prefixes ("0: ", "[1,0]<stdout>:"), NCCL INFO/WARN lines.
/// A cut-off last row or a missing footer is a warning. Throws InputError (field = source or
/// "source:line") when no table is found, a row in the middle of a table is malformed, or a
/// number is impossible (negative size, non-finite time).
NcclLogResult parseNcclLog(std::string_view text, const NcclLogConfig& config = {});

/// Reads a file and parses it; config.source defaults to the path. Throws InputError when the
/// file cannot be read.
NcclLogResult readNcclLog(const std::string& path, NcclLogConfig config = {});

/// True when the text looks like nccl-tests output (a column header with "algbw" and
/// "busbw"), used to tell logs from profile JSON.
bool looksLikeNcclLog(std::string_view text);

/// Element size in bytes of an nccl-tests type name ("float" 4, "bfloat16" 2, ...); 0 if
/// unknown.
int ncclTypeBytes(std::string_view type);

} // namespace paralens
