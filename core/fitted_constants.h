// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/constants.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace paralens {

/// The model constants that whole-step measurements can identify (docs/fit.md says why these
/// and not the others). A calibration profile of schema 2 may hold fitted values of them.
enum class FitConstant
{
    GemmEfficiency,     ///< ModelConstants::gemm_efficiency, one per GPU type
    GemmHalfSize,       ///< ModelConstants::gemm_half_size
    HbmEfficiency,      ///< ModelConstants::hbm_efficiency
    AttentionRatio,     ///< ModelConstants::attention_efficiency_ratio
    ScaleUpEfficiency,  ///< ModelConstants::scale_up_efficiency
    ScaleOutEfficiency, ///< ModelConstants::scale_out_efficiency
    DpOverlap,          ///< ModelConstants::dp_overlap_fraction
    LayerOverhead,      ///< ModelConstants::layer_overhead_seconds
    StepOverhead,       ///< ModelConstants::step_overhead_seconds
};

/// Physical bounds of a constant and where they come from (docs/fit.md).
struct ConstantBounds
{
    double lower = 0;
    double upper = 0;
    std::string_view source;
};

/// Every FitConstant, in the order above.
std::span<const FitConstant> allFitConstants();
/// The profile key: "gemm_efficiency", "attention_efficiency_ratio", ...
std::string_view fitConstantKey(FitConstant c);
std::optional<FitConstant> parseFitConstant(std::string_view key);
ConstantBounds fitConstantBounds(FitConstant c);
/// The value `k` gives the model for `gpu_name` (gemm_efficiency 0 resolved to the per-hardware
/// default for a BF16 GEMM, as the time model does).
double constantValue(FitConstant c, const ModelConstants& k, const std::string& gpu_name);
void setConstant(FitConstant c, ModelConstants& k, double value);

/// One fitted GEMM efficiency: the GPU it was measured on (GpuSpec::name) and the value.
struct GpuEfficiency
{
    std::string gpu;
    double value = 0;
};

/// How a set of fitted constants came about; informational, kept in the profile.
struct FitProvenance
{
    int runs = 0;             ///< runs the constants were fitted to
    int holdout_runs = 0;     ///< runs kept out of the fit
    double mape_before = 0;   ///< on the fitted runs, with the constants the fit started from
    double mape_after = 0;    ///< on the fitted runs
    double holdout_mape = -1; ///< on the held-out runs; < 0 when none
    std::uint64_t seed = 0;   ///< of the hold-out split
    std::vector<std::string> sources; ///< the runs files
};

/// The "model_constants" of a calibration profile: fitted values that replace the model's
/// defaults. Absent members leave the model's value as it is.
struct FittedConstants
{
    std::vector<GpuEfficiency> gemm_efficiency; ///< by GPU name (matched case-insensitively)
    std::optional<double> gemm_half_size;
    std::optional<double> hbm_efficiency;
    std::optional<double> attention_efficiency_ratio;
    std::optional<double> scale_up_efficiency;
    std::optional<double> scale_out_efficiency;
    std::optional<double> dp_overlap_fraction;
    std::optional<double> layer_overhead_seconds;
    std::optional<double> step_overhead_seconds;
    FitProvenance fit;

    bool empty() const;
    /// Writes the fitted values into `k`; gemm_efficiency only when one was fitted on
    /// `gpu_name`. Allocates nothing (evaluate() calls it on every plan of a search).
    void applyTo(std::string_view gpu_name, ModelConstants& k) const;
    /// The fitted value of a global constant (not gemm_efficiency), when set.
    std::optional<double> value(FitConstant c) const;
    void set(FitConstant c, double v);
};

/// ASCII case-insensitive equality of two GPU names.
bool sameGpuName(std::string_view a, std::string_view b);

} // namespace paralens
