// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/launch_import.h"

#include "core/error.h"
#include "core/input_file.h"
#include "core/launch_import_detail.h"
#include "core/spec_io.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

namespace paralens {
namespace launch {

void ImportContext::fail(const std::string& field, const std::string& what) const
{
    throw InputError(field, source + ": " + (field.empty() ? "" : field + ": ") + what);
}

void ImportContext::noteUnread(const std::vector<std::string>& unread)
{
    if (unread.empty())
        return;
    std::string list;
    for (std::size_t i = 0; i < unread.size() && i < 12; ++i)
        list += (i ? ", " : "") + unread[i];
    notes.push_back("not modelled, ignored: " + list + (unread.size() > 12 ? ", ..." : ""));
}

bool sameShape(const ModelSpec& a, const ModelSpec& b)
{
    ModelSpec x = a, y = b;
    x.name = y.name;
    // head_dim 0 means hidden / heads: the same shape as that figure written out.
    x.head_dim = x.headDim();
    y.head_dim = y.headDim();
    if (x.position_embedding != y.position_embedding || x.norm != y.norm)
        return false;
    return x.layers == y.layers && x.hidden == y.hidden && x.heads == y.heads &&
           x.kv_heads == y.kv_heads && x.head_dim == y.head_dim && x.ffn_hidden == y.ffn_hidden &&
           x.vocab == y.vocab && x.gated_mlp == y.gated_mlp &&
           x.tied_embeddings == y.tied_embeddings && x.qk_norm == y.qk_norm &&
           x.mtp_layers == y.mtp_layers && x.moe == y.moe && x.mla == y.mla;
}

namespace {

void usePreset(ImportContext& ctx, const std::string& id, Scenario& s)
{
    const ModelSpec* spec = ctx.presets.model(id);
    if (!spec)
        ctx.fail("model", "unknown model preset '" + id + "' (paralens presets lists them)");
    s.model_id = id;
    s.model = *spec;
}

} // namespace

void resolveModel(ImportContext& ctx, const std::optional<ModelSpec>& shape, Scenario& s)
{
    if (!ctx.options.model_id.empty()) {
        usePreset(ctx, ctx.options.model_id, s);
        if (shape && !sameShape(*shape, s.model))
            ctx.notes.push_back("the file's model shape differs from preset '" +
                                ctx.options.model_id + "'; the preset (--model) is used");
        return;
    }
    if (shape) {
        // The header's preset when it has this shape, else any preset of this shape.
        std::vector<std::string> ids{ctx.header.model_id};
        for (const auto& id : ctx.presets.modelIds())
            ids.push_back(id);
        for (const auto& id : ids)
            if (const ModelSpec* p = id.empty() ? nullptr : ctx.presets.model(id);
                p && sameShape(*p, *shape)) {
                usePreset(ctx, id, s);
                return;
            }
        s.model_id.clear();
        s.model = *shape;
        s.model.name = ctx.header.model_name.empty() ? "Imported model" : ctx.header.model_name;
        return;
    }
    if (!ctx.header.model_id.empty()) {
        usePreset(ctx, ctx.header.model_id, s);
        return;
    }
    ctx.fail("model", "the file does not give the model's shape; name a preset with --model");
}

void resolveHardware(ImportContext& ctx, Scenario& s)
{
    std::string id =
        ctx.options.hardware_id.empty() ? ctx.header.hardware_id : ctx.options.hardware_id;
    if (id.empty()) {
        id = "h100-sxm";
        ctx.notes.push_back("the file does not name the cluster: h100-sxm assumed (--hardware)");
    }
    const ClusterSpec* c = ctx.presets.hardware(id);
    if (!c)
        ctx.fail("hardware", "unknown hardware preset '" + id + "' (paralens presets lists them)");
    s.hardware_id = id;
    s.cluster = *c;
}

void setWorld(ImportContext& ctx, Scenario& s, std::int64_t world, const std::string& field)
{
    auto& p = s.parallel;
    const std::int64_t model = std::int64_t{p.tp} * p.pp * p.cp; // each <= 1e6
    if (world < model || world % model != 0)
        ctx.fail(field, "the job's " + std::to_string(world) +
                            " GPUs are not a multiple of tp·pp·cp = " + std::to_string(model));
    if (world > bounds::kMaxGpus)
        ctx.fail(field, std::to_string(world) + " GPUs exceed the bound " +
                            std::to_string(bounds::kMaxGpus));
    s.gpus = static_cast<int>(world);
    p.dp = static_cast<int>(world / model);
}

namespace {

// A Python list expression of 0s and 1s: [a, b, ...], E * n, E + E, (E). Bounded: no list
// longer than the model's layers is ever built.
class PatternParser
{
public:
    PatternParser(std::string_view t, std::size_t limit) : m_t(t), m_limit(limit) {}
    std::optional<std::vector<int>> run(std::string& error)
    {
        try {
            auto v = sum();
            space();
            if (m_i != m_t.size())
                throw std::string("unexpected '") + m_t[m_i] + "'";
            return v;
        } catch (const std::string& e) {
            error = e;
            return std::nullopt;
        }
    }

private:
    void space()
    {
        while (m_i < m_t.size() && (m_t[m_i] == ' ' || m_t[m_i] == '\t'))
            ++m_i;
    }
    bool eat(char c)
    {
        space();
        if (m_i < m_t.size() && m_t[m_i] == c) {
            ++m_i;
            return true;
        }
        return false;
    }
    long long integer()
    {
        space();
        long long n = 0;
        const std::size_t start = m_i;
        while (m_i < m_t.size() && m_t[m_i] >= '0' && m_t[m_i] <= '9') {
            n = n * 10 + (m_t[m_i++] - '0');
            if (n > 1000000000)
                throw std::string("number too large");
        }
        if (m_i == start)
            throw std::string("expected a number");
        return n;
    }
    void check(std::size_t n) const
    {
        if (n > m_limit)
            throw std::string("the pattern is longer than the model's layers");
    }
    std::vector<int> sum()
    {
        auto v = product();
        while (eat('+')) {
            auto w = product();
            check(v.size() + w.size());
            v.insert(v.end(), w.begin(), w.end());
        }
        return v;
    }
    std::vector<int> product()
    {
        auto v = atom();
        while (eat('*')) {
            const long long n = integer();
            if (v.empty())
                continue;
            check(n > 0 ? std::size_t(n) * v.size() : 0);
            std::vector<int> r;
            for (long long i = 0; i < n; ++i)
                r.insert(r.end(), v.begin(), v.end());
            v = std::move(r);
        }
        return v;
    }
    std::vector<int> atom()
    {
        if (++m_depth > 64)
            throw std::string("nested too deeply");
        std::vector<int> v;
        if (eat('(')) {
            v = sum();
            if (!eat(')'))
                throw std::string("expected ')'");
        } else if (eat('[')) {
            if (!eat(']')) {
                do {
                    const long long n = integer();
                    if (n > 1)
                        throw std::string("list entries must be 0 or 1");
                    v.push_back(int(n));
                    check(v.size());
                } while (eat(','));
                if (!eat(']'))
                    throw std::string("expected ']'");
            }
        } else {
            throw std::string("expected '[' or '('");
        }
        --m_depth;
        return v;
    }

    std::string_view m_t;
    std::size_t m_limit;
    std::size_t m_i = 0;
    int m_depth = 0;
};

} // namespace

void readMoeLayerFreq(const ImportContext& ctx, const std::string& field, std::string_view text,
                      int layers, MoeSpec& moe)
{
    std::string t(text);
    if (!t.empty() && t.find_first_not_of("0123456789") == std::string::npos) {
        if (t.size() > 6 || std::stoi(t) < 1 || std::stoi(t) > layers)
            ctx.fail(field, "'" + t + "' must be between 1 and the layers");
        moe.first_dense_layers = 0;
        moe.layer_frequency = std::stoi(t);
        return;
    }
    std::string error;
    const auto pattern = PatternParser(t, std::size_t(std::max(0, layers))).run(error);
    if (!pattern)
        ctx.fail(field, "'" + t + "' is not a layer pattern: " + error);
    if (int(pattern->size()) != layers)
        ctx.fail(field, "the pattern has " + std::to_string(pattern->size()) + " entries for " +
                            std::to_string(layers) + " layers");
    // Leading dense layers, then an MoE layer every f.
    int first = 0;
    while (first < layers && (*pattern)[first] == 0)
        ++first;
    if (first == layers)
        ctx.fail(field, "the pattern has no MoE layer");
    int f = 1;
    while (first + f < layers && (*pattern)[first + f] == 0)
        ++f;
    for (int i = first; i < layers; ++i)
        if ((*pattern)[i] != ((i - first) % f == 0 ? 1 : 0))
            ctx.fail(field, "paralens holds leading dense layers then an MoE layer every N; "
                            "this pattern is irregular");
    moe.first_dense_layers = first;
    moe.layer_frequency = f;
}

} // namespace launch

namespace {

// The first character that is not a byte order mark or blank.
char firstChar(std::string_view text)
{
    std::size_t i = text.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
    while (i < text.size() &&
           (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n'))
        ++i;
    return i < text.size() ? text[i] : '\0';
}

// A TOML table header alone on a line: [name] or [dotted.name], then at most a comment.
bool hasTomlHeader(std::string_view text)
{
    std::size_t p = 0;
    while (p < text.size()) {
        const std::size_t end = std::min(text.find('\n', p), text.size());
        std::string_view line = text.substr(p, end - p);
        const auto open = line.find_first_not_of(" \t");
        if (open != std::string_view::npos && line[open] == '[') {
            std::size_t q = open + 1;
            while (q < line.size() &&
                   (std::isalnum(static_cast<unsigned char>(line[q])) || line[q] == '_' ||
                    line[q] == '-' || line[q] == '.' || line[q] == '"'))
                ++q;
            if (q > open + 1 && q < line.size() && line[q] == ']') {
                const auto rest = line.find_first_not_of(" \t\r", q + 1);
                if (rest == std::string_view::npos || line[rest] == '#')
                    return true;
            }
        }
        p = end + 1;
    }
    return false;
}

} // namespace

LaunchFramework detectLaunchFramework(std::string_view text, const std::string& source)
{
    if (firstChar(text) == '{')
        return LaunchFramework::DeepSpeed;
    if (hasTomlHeader(text))
        return LaunchFramework::Torchtitan;
    if (text.find("run_recipe.py") != std::string_view::npos)
        return LaunchFramework::MegatronBridge;
    if (text.find("--deepspeed") != std::string_view::npos)
        return LaunchFramework::DeepSpeed;
    if (text.find("--") != std::string_view::npos)
        return LaunchFramework::Megatron;
    throw InputError("", source + ": not a launch file (no --flags, TOML tables or JSON object)");
}

LaunchImport importLaunch(std::string_view text, const std::string& source,
                          const LaunchImportOptions& options, const PresetLibrary& presets,
                          const SiblingReader& read_sibling)
{
    std::vector<std::string> notes;
    launch::ImportContext ctx{source, options,     presets, launch::readHeaderIds(text),
                              notes,  read_sibling};
    const LaunchFramework f = detectLaunchFramework(text, source);
    LaunchImport out;
    if (f == LaunchFramework::Torchtitan)
        out = launch::importTorchtitanToml(text, ctx);
    else if (f == LaunchFramework::MegatronBridge)
        out = launch::importBridgeScript(text, ctx);
    else if (f == LaunchFramework::DeepSpeed && firstChar(text) == '{')
        out = launch::importDeepSpeedJson(text, ctx);
    else
        out = launch::importMegatronScript(text, ctx);
    out.notes.insert(out.notes.begin(), notes.begin(), notes.end());
    return out;
}

LaunchImport importLaunchFile(const std::string& path, const LaunchImportOptions& options,
                              const PresetLibrary& presets)
{
    const std::string text = readInputFile(path, kMaxLaunchFileBytes, "launch file", "");
    const std::filesystem::path folder = std::filesystem::path(path).parent_path();
    const SiblingReader sibling = [folder](const std::string& name) {
        const std::filesystem::path p =
            std::filesystem::path(name).is_absolute() ? std::filesystem::path(name) : folder / name;
        return readInputFile(p.string(), kMaxLaunchFileBytes, "DeepSpeed config", "");
    };
    return importLaunch(text, path, options, presets, sibling);
}

} // namespace paralens
