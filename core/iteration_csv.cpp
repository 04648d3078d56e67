// SPDX-License-Identifier: GPL-3.0-or-later
// The measured-iteration CSV (one row per run; docs/runs-format.md lists the columns and what
// every row is assumed to have run).
#include "core/accuracy.h"

#include "core/error.h"
#include "core/input_file.h"
#include "core/json_reader.h"
#include "core/spec_io.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

namespace paralens {
namespace {

enum Col : std::size_t
{
    Params,
    Gpus,
    GlobalBatch,
    MicroBatch,
    Hidden,
    Heads,
    Layers,
    SeqLen,
    Tp,
    Dp,
    Pp,
    TimeMs,
    kCols
};

// Header names as the validation folder's files spell them (compared case-insensitively).
constexpr std::array<std::string_view, kCols> kNames{"parameters (billion)",
                                                     "# gpus",
                                                     "global batch",
                                                     "micro batch",
                                                     "hidden size",
                                                     "attention heads",
                                                     "# layers",
                                                     "sequence length",
                                                     "tensor parallelism",
                                                     "data parallelism",
                                                     "pipeline parallelism",
                                                     "iteration time (ms)"};

constexpr double kMaxIterationMs = 1e10; // ~4 months

// vTrain's GPT configs (VIA-Research/vTrain src/config.py, src/predictor.py).
constexpr std::int64_t kGptVocab = 50257;

std::string_view trim(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

std::string lower(std::string_view s)
{
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return char(c >= 'A' && c <= 'Z' ? c + 32 : c); });
    return out;
}

struct Where
{
    const std::string& file;
    std::size_t line;
};

[[noreturn]] void fail(const Where& w, const std::string& field, const std::string& what)
{
    throw InputError(field, w.file + ":" + std::to_string(w.line) + ": " + what);
}

// Splits one line into cells; a cell may be double-quoted ("" inside is a quote).
std::vector<std::string> splitCells(std::string_view line, const Where& w)
{
    std::vector<std::string> cells;
    std::size_t i = 0;
    while (true) {
        std::string cell;
        const std::string_view rest = trim(line.substr(i));
        if (!rest.empty() && rest.front() == '"') {
            i = std::size_t(rest.data() - line.data()) + 1;
            while (true) {
                if (i >= line.size())
                    fail(w, "", "a quoted cell is not closed (is the file truncated?)");
                if (line[i] == '"') {
                    if (i + 1 < line.size() && line[i + 1] == '"') {
                        cell += '"';
                        i += 2;
                        continue;
                    }
                    ++i;
                    break;
                }
                cell += line[i++];
            }
            const std::size_t comma = std::min(line.find(',', i), line.size());
            if (!trim(line.substr(i, comma - i)).empty())
                fail(w, "", "text after the closing quote of a cell");
            i = comma;
        } else {
            const std::size_t comma = std::min(line.find(',', i), line.size());
            cell = std::string(trim(line.substr(i, comma - i)));
            i = comma;
        }
        cells.push_back(std::move(cell));
        if (i >= line.size())
            return cells;
        ++i; // past the comma
    }
}

struct Header
{
    std::array<std::size_t, kCols> index{}; // cell index of each column; kCols = absent
    std::vector<std::string> names;         // as written
};

Header readHeader(const std::vector<std::string>& cells, const Where& w)
{
    Header h;
    h.index.fill(kCols);
    h.names = cells;
    for (std::size_t c = 0; c < cells.size(); ++c) {
        const std::string name = lower(trim(cells[c]));
        const auto it = std::find(kNames.begin(), kNames.end(), name);
        if (it == kNames.end()) {
            std::string known;
            for (const auto k : kNames)
                known += (known.empty() ? "'" : ", '") + std::string(k) + "'";
            fail(w, cells[c],
                 "column " + std::to_string(c + 1) + " '" + cells[c] +
                     "': unknown column (known: " + known + ")");
        }
        const std::size_t col = std::size_t(it - kNames.begin());
        if (h.index[col] != kCols)
            fail(w, cells[c],
                 "column " + std::to_string(c + 1) + " '" + cells[c] + "' repeats column " +
                     std::to_string(h.index[col] + 1));
        h.index[col] = c;
    }
    std::string missing;
    for (std::size_t col = Gpus; col < kCols; ++col) // every column but Params is required
        if (h.index[col] == kCols)
            missing += (missing.empty() ? "'" : ", '") + std::string(kNames[col]) + "'";
    if (!missing.empty())
        fail(w, "", "missing column(s) " + missing);
    return h;
}

struct Row
{
    const Header& h;
    const std::vector<std::string>& cells;
    Where w;

    std::string label(std::size_t col) const
    {
        return "column " + std::to_string(h.index[col] + 1) + " '" + h.names[h.index[col]] + "'";
    }
    [[noreturn]] void bad(std::size_t col, const std::string& what) const
    {
        fail(w, std::string(kNames[col]), label(col) + ": " + what);
    }
    std::string_view text(std::size_t col) const
    {
        const std::string_view t = cells[h.index[col]];
        if (t.empty())
            bad(col, "empty cell");
        return t;
    }
    [[noreturn]] void notNumber(std::size_t col, std::string_view t) const
    {
        bad(col, "'" + std::string(t) +
                     "' is not a number (units belong in the header, as in "
                     "'iteration time (ms)')");
    }
    std::int64_t integer(std::size_t col, std::int64_t max) const
    {
        const std::string_view t = text(col);
        std::int64_t v = 0;
        const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
        if (ec == std::errc::result_out_of_range)
            bad(col, "'" + std::string(t) + "' exceeds the bound " + std::to_string(max));
        if (ec != std::errc() || end != t.data() + t.size()) {
            double d = 0;
            const auto [dend, dec] = std::from_chars(t.data(), t.data() + t.size(), d);
            if (dec == std::errc() && dend == t.data() + t.size())
                bad(col, "'" + std::string(t) + "' is not a whole number");
            notNumber(col, t);
        }
        if (v < 1)
            bad(col, std::to_string(v) + " is below the minimum 1");
        if (v > max)
            bad(col, std::to_string(v) + " exceeds the bound " + std::to_string(max));
        return v;
    }
    double positive(std::size_t col, double max) const
    {
        const std::string_view t = text(col);
        double v = 0;
        const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
        if (ec == std::errc::result_out_of_range)
            bad(col, "'" + std::string(t) + "' is out of range");
        if (ec != std::errc() || end != t.data() + t.size())
            notNumber(col, t);
        if (!std::isfinite(v))
            bad(col, "'" + std::string(t) + "' is not a finite number");
        if (v <= 0)
            bad(col, jsonio::number(v) + " must be greater than 0");
        if (v > max)
            bad(col, jsonio::number(v) + " exceeds the bound " + jsonio::number(max));
        return v;
    }
};

ModelSpec gptModel(const Row& r)
{
    ModelSpec m;
    m.layers = int(r.integer(Layers, bounds::kMaxLayers));
    m.hidden = r.integer(Hidden, bounds::kMaxHidden);
    m.heads = int(r.integer(Heads, bounds::kMaxHeads));
    m.kv_heads = m.heads;
    m.ffn_hidden = 4 * m.hidden;
    m.vocab = kGptVocab;
    m.gated_mlp = false;
    // vTrain's GPT is Megatron-LM's GPT: learned absolute positions and LayerNorm (Megatron's
    // defaults, --position-embedding-type learned_absolute, --normalization LayerNorm).
    m.position_embedding = PositionEmbedding::Learned;
    m.norm = NormType::LayerNorm;
    m.tied_embeddings = false;
    const std::string shape = "L" + std::to_string(m.layers) + " h" + std::to_string(m.hidden) +
                              " a" + std::to_string(m.heads);
    m.name = r.h.index[Params] != kCols
                 ? "GPT " + jsonio::number(r.positive(Params, 1e6)) + "B (" + shape + ")"
                 : "GPT " + shape;
    return m;
}

MeasuredRun rowRun(const Row& r, const Scenario& cluster)
{
    MeasuredRun run;
    Scenario& s = run.scenario;
    s.hardware_id = cluster.hardware_id;
    s.cluster = cluster.cluster;
    s.model = gptModel(r);
    s.gpus = int(r.integer(Gpus, bounds::kMaxGpus));
    ParallelPlan& p = s.parallel;
    p.tp = int(r.integer(Tp, bounds::kMaxGpus));
    p.dp = int(r.integer(Dp, bounds::kMaxGpus));
    p.pp = int(r.integer(Pp, bounds::kMaxGpus));
    p.schedule = Schedule::OneF1B;
    TrainingSettings& t = s.training;
    t.seq_len = int(r.integer(SeqLen, bounds::kMaxSeqLen));
    t.micro_batch = int(r.integer(MicroBatch, bounds::kMaxBatch));
    t.global_batch = int(r.integer(GlobalBatch, bounds::kMaxBatch));
    t.precision = Precision::FP16;
    t.recompute = Recompute::Full;
    t.flash_attention = false;
    t.optimizer = Optimizer::Adam;
    t.framework = Framework::DeepSpeed;
    t.overlap_grad_reduce = false;
    run.measured.push_back({RunMetric::StepSeconds, r.positive(TimeMs, kMaxIterationMs) / 1000});
    run.origin = r.w.file + ":" + std::to_string(r.w.line);
    run.source = r.w.file;
    const std::string plan = " tp" + std::to_string(p.tp) + " dp" + std::to_string(p.dp) + " pp" +
                             std::to_string(p.pp) + " mb" + std::to_string(t.micro_batch) + " gb" +
                             std::to_string(t.global_batch);
    const std::string shortModel =
        s.model.name.substr(0, std::min(s.model.name.find(" ("), s.model.name.size()));
    run.name = shortModel + plan + " (line " + std::to_string(r.w.line) + ")";
    return run;
}

std::vector<std::string> csvAssumptions(const Scenario& cluster)
{
    const std::string hw = cluster.hardware_id.empty() ? cluster.cluster.name : cluster.hardware_id;
    return {
        "model: GPT-style as in vTrain's configs: GeLU MLP with ffn = 4 x hidden, multi-head "
        "attention (kv_heads = heads), vocabulary 50257, separate input and output embeddings",
        "plan: gpus from '# GPUs', tp / dp / pp from their columns, 1F1B schedule, no sequence "
        "parallelism, no ZeRO; framework deepspeed (Megatron-DeepSpeed: FP16 gradients, reduced in "
        "FP16)",
        "training: full activation recompute (use_checkpoint: true), no flash attention, FP16 "
        "mixed precision (precision fp16: BF16's tensor-core peak, DeepSpeed's FP16 optimizer), "
        "Adam",
        "DP gradient all-reduce not overlapped with the backward (use_gradient_bucket: false; "
        "training.overlap_grad_reduce = false)",
        "cluster: " + hw + " (--hardware), " + std::to_string(cluster.cluster.gpus_per_node) +
            " GPUs per node",
    };
}

} // namespace

RunSet parseIterationCsv(std::string_view text, const std::string& file,
                         const Scenario& cluster_template)
{
    if (text.substr(0, 3) == "\xEF\xBB\xBF") // a byte-order mark, as spreadsheets write
        text.remove_prefix(3);
    RunSet set;
    set.file = file;
    set.assumptions = csvAssumptions(cluster_template);
    std::optional<Header> header;
    std::size_t line = 0, pos = 0;
    while (pos < text.size()) {
        ++line;
        const std::size_t nl = std::min(text.find('\n', pos), text.size());
        const bool last = nl == text.size();
        const std::string_view raw = text.substr(pos, nl - pos);
        pos = nl + 1;
        if (trim(raw).empty())
            continue;
        const Where w{file, line};
        const std::vector<std::string> cells = splitCells(raw, w);
        if (!header) {
            header = readHeader(cells, w);
            continue;
        }
        if (cells.size() != header->names.size())
            fail(w, "",
                 std::to_string(cells.size()) + " cells, the header has " +
                     std::to_string(header->names.size()) +
                     (last && cells.size() < header->names.size()
                          ? " (the last line is cut short: is the file truncated?)"
                          : ""));
        set.runs.push_back(rowRun(Row{*header, cells, w}, cluster_template));
    }
    if (!header)
        throw InputError("", file + ": empty file (expected a header line and one row per run)");
    if (set.runs.empty())
        throw InputError("", file + ": a header but no rows");
    return set;
}

RunSet readIterationCsv(const std::string& path, const Scenario& cluster_template)
{
    return parseIterationCsv(readInputFile(path, kMaxRunsFileBytes, "CSV file", ""), path,
                             cluster_template);
}

} // namespace paralens
