// SPDX-License-Identifier: GPL-3.0-or-later
// Calibration profile JSON (schemas 1 and 2): reading with named errors, writing, atomic save.
#include "core/calibration.h"

#include "core/error.h"
#include "core/input_file.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace paralens {
namespace {

using nlohmann::json;

double factorFor(Collective c, int ranks)
{
    const double f = busFactor(c, ranks);
    return f > 0 ? f : 1.0;
}

// ---- JSON helpers: every error names the path of the offending key ----

[[noreturn]] void bad(const std::string& source, const std::string& path, const std::string& what)
{
    throw InputError(path, source + ": " + path + ": " + what);
}

const json& member(const json& obj, const char* key, const std::string& source,
                   const std::string& path)
{
    const auto it = obj.find(key);
    if (it == obj.end())
        bad(source, path + key, "missing");
    return *it;
}

double number(const json& v, const std::string& source, const std::string& path,
              bool positive = false)
{
    if (!v.is_number())
        bad(source, path, "expected a number");
    const double d = v.get<double>();
    if (!std::isfinite(d) || d < 0 || (positive && d <= 0))
        bad(source, path, positive ? "must be a positive number" : "must be >= 0");
    return d;
}

int integer(const json& v, const std::string& source, const std::string& path)
{
    if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() > 1 << 24)
        bad(source, path, "expected a non-negative integer");
    return v.get<int>();
}

std::string text(const json& obj, const char* key, const std::string& source,
                 const std::string& path)
{
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null())
        return {};
    if (!it->is_string())
        bad(source, path + key, "expected a string");
    return it->get<std::string>();
}

std::optional<double> optNumber(const json& obj, const char* key, const std::string& source,
                                const std::string& path)
{
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null())
        return std::nullopt;
    return number(*it, source, path + key);
}

SizePoint pointFromJson(const json& j, Collective c, int ranks, const std::string& source,
                        const std::string& path)
{
    if (!j.is_object())
        bad(source, path, "expected an object");
    SizePoint p;
    p.size_bytes =
        number(member(j, "size_bytes", source, path + "."), source, path + ".size_bytes");
    const auto& t = member(j, "time_seconds", source, path + ".");
    const std::string tp = path + ".time_seconds";
    if (!t.is_object())
        bad(source, tp, "expected an object with median, min, max");
    p.time_median_seconds =
        number(member(t, "median", source, tp + "."), source, tp + ".median", true);
    p.time_min_seconds = optNumber(t, "min", source, tp + ".").value_or(p.time_median_seconds);
    p.time_max_seconds = optNumber(t, "max", source, tp + ".").value_or(p.time_median_seconds);
    if (p.time_min_seconds > p.time_median_seconds * (1 + 1e-9) ||
        p.time_max_seconds < p.time_median_seconds * (1 - 1e-9))
        bad(source, tp, "min <= median <= max does not hold");
    p.algbw_gbps = p.size_bytes / p.time_median_seconds / 1e9;
    p.busbw_gbps = p.algbw_gbps * factorFor(c, ranks);
    p.in_place_seconds = optNumber(j, "in_place_seconds", source, path + ".");
    return p;
}

template <typename J> J pointToJson(const SizePoint& p)
{
    J j{{"size_bytes", p.size_bytes},
        {"time_seconds",
         {{"median", p.time_median_seconds},
          {"min", p.time_min_seconds},
          {"max", p.time_max_seconds}}},
        {"algbw_gbps", p.algbw_gbps},
        {"busbw_gbps", p.busbw_gbps}};
    if (p.in_place_seconds)
        j["in_place_seconds"] = *p.in_place_seconds;
    return j;
}

SystemInfo systemFromJson(const json& j, const std::string& source)
{
    if (!j.is_object())
        bad(source, "system", "expected an object");
    SystemInfo s;
    s.gpu_name = text(j, "gpu", source, "system.");
    s.driver_version = text(j, "driver", source, "system.");
    s.cuda_version = text(j, "cuda", source, "system.");
    s.nccl_version = text(j, "nccl", source, "system.");
    s.topology = text(j, "topology", source, "system.");
    for (auto [key, dst] :
         {std::pair{"gpu_count", &s.gpu_count}, std::pair{"gpus_per_node", &s.gpus_per_node},
          std::pair{"nodes", &s.nodes}})
        if (const auto v = j.find(key); v != j.end())
            *dst = integer(*v, source, std::string("system.") + key);
    if (const auto h = j.find("hosts"); h != j.end()) {
        if (!h->is_array())
            bad(source, "system.hosts", "expected an array of strings");
        for (const auto& e : *h) {
            if (!e.is_string())
                bad(source, "system.hosts", "expected an array of strings");
            s.hosts.push_back(e.get<std::string>());
        }
    }
    return s;
}

// One measured curve of collective c at JSON path cp, its points sorted by size and fitted.
CollectiveCurve curveFromJson(const json& e, Collective c, const std::string& source,
                              const std::string& cp)
{
    if (!e.is_object())
        bad(source, cp, "expected an object");
    CollectiveCurve curve;
    curve.collective = c;
    curve.ranks = integer(member(e, "ranks", source, cp + "."), source, cp + ".ranks");
    if (curve.ranks < 1)
        bad(source, cp + ".ranks", "must be at least 1");
    const std::string span = text(e, "span", source, cp + ".");
    if (span == "intra")
        curve.span = Span::ScaleUp;
    else if (span == "inter")
        curve.span = Span::ScaleOut;
    else
        bad(source, cp + ".span", "expected \"intra\" or \"inter\"");
    if (const auto n = e.find("nodes"); n != e.end())
        curve.nodes = std::max(1, integer(*n, source, cp + ".nodes"));
    curve.dtype = text(e, "dtype", source, cp + ".");
    curve.source = text(e, "source", source, cp + ".");
    const auto& pts = member(e, "points", source, cp + ".");
    if (!pts.is_array())
        bad(source, cp + ".points", "expected an array");
    for (size_t k = 0; k < pts.size(); ++k)
        curve.points.push_back(pointFromJson(pts[k], curve.collective, curve.ranks, source,
                                             cp + ".points[" + std::to_string(k) + "]"));
    std::sort(curve.points.begin(), curve.points.end(),
              [](auto& a, auto& b) { return a.size_bytes < b.size_bytes; });
    curve.fit = fitAlphaBeta(curve.collective, curve.ranks, curve.points);
    return curve;
}

void collectivesFromJson(const json& j, const std::string& source, CalibrationProfile& p)
{
    if (!j.is_object())
        bad(source, "collectives", "expected an object keyed by collective");
    for (const auto& [name, arr] : j.items()) {
        const std::string base = "collectives." + name;
        const auto c = parseCollective(name);
        if (!c)
            bad(source, base,
                "unknown collective (all_reduce, all_gather, reduce_scatter, alltoall, "
                "sendrecv, broadcast)");
        if (!arr.is_array())
            bad(source, base, "expected an array of curves");
        for (size_t i = 0; i < arr.size(); ++i)
            p.collectives.push_back(
                curveFromJson(arr[i], *c, source, base + "[" + std::to_string(i) + "]"));
    }
}

GemmPoint gemmFromJson(const json& e, const std::string& source, const std::string& gp)
{
    if (!e.is_object())
        bad(source, gp, "expected an object");
    GemmPoint g;
    g.label = text(e, "label", source, gp + ".");
    g.m = number(member(e, "m", source, gp + "."), source, gp + ".m", true);
    g.n = number(member(e, "n", source, gp + "."), source, gp + ".n", true);
    g.k = number(member(e, "k", source, gp + "."), source, gp + ".k", true);
    g.dtype = text(e, "dtype", source, gp + ".");
    if (g.dtype != "bf16" && g.dtype != "fp8")
        bad(source, gp + ".dtype", "expected \"bf16\" or \"fp8\"");
    g.tflops = number(member(e, "tflops", source, gp + "."), source, gp + ".tflops", true);
    g.time_seconds = optNumber(e, "time_seconds", source, gp + ".").value_or(0);
    return g;
}

// ---- "model_constants" (schema 2) ----

double boundedConstant(const json& v, FitConstant c, const std::string& source,
                       const std::string& path)
{
    const double d = number(v, source, path);
    const ConstantBounds b = fitConstantBounds(c);
    if (d < b.lower || d > b.upper)
        bad(source, path,
            "outside its physical bounds [" + json(b.lower).dump() + ", " + json(b.upper).dump() +
                "]");
    return d;
}

void provenanceFromJson(const json& j, FitProvenance& f, const std::string& source)
{
    const std::string path = "model_constants.fit";
    if (!j.is_object())
        bad(source, path, "expected an object");
    for (const auto& [key, v] : j.items()) {
        const std::string kp = path + "." + key;
        if (key == "runs" || key == "holdout_runs")
            (key == "runs" ? f.runs : f.holdout_runs) = integer(v, source, kp);
        else if (key == "mape_before" || key == "mape_after")
            (key == "mape_before" ? f.mape_before : f.mape_after) = number(v, source, kp);
        else if (key == "holdout_mape")
            f.holdout_mape = v.is_null() ? -1 : number(v, source, kp);
        else if (key == "seed") {
            if (!v.is_number_unsigned())
                bad(source, kp, "expected a non-negative integer");
            f.seed = v.get<std::uint64_t>();
        } else if (key == "sources") {
            if (!v.is_array())
                bad(source, kp, "expected an array of strings");
            for (const auto& e : v) {
                if (!e.is_string())
                    bad(source, kp, "expected an array of strings");
                f.sources.push_back(e.get<std::string>());
            }
        } else {
            bad(source, kp, "unknown key");
        }
    }
}

FittedConstants fittedFromJson(const json& j, const std::string& source)
{
    const std::string path = "model_constants";
    if (!j.is_object())
        bad(source, path, "expected an object");
    FittedConstants fc;
    for (const auto& [key, v] : j.items()) {
        const std::string kp = path + "." + key;
        if (key == "fit") {
            provenanceFromJson(v, fc.fit, source);
            continue;
        }
        const auto c = parseFitConstant(key);
        if (!c)
            bad(source, kp, "unknown constant (docs/fit.md lists them)");
        if (*c != FitConstant::GemmEfficiency) {
            fc.set(*c, boundedConstant(v, *c, source, kp));
            continue;
        }
        if (!v.is_object())
            bad(source, kp, "expected an object keyed by GPU name");
        for (const auto& [gpu, e] : v.items())
            fc.gemm_efficiency.push_back({gpu, boundedConstant(e, *c, source, kp + "." + gpu)});
    }
    return fc;
}

template <typename J> J fittedToJson(const FittedConstants& fc)
{
    J j = J::object();
    if (!fc.gemm_efficiency.empty()) {
        J g = J::object();
        for (const GpuEfficiency& e : fc.gemm_efficiency)
            g[e.gpu] = e.value;
        j["gemm_efficiency"] = std::move(g);
    }
    for (FitConstant c : allFitConstants())
        if (const auto v = fc.value(c))
            j[std::string(fitConstantKey(c))] = *v;
    const FitProvenance& f = fc.fit;
    J fit{{"runs", f.runs},
          {"holdout_runs", f.holdout_runs},
          {"mape_before", f.mape_before},
          {"mape_after", f.mape_after}};
    if (f.holdout_mape >= 0)
        fit["holdout_mape"] = f.holdout_mape;
    fit["seed"] = f.seed;
    fit["sources"] = f.sources;
    j["fit"] = std::move(fit);
    return j;
}

// The schema version, checked before anything else is read.
int schemaFromJson(const json& j, const std::string& source)
{
    if (!j.is_object())
        bad(source, "(top level)", "expected a JSON object");
    const auto sit = j.find("schema");
    if (sit == j.end())
        bad(source, "schema", "missing (not a ParaLens calibration profile?)");
    if (!sit->is_number_integer())
        bad(source, "schema", "expected an integer version");
    const int schema = sit->get<int>();
    if (schema < 1 || schema > kCalibrationSchema)
        throw InputError("schema",
                         source + ": calibration profile schema " + std::to_string(schema) +
                             (schema > kCalibrationSchema ? " is newer than" : " is not") +
                             " the version this build reads (1 to " +
                             std::to_string(kCalibrationSchema) + ")");
    return schema;
}

} // namespace

// ---- JSON ----

CalibrationProfile profileFromJson(const json& j, const std::string& source)
{
    CalibrationProfile p;
    p.schema = schemaFromJson(j, source);
    p.tool = text(j, "tool", source, "");
    p.created = text(j, "created", source, "");
    if (const auto it = j.find("system"); it != j.end())
        p.system = systemFromJson(*it, source);
    if (const auto it = j.find("collectives"); it != j.end())
        collectivesFromJson(*it, source, p);
    if (const auto it = j.find("gemm"); it != j.end()) {
        if (!it->is_array())
            bad(source, "gemm", "expected an array");
        for (size_t i = 0; i < it->size(); ++i)
            p.gemm.push_back(gemmFromJson((*it)[i], source, "gemm[" + std::to_string(i) + "]"));
    }
    if (const auto it = j.find("memory"); it != j.end()) {
        if (!it->is_object())
            bad(source, "memory", "expected an object");
        p.hbm_gbps = optNumber(*it, "hbm_gbps", source, "memory.");
        p.d2d_copy_gbps = optNumber(*it, "d2d_copy_gbps", source, "memory.");
    }
    if (const auto it = j.find("warnings"); it != j.end() && it->is_array())
        for (const auto& w : *it)
            if (w.is_string())
                p.warnings.push_back(w.get<std::string>());
    if (const auto it = j.find("model_constants"); it != j.end() && !it->is_null()) {
        if (p.schema < 2)
            bad(source, "model_constants", "needs schema 2 (this profile says schema 1)");
        p.model_constants = fittedFromJson(*it, source);
    }
    return p;
}

namespace {
/// J is json (sorted keys) or ordered_json (the file: schema first, as documented).
template <typename J> J toJson(const CalibrationProfile& p)
{
    J j;
    // The lowest schema that holds the content: profiles without fitted constants stay
    // readable by builds that know schema 1 only.
    j["schema"] = p.model_constants ? 2 : 1;
    j["tool"] = p.tool;
    j["created"] = p.created;
    const auto& s = p.system;
    j["system"] = {
        {"gpu", s.gpu_name},      {"gpu_count", s.gpu_count},   {"gpus_per_node", s.gpus_per_node},
        {"nodes", s.nodes},       {"driver", s.driver_version}, {"cuda", s.cuda_version},
        {"nccl", s.nccl_version}, {"topology", s.topology},     {"hosts", s.hosts}};
    J cols = J::object();
    for (const auto& c : p.collectives) {
        J e{{"ranks", c.ranks},
            {"span", std::string(toString(c.span))},
            {"nodes", c.nodes},
            {"dtype", c.dtype},
            {"source", c.source}};
        J pts = J::array();
        for (const auto& pt : c.points)
            pts.push_back(pointToJson<J>(pt));
        e["points"] = std::move(pts);
        if (c.fit.valid)
            e["fit"] = {{"model", "t = alpha + size * bus_factor / busbw"},
                        {"alpha_seconds", c.fit.alpha_seconds},
                        {"busbw_gbps", c.fit.busbw_gbps},
                        {"rms_residual_pct", c.fit.rms_residual_pct},
                        {"max_abs_residual_pct", c.fit.max_abs_residual_pct},
                        {"residual_pct", c.fit.residual_pct},
                        {"points", c.fit.points_used}};
        cols[std::string(toString(c.collective))].push_back(std::move(e));
    }
    j["collectives"] = std::move(cols);
    J gemm = J::array();
    for (const auto& g : p.gemm)
        gemm.push_back({{"label", g.label},
                        {"m", g.m},
                        {"n", g.n},
                        {"k", g.k},
                        {"dtype", g.dtype},
                        {"tflops", g.tflops},
                        {"time_seconds", g.time_seconds}});
    j["gemm"] = std::move(gemm);
    J mem = J::object();
    if (p.hbm_gbps)
        mem["hbm_gbps"] = *p.hbm_gbps;
    if (p.d2d_copy_gbps)
        mem["d2d_copy_gbps"] = *p.d2d_copy_gbps;
    j["memory"] = std::move(mem);
    j["warnings"] = p.warnings;
    if (p.model_constants)
        j["model_constants"] = fittedToJson<J>(*p.model_constants);
    return j;
}
} // namespace

json profileToJson(const CalibrationProfile& p)
{
    return toJson<json>(p);
}

CalibrationProfile parseProfile(std::string_view textIn, const std::string& source)
{
    json j;
    try {
        j = json::parse(textIn.begin(), textIn.end());
    } catch (const json::parse_error& e) {
        // e.byte is 1-based; turn it into line:column for the user.
        size_t line = 1, col = 1;
        for (size_t i = 0; i + 1 < e.byte && i < textIn.size(); ++i) {
            if (textIn[i] == '\n') {
                ++line;
                col = 1;
            } else {
                ++col;
            }
        }
        throw InputError(source, source + ":" + std::to_string(line) + ":" + std::to_string(col) +
                                     ": malformed calibration profile JSON");
    } catch (const json::exception& e) {
        // Found by fuzz_profile: a number out of double range ("1e888") throws out_of_range.
        throw InputError(source, source + ": malformed calibration profile JSON: " + e.what());
    }
    return profileFromJson(j, source);
}

CalibrationProfile loadProfileFile(const std::string& path)
{
    return parseProfile(readInputFile(path, kMaxProfileFileBytes, "calibration profile", path),
                        path);
}

std::string profileToText(const CalibrationProfile& p)
{
    // Names copied from nccl-tests logs (hosts, device names) may hold invalid UTF-8, which
    // dump() throws on (found by fuzz_nccl_log): write U+FFFD in their place.
    return toJson<nlohmann::ordered_json>(p).dump(
               2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) +
           "\n";
}

void saveProfileFile(const CalibrationProfile& p, const std::string& path)
{
    namespace fs = std::filesystem;
    const std::string body = profileToText(p);
    std::random_device rd;
    const std::string tmp = path + ".tmp" + std::to_string(rd() % 1000000);
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out)
            throw InputError(path, path + ": cannot write (temporary file " + tmp + ")");
        out << body;
        out.flush();
        if (!out) {
            std::error_code ec;
            fs::remove(tmp, ec);
            throw InputError(path, path + ": write failed");
        }
    }
    std::error_code ec;
    fs::rename(tmp, path, ec);
    if (ec) {
        fs::remove(tmp, ec);
        throw InputError(path, path + ": cannot replace the file (" + ec.message() + ")");
    }
}

std::unique_ptr<CalibratedPerformance> loadCalibration(const Scenario& s,
                                                       const std::string& base_dir)
{
    if (s.calibration.empty())
        return nullptr;
    std::filesystem::path path(s.calibration);
    if (path.is_relative() && !base_dir.empty())
        path = std::filesystem::path(base_dir) / path;
    return std::make_unique<CalibratedPerformance>(
        loadProfileFile(path.string()), s.cluster.gpu.bf16_tflops, s.cluster.gpu.fp8_tflops);
}

} // namespace paralens
