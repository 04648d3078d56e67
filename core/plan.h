// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace paralens {

enum class Schedule
{
    GPipe,
    OneF1B,
    Interleaved1F1B,
    ZBH1,
    ZBV,
    DualPipeV
};
enum class Recompute
{
    None,
    Selective,
    Full
};
enum class Precision
{
    BF16,
    FP8
};
enum class Framework
{
    Megatron,
    DeepSpeed,
    FSDP
};
enum class Optimizer
{
    Adam,
    SGD
};

/// How the model is split over GPUs. Rank order is Megatron's tp-cp-ep-dp-pp.
struct ParallelPlan
{
    int tp = 1;
    int pp = 1;
    int dp = 1;
    int ep = 1; ///< expert parallel; carved out of DP x CP (must divide dp*cp)
    int cp = 1;
    bool sequence_parallel = false;
    int virtual_stages = 1; ///< model chunks per GPU (interleaved, V schedules)
    Schedule schedule = Schedule::OneF1B;
    int zero = 0;        ///< 0..3; 1 = distributed optimizer, 3 = FSDP full sharding
    int shard_group = 0; ///< ZeRO/FSDP shard group size; 0 = whole DP group
    bool offload_optimizer = false;
    /// TP collectives run under the GEMMs they feed (Megatron-Core / TransformerEngine
    /// `--tp-comm-overlap`, torchtitan AsyncTP). Off by default in both; needs sequence
    /// parallelism, whose all-gather / reduce-scatter pairs are what gets split and overlapped.
    bool tp_comm_overlap = false;
    int first_stage_layers = 0; ///< 0 = automatic split
    int last_stage_layers = 0;  ///< 0 = automatic split

    int gpus() const { return tp * pp * dp * cp; }
    /// GPUs one ZeRO/FSDP shard spans: shard_group, or the whole DP group when 0; never more
    /// than dp, the replicas there are (validate() rejects a larger one, evaluate() may run
    /// unvalidated), and at least 1.
    int shardGroup() const
    {
        const int d = dp > 0 ? dp : 1;
        const int g = shard_group > 0 ? shard_group : d;
        return g < d ? g : d;
    }
};

struct TrainingSettings
{
    int seq_len = 4096;
    int micro_batch = 1;
    int global_batch = 512; ///< sequences per optimizer step
    Precision precision = Precision::BF16;
    Recompute recompute = Recompute::Selective;
    bool flash_attention = true;
    Optimizer optimizer = Optimizer::Adam;
    Framework framework = Framework::Megatron;
    /// The framework overlaps the DP gradient reduction with the backward (bucketed DDP, the
    /// default of all three). false: it starts after the whole backward (no gradient buckets,
    /// as in Megatron-DeepSpeed with bucketing off), so only the pipeline's own slack hides it.
    bool overlap_grad_reduce = true;
    /// The model runs under torch.compile (torchtitan `compile`, off by default), which fuses
    /// the element-wise ops eager PyTorch runs one kernel at a time. Megatron-LM and DeepSpeed
    /// always use their fused kernels, so only FSDP reads it.
    bool compile = false;

    /// Micro-batches per pipeline per step, m = B / (b * dp).
    int microbatches(int dp) const { return global_batch / (micro_batch * dp); }
};

// Names used in JSON and on the command line.
std::string_view toString(Schedule);
std::string_view toString(Recompute);
std::string_view toString(Precision);
std::string_view toString(Framework);
std::string_view toString(Optimizer);
std::optional<Schedule> parseSchedule(std::string_view);
std::optional<Recompute> parseRecompute(std::string_view);
std::optional<Precision> parsePrecision(std::string_view);
std::optional<Framework> parseFramework(std::string_view);
std::optional<Optimizer> parseOptimizer(std::string_view);

} // namespace paralens
