// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/collective.h"
#include "core/fitted_constants.h"
#include "core/nccl_log.h"
#include "core/scenario.h"

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

namespace paralens {

/// The newest profile schema this build reads. Schema 2 adds the optional "model_constants"
/// (constants fitted to measured runs, docs/fit.md); a profile without them is written as
/// schema 1, which every older build reads.
inline constexpr int kCalibrationSchema = 2;

/// One measured message size of one collective.
struct SizePoint
{
    double size_bytes = 0;          ///< nccl-tests' size convention (MeasuredPerformance)
    double time_median_seconds = 0; ///< out-of-place; an nccl-tests log gives its mean
    double time_min_seconds = 0;
    double time_max_seconds = 0;
    double algbw_gbps = 0;                  ///< size / median time, 1e9 B/s
    double busbw_gbps = 0;                  ///< algbw × busFactor(collective, ranks)
    std::optional<double> in_place_seconds; ///< the in-place time, when measured
};

/// Latency-bandwidth fit t(S) = α + S·busFactor(c, n) / B_bus, by weighted least squares
/// with weights w_i = S_i / t_i²: relative (%) errors, each counted in proportion to the
/// bytes the point moves, so B_bus follows the large messages that dominate training traffic
/// while α still absorbs the fixed cost. α is constrained to be >= 0.
struct AlphaBetaFit
{
    bool valid = false;
    double alpha_seconds = 0;
    double busbw_gbps = 0;            ///< B_bus, the plateau bus bandwidth (1e9 B/s)
    std::vector<double> residual_pct; ///< per point: 100·(fit − measured)/measured
    double rms_residual_pct = 0;
    double max_abs_residual_pct = 0;
    int points_used = 0; ///< points with size > 0
};

/// One collective on one group size and span: the measured table and its fit.
struct CollectiveCurve
{
    Collective collective = Collective::AllReduce;
    int ranks = 0;
    Span span = Span::ScaleUp;
    int nodes = 1;
    std::string dtype;             ///< "bf16", "fp32", "double", ... as measured
    std::string source;            ///< file (and table) it came from
    std::vector<SizePoint> points; ///< ascending size
    AlphaBetaFit fit;

    /// Seconds for `bytes` on this curve's group: log-log interpolation of the measured times
    /// between points; outside the measured range, the fit's shape scaled to meet the
    /// nearest measured point (continuous). nullopt when there are no points.
    std::optional<double> seconds(double bytes) const;
};

/// Achieved throughput of one GEMM shape (m×k)·(k×n).
struct GemmPoint
{
    std::string label; ///< "qkv", "mlp_up", "square", ...
    double m = 0, n = 0, k = 0;
    std::string dtype = "bf16"; ///< "bf16" or "fp8"
    double tflops = 0;          ///< achieved, 1e12 FLOP/s, 2·m·n·k per GEMM
    double time_seconds = 0;    ///< median per GEMM
};

struct SystemInfo
{
    std::string gpu_name;
    int gpu_count = 0; ///< GPUs measured (all ranks)
    int gpus_per_node = 0;
    int nodes = 0;
    std::string driver_version;
    std::string cuda_version;
    std::string nccl_version;
    std::string topology; ///< free text, e.g. the `nvidia-smi topo -m` summary
    std::vector<std::string> hosts;
};

/// The calibration profile, schema 1 or 2 (measure/README.md; docs/fit.md for schema 2).
struct CalibrationProfile
{
    int schema = 1;   ///< as read; profileToJson() writes the lowest schema that holds the content
    std::string tool; ///< "paralens-measure 0.1.0", "paralens calibrate 0.1.0"
    std::string created; ///< ISO-8601 UTC, informational
    SystemInfo system;
    std::vector<CollectiveCurve> collectives;
    std::vector<GemmPoint> gemm;
    std::optional<double> hbm_gbps;      ///< streaming-kernel bandwidth (read + write)
    std::optional<double> d2d_copy_gbps; ///< cudaMemcpy device-to-device (read + write)
    std::vector<std::string> warnings;
    /// Constants fitted to measured runs (schema 2); absent in measurement-only profiles.
    std::optional<FittedConstants> model_constants;
};

/// Fits α and B_bus to the curve's points (see AlphaBetaFit). A single point gives α = 0 and
/// its own busbw; no point with size > 0 gives an invalid fit.
AlphaBetaFit fitAlphaBeta(Collective c, int ranks, const std::vector<SizePoint>& points);

/// Builds curves from an nccl-tests log: one per table of a collective the model prices,
/// out-of-place times as the median (nccl-tests prints a mean), min/max equal to it, the
/// in-place time kept alongside. Span: inter when the table's hosts are more than one.
/// Warnings (tables skipped, ranks unknown) are appended to `warnings`.
std::vector<CollectiveCurve> curvesFromNcclLog(const NcclLogResult& log, const std::string& source,
                                               std::vector<std::string>* warnings = nullptr);

/// Adds a parsed nccl-tests log to a profile (curves fitted; system fields filled when empty).
void addNcclLog(CalibrationProfile& profile, const NcclLogResult& log, const std::string& source);

/// Merges `other` into `profile` (curves, GEMMs, memory figures, fitted constants when
/// `profile` has none; empty system fields taken).
void mergeProfile(CalibrationProfile& profile, const CalibrationProfile& other);

/// Refits every curve (after points change).
void refit(CalibrationProfile& profile);

/// Profile JSON. Throws InputError: unknown schema version names it ("schema 3 is newer than
/// this build reads (2)"), missing/mistyped keys name their path (collectives.all_reduce[0].ranks),
/// a fitted constant outside its physical bounds names the constant and the bounds.
CalibrationProfile profileFromJson(const nlohmann::json& j, const std::string& source = "profile");
nlohmann::json profileToJson(const CalibrationProfile& p);
/// Parses profile text; malformed JSON names source, line and column.
CalibrationProfile parseProfile(std::string_view text, const std::string& source);
CalibrationProfile loadProfileFile(const std::string& path);
/// Pretty JSON text of a profile, ending with a newline.
std::string profileToText(const CalibrationProfile& p);
/// Writes atomically: a temporary file next to `path`, then rename. Throws InputError.
void saveProfileFile(const CalibrationProfile& p, const std::string& path);

/// A profile as the model's MeasuredPerformance.
///  - collectiveSeconds: the curve of that collective and span whose group size is nearest
///    (in log2) to `ranks`, preferring bf16, then more points; when the sizes differ the
///    measured bus bandwidth at that size is kept and the time rescaled by
///    busFactor(c, ranks)/busFactor(c, measured ranks). One rank costs 0 s, except for
///    sendrecv (a point-to-point transfer, looked up as 2 ranks).
///  - gemmEfficiency: achieved TFLOP/s of the nearest measured shape of that precision (in
///    log m, n, k) over the dense peak given here, at most 1.
///  - hbmGbps: the streaming-kernel figure, else the device-to-device copy figure.
///  - adjustConstants: the profile's fitted model constants, when it has them.
class CalibratedPerformance : public MeasuredPerformance
{
public:
    CalibratedPerformance(CalibrationProfile profile, double peak_bf16_tflops,
                          double peak_fp8_tflops);

    std::optional<double> collectiveSeconds(Collective c, int ranks, Span span,
                                            double bytes) const override;
    std::optional<double> gemmEfficiency(double m, double n, double k, bool fp8) const override;
    std::optional<double> hbmGbps() const override;
    void adjustConstants(std::string_view gpu_name, ModelConstants& k) const override;

    const CalibrationProfile& profile() const { return m_profile; }
    /// The curve collectiveSeconds() would use, or nullptr.
    const CollectiveCurve* curveFor(Collective c, int ranks, Span span) const;

private:
    CalibrationProfile m_profile;
    double m_peak_bf16_tflops;
    double m_peak_fp8_tflops;
};

/// The scenario's calibration (Scenario::calibration; a relative path is taken from `base_dir`,
/// normally the scenario file's folder) with the scenario's dense BF16/FP8 peaks. nullptr when
/// the scenario names no profile. Throws InputError when the profile cannot be read or is invalid.
std::unique_ptr<CalibratedPerformance> loadCalibration(const Scenario& s,
                                                       const std::string& base_dir = {});

} // namespace paralens
