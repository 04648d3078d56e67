// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace paralens {

/// Bytes held by one GPU of one pipeline stage. Every term is >= 0.
struct StageMemory
{
    int stage = 0;
    int layers = 0; ///< transformer layers on this stage (all chunks)
    /// Of `layers` (and of its MoE layers), those that keep all their activations while full
    /// recompute with a layer count repeats the rest (StageLayers::stored); 0 otherwise.
    int stored_layers = 0, stored_moe_layers = 0;
    double parameters = 0;
    double gradients = 0;
    double optimizer_states = 0;
    double activations = 0;
    double comm_buffers = 0;
    double runtime_overhead = 0;
    double inflight_microbatches = 0; ///< micro-batches whose activations are held at the peak
    bool holds_embedding = false;     ///< the word embedding (the model's first chunk) is here
    /// The final norm, LM head and loss (the model's last chunk) are here: the last stage, or
    /// stage 0 under a V schedule (StageLayers::last)
    bool holds_lm_head = false;
    /// Multi-token-prediction modules run here after the LM head (ModelSpec::mtp_layers on the
    /// stage with holds_lm_head, 0 elsewhere)
    int mtp_layers = 0;
    /// Of comm_buffers and runtime_overhead, what lies outside PyTorch's caching allocator (the
    /// CUDA context, NCCL's own buffers): torch.cuda.max_memory_allocated = total() − this.
    double outside_allocator = 0;
    /// Freed blocks PyTorch's caching allocator still holds at the peak, not reusable by the
    /// peak's allocations; not part of total(). max_memory_reserved = allocated() + this.
    double allocator_cached = 0;

    double total() const
    {
        return parameters + gradients + optimizer_states + activations + comm_buffers +
               runtime_overhead;
    }
    /// What torch.cuda.max_memory_allocated reads (the tensors the caching allocator serves).
    double allocated() const { return total() - outside_allocator; }
    /// What torch.cuda.max_memory_reserved reads.
    double reserved() const { return allocated() + allocator_cached; }
};

/// Seconds per step spent in each parallelism dimension's communication.
struct CommSeconds
{
    double tp = 0, cp = 0, ep = 0, pp = 0, dp = 0;
    double total() const { return tp + cp + ep + pp + dp; }
};

struct TimeBreakdown
{
    double step_seconds = 0;    ///< wall time of one optimizer step
    double compute_seconds = 0; ///< busy compute on the critical stage
    double bubble_seconds = 0;
    double bubble_fraction = 0; ///< idle share of the step, averaged over stages
    double bubble_overhead = 0; ///< idle over busy compute; (p-1)/m for uniform 1F1B
    CommSeconds exposed;        ///< communication on the critical path
    CommSeconds overlapped;     ///< communication hidden under compute
    double optimizer_seconds = 0;
    double offload_seconds = 0;
    int critical_stage = 0; ///< the slowest pipeline stage (sets the steady-state pace)
};

struct Throughput
{
    double tokens_per_second = 0;
    double model_flops_per_step = 0; ///< 6·T·(...) convention, no recompute (docs/formulas.md §2)
    double hardware_flops_per_step = 0; ///< including recomputation
    double tflops_per_gpu = 0;          ///< model FLOP/s per GPU, 1e12
    double mfu = 0;                     ///< model FLOPs utilisation of the dense peak
    double hfu = 0;                     ///< hardware FLOPs utilisation
};

/// Warnings as data; the text is made by warningText().
enum class Warning : std::uint32_t
{
    TpCrossesNodes = 1u << 0,
    BubbleAbove20 = 1u << 1,
    EpCrossesNodes = 1u << 2,
    CpCrossesNodes = 1u << 3,
    DoesNotFit = 1u << 4,
    LowMicrobatches = 1u << 5, ///< m < p: the pipeline never fills
    Uncalibrated = 1u << 6,
};

/// What the core model computes for one scenario.
struct Estimate
{
    int gpus = 0;
    bool fits = false;
    double capacity_bytes = 0;
    double peak_bytes = 0;
    int peak_stage = 0;
    double peak_allocated_bytes = 0; ///< the largest StageMemory::allocated() of the stages
    double peak_reserved_bytes = 0;  ///< the largest StageMemory::reserved() of the stages
    std::vector<StageMemory> stages; ///< one per pipeline stage
    TimeBreakdown time;
    Throughput throughput;
    std::uint32_t warnings = 0; ///< bitwise OR of Warning
    bool calibrated = false;    ///< collectives / GEMM efficiency came from a profile
    int microbatches = 0;       ///< m = B / (b · dp) per pipeline per step
    double tokens_per_step = 0; ///< B · s

    bool has(Warning w) const { return (warnings & static_cast<std::uint32_t>(w)) != 0; }
};

} // namespace paralens
