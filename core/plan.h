// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include <cstdint>
#include <optional>
#include <string>
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
/// Parts of each layer Megatron-Core's selective recompute repeats in the backward
/// (--recompute-modules, TransformerConfig.recompute_modules; bit flags). The output-discarding
/// ones (layernorm, mla_up_proj, moe_act) free a module's output after its consumer ran and
/// rebuild it before that consumer's backward; the others checkpoint the module whole, keeping
/// only its input.
enum RecomputeModule : std::uint8_t
{
    kRecomputeCoreAttn = 1,       ///< "core_attn": the attention core (the default)
    kRecomputeLayernorm = 2,      ///< "layernorm": the norms that are separate modules
    kRecomputeMlaUpProj = 4,      ///< "mla_up_proj": MLA's up-projections and RoPE (Q, K, V)
    kRecomputeMlp = 8,            ///< "mlp": a dense layer's MLP
    kRecomputeMoeAct = 16,        ///< "moe_act": the routed experts' activation function
    kRecomputeMoe = 32,           ///< "moe": the whole MoE layer, dispatch included
    kRecomputeSharedExperts = 64, ///< "shared_experts": the shared experts' MLP
};
inline constexpr int kRecomputeModuleCount = 7;
inline constexpr std::uint8_t kAllRecomputeModules = (1 << kRecomputeModuleCount) - 1;

enum class Precision
{
    BF16,
    FP8,
    FP16 ///< FP16 mixed precision with loss scaling: BF16's tensor-core rates
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
/// How an MoE layer moves tokens to its experts (Megatron-Core --moe-token-dispatcher-type,
/// token_dispatcher.py). Default: the framework's own default (moeDispatcher()).
enum class MoeDispatcher
{
    Default,   ///< Megatron-Core: allgather; DeepSpeed-MoE and torchtitan: all-to-all
    AllGather, ///< all-gather every token over the expert TP x EP group, reduce-scatter back
    AllToAll,  ///< one copy per (token, routed expert) over the EP group (NCCL all-to-all)
    DeepEP,    ///< DeepEP (flex dispatcher): one copy per destination node over the NIC, then
               ///< one per destination GPU over NVLink
    HybridEP,  ///< NVIDIA HybridEP (flex dispatcher): priced as DeepEP
};
/// How context parallelism exchanges keys and values (Megatron --cp-comm-type, torchtitan
/// context_parallel_rotate_method, DeepSpeed-Ulysses).
enum class CpComm
{
    Default,   ///< the framework's own default (FrameworkConventions::cp.comm)
    P2P,       ///< a ring of send/recv steps, each under one attention block
    AllGather, ///< K and V all-gathered over the CP group (Llama 3 §3.3.2)
    AllToAll,  ///< Ulysses: all-to-alls trade the sequence split for a head split
};

/// torchtitan's `parallelism.fsdp_reshard_after_forward` policy for FSDP2 under ZeRO-3: whether
/// a block's gathered parameters are freed after its forward (and gathered again in backward).
enum class ReshardAfterForward
{
    Default, ///< "always" without pipeline parallelism, "never" with it (torchtitan's default)
    Always,
    Never,
};

/// The dtype gradients are accumulated and reduced in over DP (training.grad_reduce_dtype).
/// The dtype of Adam's two moments. Bf16: Megatron-Core's precision-aware optimizer
/// (--use-precision-aware-optimizer --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16, Transformer
/// Engine's FusedAdam), as DeepSeek-V3 trained (§3.3.3 'Low-Precision Optimizer States') and
/// Megatron-Bridge's DeepSeek-V3 recipe sets; the fp32 master weights stay.
enum class AdamMomentsDtype
{
    Fp32,
    Bf16,
};

enum class GradReduceDtype
{
    Default, ///< the framework's: Megatron fp32 main grads (--accumulate-allreduce-grads-in-fp32,
             ///< on for bf16), DeepSpeed the training dtype, FSDP fp32 (torchtitan
             ///< mixed_precision_reduce)
    Fp32,
    Bf16, ///< Megatron-LM --grad-reduce-in-bf16, Megatron-Bridge ddp.grad_reduce_in_fp32 false,
          ///< NeMo distributed_fused_adam grad_sync_dtype bf16, torchtitan
          ///< mixed_precision_reduce bfloat16, DeepSpeed communication_data_type bf16
};

/// When PyTorch FSDP (zero 3) all-gathers the next unit's parameters in backward
/// (training.fsdp_backward_prefetch; torch.distributed.fsdp.BackwardPrefetch). NCCL runs every
/// collective of the group on one stream, so the issue order decides what overlaps.
enum class FsdpBackwardPrefetch
{
    Default, ///< backward_pre: FSDP1's constructor default, and FSDP2's explicit prefetch
    Pre,     ///< issued before the current unit's gradients: hidden under them
    Post,    ///< issued after them (Composer's default): the reduce-scatter is hidden, the
             ///< gather the next unit waits for is not
    None,    ///< each unit gathers in its own pre-backward, behind the last reduce-scatter
};

/// Which kernel computes the loss over the vocabulary (training.cross_entropy; docs/model.md
/// "Cross-entropy kernels"). The bytes each streams per logit are FrameworkConventions'.
enum class CrossEntropy
{
    Default, ///< the framework's own: Megatron-LM and Megatron-DeepSpeed VocabParallelCrossEntropy,
             ///< FSDP (torchtitan) PyTorch's cross_entropy on fp32 logits
    Megatron, ///< megatron/core/tensor_parallel/cross_entropy.py VocabParallelCrossEntropy
    Eager,    ///< torch.nn.functional.cross_entropy(logits.float(), ...), unfused
    Fused,    ///< one fused kernel per pass (flash-attn losses/cross_entropy.py, llm-foundry's
              ///< default loss_fn 'fused_crossentropy')
};

/// How the model code applies rotary position embeddings to q and k (training.rope_impl;
/// docs/model.md "Element-wise kernels"). It decides what torch.compile can fuse: Inductor has
/// no code generation for complex operators and runs them as eager ATen kernels
/// (torch/_inductor/lowering.py: "Torchinductor does not support code generation for complex
/// operators. Performance may be worse than eager.").
enum class RopeImpl
{
    Default, ///< the framework's own: FSDP (torchtitan's Llama) Complex, Megatron / DeepSpeed Fused
    Complex, ///< view_as_complex · freqs_cis (torchtitan models/llama3 apply_rotary_emb): eager
             ///< kernels, also under torch.compile
    Real,    ///< rotate_half with cos / sin (Hugging Face, OLMo-core's default RotaryEmbedding):
             ///< eager kernels, one fused kernel under torch.compile
    Fused,   ///< one fused kernel (TransformerEngine / Megatron --apply-rope-fusion, flash-attn's
             ///< rotary)
};

/// How the optimizer step is run (training.optimizer_impl; docs/model.md "Optimizer step").
/// Default = the framework's out-of-the-box choice today: fused for all three (Megatron-LM and
/// DeepSpeed run a fused multi-tensor Adam; torchtitan's optimizer.implementation defaults to
/// "fused" since pytorch/torchtitan 6e4988550, Feb 2025).
enum class OptimizerImpl
{
    Default,
    Fused,   ///< one multi-tensor kernel per chunk list (apex/TE/DeepSpeed FusedAdam, torch
             ///< fused=True)
    Foreach, ///< torch.optim foreach=True: one _foreach_ op per update step (torchtitan before Feb
             ///< 2025)
    ForLoop, ///< torch.optim foreach=False, fused=False: every op on every tensor in a Python loop
};

/// Which flash-attention kernel runs the attention core (training.attention_kernel; docs/model.md
/// "Attention kernels"). Only read with training.flash_attention true.
enum class AttentionKernel
{
    Default, ///< the framework's own: Megatron cuDNN fused attention (Transformer Engine),
             ///< DeepSpeed and FSDP FlashAttention-2 (FrameworkConventions::attention_fa2)
    Flash2,  ///< FlashAttention-2 (the flash-attn package, PyTorch SDPA's flash backend)
    Fused,   ///< cuDNN fused attention (Transformer Engine FusedAttention, Megatron-LM
             ///< --attention-backend fused)
    Triton,  ///< FlashAttention in Triton (e.g. llm-foundry attn_impl 'triton')
};

/// How FP8 GEMM operands are scaled (training.fp8_recipe; docs/model.md "FP8 recipes"). Only
/// read with training.precision fp8.
enum class Fp8Recipe
{
    Default,     ///< the framework's own: Megatron-LM / DeepSpeed (Transformer Engine) delayed,
                 ///< torchtitan / torchao tensorwise (Float8LinearConfig's default)
    Delayed,     ///< per-tensor scales from an amax history (TE DelayedScaling): no amax pass
    Tensorwise,  ///< dynamic per-tensor scales (torchao "tensorwise", TE Float8CurrentScaling)
    Rowwise,     ///< dynamic per-row / per-column scales, CUTLASS rowwise GEMM (torchao "rowwise")
    RowwiseGwHp, ///< rowwise, weight-gradient GEMM in BF16 (torchao "rowwise_with_gw_hp")
    Mxfp8,       ///< MX blocks of 32 with E8M0 scales (Blackwell; TE MXFP8BlockScaling, torchao)
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
    /// Expert tensor parallelism (Megatron-Core --expert-tensor-parallel-size); 0 = TP, its
    /// default. Expert layers use the order etp-ep-edp-pp over the same tp·cp·dp ranks
    /// (MoE parallel folding), so etp · ep must divide tp · cp · dp.
    int expert_tp = 0;
    MoeDispatcher moe_dispatcher = MoeDispatcher::Default;
    /// Megatron-Core --overlap-moe-expert-parallel-comm (default off): the forward of one
    /// micro-batch runs beside the backward of another, so each one's all-to-alls hide under
    /// the other's compute, as DualPipe does.
    bool moe_overlap = false;
    CpComm cp_comm = CpComm::Default; ///< K/V exchange when cp > 1

    int gpus() const { return tp * pp * dp * cp; }
    /// The expert TP degree: expert_tp, or tp when 0; at least 1.
    int expertTp() const
    {
        const int e = expert_tp > 0 ? expert_tp : tp;
        return e > 0 ? e : 1;
    }
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
    /// What selective recompute repeats under Megatron (RecomputeModule bits; Megatron-Core's
    /// default is the attention core alone). Read only with recompute selective.
    std::uint8_t recompute_modules = kRecomputeCoreAttn;
    /// With recompute full: the first N layers of each model chunk (a stage's share of the
    /// model, per virtual chunk) are recomputed whole, the chunk's other layers keep all their
    /// activations (Megatron-LM --recompute-method block --recompute-num-layers N; fms-fsdp's and
    /// torchtitan's checkpointing of some blocks). 0: every layer (--recompute-method uniform
    /// with one layer per checkpoint). A chunk with N layers or fewer recomputes all of them.
    int recompute_num_layers = 0;
    bool flash_attention = true;
    /// The flash kernel; default = the framework's own (AttentionKernel).
    AttentionKernel attention_kernel = AttentionKernel::Default;
    /// The loss kernel; default = the framework's own (CrossEntropy).
    CrossEntropy cross_entropy = CrossEntropy::Default;
    /// How RoPE is applied; default = the framework's own (RopeImpl).
    RopeImpl rope_impl = RopeImpl::Default;
    /// Metrics the training loop computes over the logits after each micro-batch's backward,
    /// each a cross-entropy in fp32 under no_grad (Composer's train metrics: llm-foundry's
    /// ComposerMPTCausalLM keeps LanguageCrossEntropy and LanguagePerplexity unless
    /// use_train_metrics is false, so 2). 0, every framework's default: none.
    int logit_metrics = 0;
    Optimizer optimizer = Optimizer::Adam;
    /// How the optimizer step runs; default = the framework's own (OptimizerImpl).
    OptimizerImpl optimizer_impl = OptimizerImpl::Default;
    Framework framework = Framework::Megatron;
    /// The framework overlaps the DP gradient reduction with the backward (bucketed DDP, the
    /// default of all three). false: it starts after the whole backward (no gradient buckets,
    /// as in Megatron-DeepSpeed with bucketing off), so only the pipeline's own slack hides it.
    bool overlap_grad_reduce = true;
    /// The model runs under torch.compile (torchtitan `compile`, off by default), which fuses
    /// the element-wise ops eager PyTorch runs one kernel at a time. Megatron-LM and DeepSpeed
    /// always use their fused kernels, so only FSDP reads it.
    bool compile = false;
    /// FP8 scaling recipe; default = the framework's (Fp8Recipe). Only read with precision fp8.
    Fp8Recipe fp8_recipe = Fp8Recipe::Default;
    /// Tokens on the busiest EP rank over the mean, which its expert GEMMs and all-to-alls
    /// wait for; 0 = the framework's default (moeLoadImbalance()). 1 = balanced, e.g. with
    /// Megatron-Core --moe-router-force-load-balancing, as NVIDIA's MoE benchmarks run.
    double moe_load_imbalance = 0;
    /// Dropout in the layers (masks stored, element-wise passes). Unset: the framework's out-of-
    /// the-box recipe (dropoutOn()).
    std::optional<bool> dropout;
    /// FSDP2 under ZeRO-3 only (see ReshardAfterForward).
    ReshardAfterForward fsdp_reshard_after_forward = ReshardAfterForward::Default;
    /// FSDP under ZeRO-3 only (see FsdpBackwardPrefetch).
    FsdpBackwardPrefetch fsdp_backward_prefetch = FsdpBackwardPrefetch::Default;
    /// Which PyTorch FSDP runs the sharding (FSDP only): 2 is fully_shard (torchtitan; the
    /// default), 1 is FullyShardedDataParallel with flat parameters (Composer / llm-foundry,
    /// Hugging Face Accelerate's default). They copy different tensors around their collectives.
    int fsdp_version = 2;
    /// Gradient accumulation and DP reduction dtype (see GradReduceDtype).
    GradReduceDtype grad_reduce_dtype = GradReduceDtype::Default;
    /// Megatron with Adam only (see AdamMomentsDtype).
    AdamMomentsDtype adam_moments_dtype = AdamMomentsDtype::Fp32;
    /// Megatron in FP8 only: the linears' weights are FP8 parameters, gathered by the distributed
    /// optimizer in FP8 (Megatron-LM --fp8-param-gather, Megatron-Bridge
    /// mixed_precision.fp8_param_gather, NeMo 1.x fp8_params). Off (Megatron-LM's default), the
    /// bf16 weights stay and Transformer Engine caches an FP8 copy of each beside them.
    bool fp8_param_gather = false;

    /// Megatron-LM's hidden_dropout / attention_dropout default to 0.1, and Megatron-DeepSpeed's
    /// GPT recipes keep them; torchtitan's Llama has no dropout at all (models/llama/model.py).
    bool dropoutOn() const { return dropout.value_or(framework != Framework::FSDP); }

    /// Whether selective recompute repeats module `m` (never under none or full).
    bool recomputes(RecomputeModule m) const
    {
        return recompute == Recompute::Selective && (recompute_modules & m) != 0;
    }

    /// Layers of each model chunk recomputed whole: 0 when none is, -1 when all are (full
    /// recompute without a layer count), else recompute_num_layers.
    int recomputedPerChunk() const
    {
        if (recompute != Recompute::Full)
            return 0;
        return recompute_num_layers > 0 ? recompute_num_layers : -1;
    }

    /// Micro-batches per pipeline per step, m = B / (b * dp).
    int microbatches(int dp) const { return global_batch / (micro_batch * dp); }
};

// Names used in JSON and on the command line.
std::string_view toString(Schedule);
std::string_view toString(Recompute);
std::string_view toString(Precision);
std::string_view toString(Framework);
std::string_view toString(Optimizer);
std::string_view toString(MoeDispatcher); ///< "default", "allgather", "alltoall", "deepep", ...
std::string_view toString(CpComm);        ///< "default", "p2p", "all-gather", "a2a"
std::string_view toString(ReshardAfterForward);
std::string_view toString(FsdpBackwardPrefetch); ///< "default", "backward_pre", ...
std::string_view toString(GradReduceDtype);      ///< "default", "fp32", "bf16"
std::string_view toString(AdamMomentsDtype);     ///< "fp32", "bf16"
std::string_view toString(AttentionKernel);      ///< "default", "flash2", "fused", "triton"
std::string_view toString(CrossEntropy);         ///< "default", "megatron", "eager", "fused"
std::string_view toString(OptimizerImpl);        ///< "default", "fused", "foreach", "for_loop"
std::string_view toString(RopeImpl);             ///< "default", "complex", "real", "fused"
/// "default", "delayed", "tensorwise", "rowwise", "rowwise_with_gw_hp", "mxfp8"
std::string_view toString(Fp8Recipe);
/// Megatron-Core's name of one module ("core_attn", "layernorm", "mla_up_proj", "mlp",
/// "moe_act", "moe", "shared_experts"); "?" for anything but a single bit.
std::string_view toString(RecomputeModule);
/// The module of that name, or nullopt.
std::optional<RecomputeModule> parseRecomputeModule(std::string_view);
/// The names of a set of modules (RecomputeModule bits) in bit order, joined by `sep`:
/// Megatron-LM's
/// --recompute-modules words, Megatron-Bridge's list, messages and labels.
std::string recomputeModuleList(std::uint8_t modules, std::string_view sep);
std::optional<Schedule> parseSchedule(std::string_view);
std::optional<Recompute> parseRecompute(std::string_view);
std::optional<Precision> parsePrecision(std::string_view);
std::optional<Framework> parseFramework(std::string_view);
std::optional<Optimizer> parseOptimizer(std::string_view);
std::optional<MoeDispatcher> parseMoeDispatcher(std::string_view);
std::optional<CpComm> parseCpComm(std::string_view);
std::optional<ReshardAfterForward> parseReshardAfterForward(std::string_view);
std::optional<GradReduceDtype> parseGradReduceDtype(std::string_view);
std::optional<AdamMomentsDtype> parseAdamMomentsDtype(std::string_view);
std::optional<FsdpBackwardPrefetch> parseFsdpBackwardPrefetch(std::string_view);
std::optional<AttentionKernel> parseAttentionKernel(std::string_view);
std::optional<CrossEntropy> parseCrossEntropy(std::string_view);
std::optional<RopeImpl> parseRopeImpl(std::string_view);
std::optional<OptimizerImpl> parseOptimizerImpl(std::string_view);
std::optional<Fp8Recipe> parseFp8Recipe(std::string_view);

} // namespace paralens
