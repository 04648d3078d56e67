// SPDX-License-Identifier: GPL-3.0-or-later
// The kernel-time terms no FLOP count carries (docs/formulas.md §2.4), against hand counts from
// the frameworks' code: eager PyTorch's element-wise traffic for Llama 3 8B (torchtitan's
// RMSNorm, RoPE and SwiGLU), FP8 casts, kernel launches per layer, torchtitan's op-level
// selective recompute, the BF16 LM head in FP8 training, TP communication overlap, and the
// copies DTensor's sequence parallelism makes of batch-first activations.

#include "core/comm_time.h"
#include "core/dims.h"
#include "core/evaluate.h"
#include "core/flops.h"
#include "core/kernel_time.h"
#include "core/presets.h"
#include "core/topology.h"

#include "test_close.h"
#include "test_models.h"

#include <QTest>

#include <cmath>

using namespace paralens;
using paralens::testing::close;

namespace {

// Llama 3 8B (Grattafiori et al. 2024, Table 3): h 4096, 32 heads, 8 KV heads, FFN 14336.
ModelSpec llama8b()
{
    ModelSpec m;
    m.name = "llama3-8b";
    m.layers = 32;
    m.hidden = 4096;
    m.heads = 32;
    m.kv_heads = 8;
    m.ffn_hidden = 14336;
    m.vocab = 128256;
    m.gated_mlp = true;
    m.tied_embeddings = false;
    return m;
}

// Llama 3 8B at TP 8 with sequence parallelism on one node of H100s.
Scenario llama8bTp8OnH100()
{
    Scenario s;
    s.model = llama8b();
    s.cluster = *PresetLibrary::builtin().hardware("h100-sxm");
    s.parallel.tp = 8;
    s.parallel.sequence_parallel = true;
    s.gpus = 8;
    return s;
}

// A kernel model whose GEMMs cost 1 s per 1e15 FLOPs and whose HBM streams 1e12 B/s.
KernelModel kernels(bool fp8 = false)
{
    KernelModel k;
    k.peak_bf16 = k.peak_lin = 1e15;
    k.eff_bf16 = k.eff_lin = 1;
    k.attn_ratio = 1;
    k.half = 0;
    k.hbm = 1e12;
    k.fp8 = fp8;
    if (fp8)
        k.peak_lin = 2e15;
    return k;
}

TrainingSettings fsdp(bool compile, Recompute r = Recompute::None)
{
    TrainingSettings tr;
    tr.seq_len = 8192;
    tr.framework = Framework::FSDP;
    tr.compile = compile;
    tr.recompute = r;
    tr.flash_attention = true;
    return tr;
}

Dims dimsFor(const ModelSpec& m, const TrainingSettings& tr, const ParallelPlan& pl)
{
    ActivationShape a;
    a.seq = tr.seq_len;
    a.micro_batch = tr.micro_batch;
    a.tp = pl.tp;
    a.sequence_parallel = pl.sequence_parallel;
    a.cp = pl.cp;
    a.recompute = tr.recompute;
    a.flash_attention = tr.flash_attention;
    return dimsOf(m, a);
}

// Hand count per token and layer in two-byte elements (docs/formulas.md §2.4) for h 4096,
// q 4096, kv 1024, FFN 14336. Eager: two RMSNorms 2·18·h, two residual adds 2·3·h, RoPE
// 10·(q + kv), the contiguous attention output 2·q, SwiGLU 5·FFN = 303,104. Fused without
// dropout (torchtitan's Llama has none): 10·h + 2·(q + kv) + 3·FFN = 94,208 (with Megatron's two
// dropouts, 14·h: 110,592).
constexpr double kEagerElements = 2 * 18 * 4096. + 6 * 4096. + 10 * 5120. + 2 * 4096. + 5 * 14336.;
constexpr double kFusedElements = 10 * 4096. + 2 * 5120. + 3 * 14336.;

} // namespace

class TestKernelExtras : public QObject
{
    Q_OBJECT

private slots:
    void eagerElementwiseTrafficOfLlama8b()
    {
        QCOMPARE(kEagerElements, 303104.0);
        QCOMPARE(kFusedElements, 94208.0);
        ModelConstants kc;
        kc.kernel_launch_seconds = 0;
        const ModelSpec m = llama8b();
        const ParallelPlan pl;
        const TrainingSettings eager = fsdp(false);
        TrainingSettings compiled = fsdp(true);
        compiled.rope_impl = RopeImpl::Real; // the rotate_half form torch.compile fuses
        const Dims d = dimsFor(m, eager, pl);
        const LayerTimes e = layerTimes(m, d, kernels(), pl, eager, kc, AttentionSetup{}, false);
        const LayerTimes c = layerTimes(m, d, kernels(), pl, compiled, kc, AttentionSetup{}, false);
        // Forward streams 2 bytes per element per token; backward twice the forward.
        const double extra = 2 * d.tokens * (kEagerElements - kFusedElements) / 1e12;
        QVERIFY_CLOSE(e.f - c.f, extra, 1e-9);
        QVERIFY_CLOSE(e.b - c.b, 2 * extra, 1e-9);
        QVERIFY_CLOSE(e.w, c.w, 1e-12); // GEMMs are the same
        // Megatron always fuses: the same as compiled FSDP once dropout is off too.
        TrainingSettings meg = eager;
        meg.framework = Framework::Megatron;
        meg.dropout = false;
        QVERIFY_CLOSE(layerTimes(m, d, kernels(), pl, meg, kc, AttentionSetup{}, false).f, c.f,
                      1e-12);
    }

    // torchtitan's RoPE multiplies complex numbers (view_as_complex), for which Inductor
    // generates no code: torch.compile leaves its eager kernels, 10·(q + kv) elements per token
    // instead of the fused 2·(q + kv). The rotate_half form it fuses; eager, both forms stream
    // alike; TransformerEngine's fused kernel streams once.
    void complexRopeStaysEagerUnderCompile()
    {
        ModelConstants kc;
        kc.kernel_launch_seconds = 0;
        const ModelSpec m = llama8b();
        const ParallelPlan pl;
        auto times = [&](bool compile, RopeImpl r) {
            TrainingSettings tr = fsdp(compile);
            tr.rope_impl = r;
            return layerTimes(m, dimsFor(m, tr, pl), kernels(), pl, tr, kc, AttentionSetup{},
                              false);
        };
        const Dims d = dimsFor(m, fsdp(true), pl);
        const double extra = 2 * d.tokens * (10 - 2) * (4096. + 1024.) / 1e12; // 2 B at 1 TB/s
        const LayerTimes complexC = times(true, RopeImpl::Complex);
        const LayerTimes realC = times(true, RopeImpl::Real);
        QVERIFY_CLOSE(complexC.f - realC.f, extra, 1e-9);
        QVERIFY_CLOSE(complexC.b - realC.b, 2 * extra, 1e-9);
        // The FSDP default is torchtitan's complex form.
        QVERIFY_CLOSE(times(true, RopeImpl::Default).f, complexC.f, 1e-12);
        // Eager, the two forms are priced alike; a fused kernel streams q and k once.
        QVERIFY_CLOSE(times(false, RopeImpl::Complex).f, times(false, RopeImpl::Real).f, 1e-12);
        QVERIFY_CLOSE(times(false, RopeImpl::Complex).f - times(false, RopeImpl::Fused).f, extra,
                      1e-9);
        QVERIFY_CLOSE(times(true, RopeImpl::Fused).f, realC.f, 1e-12);
    }

    // Composer's train metrics (llm-foundry: LanguageCrossEntropy and LanguagePerplexity) each
    // run CrossEntropyLoss on the bf16 logits after the micro-batch's backward: an fp32 cast
    // (read 2, write 4 bytes per logit) and log_softmax's max, sum and write passes over the
    // copy (read 4 + 4 + 4, write 4): 22 bytes per logit each.
    void logitMetricsStreamTheLogitsAfterTheBackward()
    {
        const ModelSpec m = llama8b();
        TrainingSettings tr = fsdp(false);
        const ParallelPlan pl;
        const Dims d = dimsFor(m, tr, pl);
        const double logits = 8192.0 * 50368; // one micro-batch of 8,192 tokens, MPT's vocabulary
        QVERIFY_CLOSE(logitMetricSeconds(d, kernels(), 50368, 2), 2 * 22 * logits / 1e12, 1e-12);
        QCOMPARE(logitMetricSeconds(d, kernels(), 50368, 0), 0.0);

        // On one GPU (no DP collective whose cover could change) each of the step's four
        // micro-batches gains exactly that on the H100's 0.85 × 3,350 GB/s.
        Scenario s;
        s.model = m;
        s.model.vocab = 50432; // 394 × 128: Megatron's padding leaves it as it is
        s.cluster = *PresetLibrary::builtin().hardware("h100-sxm");
        s.gpus = 1;
        s.parallel = {};
        s.training = tr;
        s.training.micro_batch = 1;
        s.training.global_batch = 4;
        const Estimate none = evaluate(s);
        s.training.logit_metrics = 2;
        const Estimate two = evaluate(s);
        const double perMb = 2 * 22 * (8192.0 * 50432) / (3350e9 * 0.85);
        QVERIFY_CLOSE(two.time.step_seconds - none.time.step_seconds, 4 * perMb, 1e-9);
        QVERIFY(two.time.step_seconds > none.time.step_seconds);
        // Streamed, not computed: the FLOP count and so the MFU's numerator do not move.
        QCOMPARE(two.throughput.model_flops_per_step, none.throughput.model_flops_per_step);
    }

    // QK-norm (Qwen3, OLMo 2, Gemma 3) normalises the q and kv elements of the rank's heads: a
    // fused norm reads and writes each once (2 two-byte elements), eager RMSNorm streams 18;
    // the backward twice the forward, as for every element-wise kernel. Llama 3 8B's shapes,
    // TP 2: (4096 + 1024) / 2 elements per token.
    void qkNormStreamsQAndK()
    {
        ModelConstants kc;
        kc.kernel_launch_seconds = 0;
        ModelSpec m = llama8b();
        ParallelPlan pl;
        pl.tp = 2;
        auto layer = [&](bool qkNorm, bool compile) {
            m.qk_norm = qkNorm;
            const TrainingSettings tr = fsdp(compile);
            return layerTimes(m, dimsFor(m, tr, pl), kernels(), pl, tr, kc, AttentionSetup{},
                              false);
        };
        const double tokens = 8192, qk = (4096. + 1024.) / 2;
        const double fused = 2 * tokens * 2 * qk / 1e12; // 2-byte elements at 1 TB/s
        QVERIFY_CLOSE(layer(true, true).f - layer(false, true).f, fused, 1e-9);
        QVERIFY_CLOSE(layer(true, true).b - layer(false, true).b, 2 * fused, 1e-9);
        QVERIFY_CLOSE(layer(true, false).f - layer(false, false).f, 2 * tokens * 18 * qk / 1e12,
                      1e-9);
        // Two more kernels per layer fused, two eager RMSNorms' twelve unfused.
        m.qk_norm = false;
        const double base = forwardKernelsPerLayer(m, pl, fsdp(true), false);
        const double baseEager = forwardKernelsPerLayer(m, pl, fsdp(false), false);
        m.qk_norm = true;
        QCOMPARE(forwardKernelsPerLayer(m, pl, fsdp(true), false) - base, 2.0);
        QCOMPARE(forwardKernelsPerLayer(m, pl, fsdp(false), false) - baseEager, 12.0);

        // Its inputs are kept for the backward: 2 bytes per q and k element per token and layer
        // without recomputation; nothing with full recomputation, which keeps the layer input.
        Scenario s;
        s.model = llama8b();
        s.cluster = *PresetLibrary::builtin().hardware("h100-sxm");
        s.gpus = 1;
        s.parallel = {};
        s.training = fsdp(true);
        s.training.framework = Framework::Megatron;
        const Estimate plain = evaluate(s);
        s.model.qk_norm = true;
        const Estimate normed = evaluate(s);
        QVERIFY_CLOSE(normed.stages[0].activations - plain.stages[0].activations,
                      32 * 2 * 8192 * (4096. + 1024.), 1e-6);
        s.training.recompute = Recompute::Full;
        const Estimate full = evaluate(s);
        s.model.qk_norm = false;
        QVERIFY_CLOSE(full.stages[0].activations, evaluate(s).stages[0].activations, 1e-12);
    }

    void dtensorSequenceParallelCopiesTheGatheredTensors()
    {
        // torchtitan shards the batch-first activations on dimension 1: each of a layer's two
        // all-gathers and two reduce-scatters copies the full b·s·h tensor once (read and
        // write, chunk + cat), 8·h two-byte elements per token forward and as many backward.
        // Megatron's sequence-first activations gather on dimension 0 and copy nothing.
        ModelConstants kc;
        kc.kernel_launch_seconds = 0;
        const ModelSpec m = llama8b();
        ParallelPlan sp;
        sp.tp = 8;
        sp.sequence_parallel = true;
        ParallelPlan plain = sp;
        plain.sequence_parallel = false;
        const TrainingSettings tt = fsdp(true);
        const Dims d = dimsFor(m, tt, sp);
        const LayerTimes with = layerTimes(m, d, kernels(), sp, tt, kc, AttentionSetup{}, false);
        const LayerTimes without =
            layerTimes(m, d, kernels(), plain, tt, kc, AttentionSetup{}, false);
        const double copies = 2 * d.tokens * 8 * 4096 / 1e12; // 8192 tokens: 0.537 ms
        QVERIFY_CLOSE(with.f - without.f, copies, 1e-9);
        QVERIFY_CLOSE(with.b - without.b, copies, 1e-9);
        TrainingSettings meg = tt;
        meg.framework = Framework::Megatron;
        QVERIFY_CLOSE(layerTimes(m, d, kernels(), sp, meg, kc, AttentionSetup{}, false).f,
                      layerTimes(m, d, kernels(), plain, meg, kc, AttentionSetup{}, false).f,
                      1e-12);
    }

    void fp8CastsAreCountedPerGemm()
    {
        // M 2, K 3, N 5: forward 3·(6 + 15) = 63 bytes, backward 3·10 + 21 = 51.
        const Fp8CastBytes c = fp8CastBytes(2, 3, 5);
        QCOMPARE(c.forward, 63.0);
        QCOMPARE(c.backward, 51.0);
        // One 4096³ GEMM in FP8 at 2e15 FLOP/s: 2·4096³ / 2e15 per pass, plus its casts.
        const double n = 4096, gemm = 2 * n * n * n / 2e15;
        double f = 0, b = 0, w = 0;
        kernels(true).linear(n, n, n, 1, f, b, w);
        const Fp8CastBytes big = fp8CastBytes(n, n, n);
        QVERIFY_CLOSE(f, gemm + big.forward / 1e12, 1e-9);
        QVERIFY_CLOSE(b, gemm + big.backward / 1e12, 1e-9);
        QVERIFY_CLOSE(w, gemm, 1e-9);
        // fp8_ok false keeps it in BF16: 1e15 FLOP/s, no casts.
        f = b = w = 0;
        kernels(true).linear(n, n, n, 1, f, b, w, false);
        QVERIFY_CLOSE(f, 2 * gemm, 1e-9);
    }

    void lmHeadStaysBf16InFp8Training()
    {
        TrainingSettings tr = fsdp(true);
        const ModelSpec m = llama8b();
        const Dims d = dimsFor(m, tr, ParallelPlan{});
        const FrameworkConventions fw = conventions(tr, ParallelPlan{});
        const StageTimes bf = headTimes(d, kernels(false), 128256, fw);
        const StageTimes f8 = headTimes(d, kernels(true), 128256, fw);
        QVERIFY_CLOSE(f8.forward_seconds, bf.forward_seconds, 1e-12);
        QVERIFY_CLOSE(f8.backward_seconds, bf.backward_seconds, 1e-12);
    }

    void lossBytesFollowEachImplementationsPasses()
    {
        // Hand counts per logit (docs/formulas.md §2.6): Megatron's VocabParallelCrossEntropy
        // float 6 + max 4 + subtract 8 + exp 8 + sum 4 + divide 8 = 38 forward, multiply 8 +
        // cast 6 = 14 backward; PyTorch's eager cross_entropy float 6 + log_softmax 16 = 22,
        // zero-filled NLL gradient 4 + log_softmax backward 16 + cast 6 = 26; flash-attn's fused
        // kernel 2 and 4.
        const ModelSpec m = llama8b();
        const double vocab = 128256;
        struct Case
        {
            Framework framework;
            CrossEntropy kind;
            double forward, backward;
            bool compile = false;
        };
        const Case cases[] = {{Framework::Megatron, CrossEntropy::Default, 38, 14},
                              {Framework::DeepSpeed, CrossEntropy::Default, 38, 14},
                              {Framework::FSDP, CrossEntropy::Default, 22, 26},
                              {Framework::Megatron, CrossEntropy::Eager, 22, 26},
                              {Framework::FSDP, CrossEntropy::Megatron, 38, 14},
                              {Framework::FSDP, CrossEntropy::Fused, 2, 4},
                              {Framework::Megatron, CrossEntropy::Fused, 2, 4},
                              // torchtitan compiles the loss with the blocks (since April 2025):
                              // Inductor's fused kernels read bf16 logits, write a bf16 gradient.
                              {Framework::FSDP, CrossEntropy::Default, 2, 4, true},
                              {Framework::FSDP, CrossEntropy::Eager, 22, 26, true},
                              {Framework::Megatron, CrossEntropy::Default, 38, 14, true}};
        for (const Case& c : cases) {
            TrainingSettings tr;
            tr.framework = c.framework;
            tr.cross_entropy = c.kind;
            tr.compile = c.compile;
            const Dims d = dimsFor(m, tr, ParallelPlan{});
            const FrameworkConventions fw = conventions(tr, ParallelPlan{});
            const StageTimes t = headTimes(d, kernels(), std::int64_t(vocab), fw);
            // The LM head GEMM alone: the same call with a loss that streams nothing.
            FrameworkConventions none = fw;
            none.loss_bytes_forward = none.loss_bytes_backward = 0;
            const StageTimes g = headTimes(d, kernels(), std::int64_t(vocab), none);
            const double logits = d.tokens * vocab;
            QVERIFY_CLOSE(t.forward_seconds - g.forward_seconds, c.forward * logits / 1e12, 1e-9);
            QVERIFY_CLOSE(t.backward_seconds - g.backward_seconds, c.backward * logits / 1e12,
                          1e-9);
            QVERIFY_CLOSE(t.weight_seconds, g.weight_seconds, 1e-12);
        }
        // Memory: the fused kernel keeps one fp32 copy's bytes, the others their own.
        TrainingSettings fused;
        fused.framework = Framework::FSDP;
        fused.cross_entropy = CrossEntropy::Fused;
        QCOMPARE(conventions(fused, ParallelPlan{}).loss_logit_copies, 1.0);
        fused.cross_entropy = CrossEntropy::Default;
        QCOMPARE(conventions(fused, ParallelPlan{}).loss_logit_copies, 3.0);
        fused.compile = true; // the compiled loss: one copy's bytes, as the fused kernel
        QCOMPARE(conventions(fused, ParallelPlan{}).loss_logit_copies, 1.0);
        fused.cross_entropy = CrossEntropy::Eager; // Dec 2024's eager loss under compile
        QCOMPARE(conventions(fused, ParallelPlan{}).loss_logit_copies, 3.0);
    }

    void kernelsPerLayerFollowTheFrameworksOps()
    {
        const ModelSpec m = llama8b();
        ParallelPlan pl;
        TrainingSettings meg;
        meg.framework = Framework::Megatron;
        meg.flash_attention = true;
        // Megatron: fused QKV, proj, fc1 (gate + up), fc2; flash; 2 norms, 2 adds, act, RoPE.
        QCOMPARE(forwardKernelsPerLayer(m, pl, meg, false), 4.0 + 1 + 6);
        pl.tp = 8;
        pl.sequence_parallel = true; // + 2 all-gathers + 2 reduce-scatters
        QCOMPARE(forwardKernelsPerLayer(m, pl, meg, false), 15.0);
        pl = ParallelPlan{};
        // torchtitan eager: 7 GEMMs, SDPA, 2 × 6 norm ops, 2 adds, 2 × 3 RoPE ops, 1 copy,
        // silu + mul.
        QCOMPARE(forwardKernelsPerLayer(m, pl, fsdp(false), false), 7.0 + 1 + 12 + 2 + 6 + 1 + 2);
        QCOMPARE(forwardKernelsPerLayer(m, pl, fsdp(true), false), 7.0 + 1 + 6);
    }

    void groupedGemmsLaunchOneGemmPerLocalExpert()
    {
        // Qwen3-30B-A3B's MoE layer (128 experts, top 8) at EP 16: 8 experts per rank.
        // TransformerEngine's GroupedLinear runs one cuBLAS GEMM per local expert
        // (multi_stream_cublas_gemm), so fc1 and fc2 are 8 GEMMs each: 16, plus QKV and proj
        // (2), flash (1), the 6 fused element-wise kernels, the router GEMM, softmax + top-k,
        // permute and unpermute (1 + 2 + 2 + 2): 32, counted by hand.
        ModelSpec m = llama8b();
        m.moe.experts = 128;
        m.moe.top_k = 8;
        m.moe.expert_ffn_hidden = 768;
        ParallelPlan pl;
        pl.ep = 16;
        TrainingSettings meg;
        meg.framework = Framework::Megatron;
        meg.flash_attention = true;
        QCOMPARE(forwardKernelsPerLayer(m, pl, meg, true), 2.0 + 16 + 1 + 6 + 7);
        // One expert per rank: one GEMM per grouped GEMM, the dense MLP's count.
        pl.ep = 128;
        QCOMPARE(forwardKernelsPerLayer(m, pl, meg, true), 2.0 + 2 + 1 + 6 + 7);
        // A shared expert adds its own fc1 and fc2 (Megatron-Core SharedExpertMLP).
        m.moe.shared_experts = 1;
        QCOMPARE(forwardKernelsPerLayer(m, pl, meg, true), 2.0 + 2 + 2 + 1 + 6 + 7);
        // torchtitan: one torch._grouped_mm per expert weight whatever the local experts.
        m.moe.shared_experts = 0;
        pl.ep = 1;
        const double one = forwardKernelsPerLayer(m, pl, fsdp(true), true);
        pl.ep = 16;
        QCOMPARE(forwardKernelsPerLayer(m, pl, fsdp(true), true), one);
    }

    void hostCallsCountMegatronsGptLayer()
    {
        // Megatron's legacy GPT layer (megatron/model/transformer.py, ParallelAttention and
        // ParallelTransformerLayer.forward), counted by hand from the code: without flash
        // attention its kernels are the 4 GEMMs, baddbmm, fused softmax, dropout and bmm, 6 fused
        // element-wise kernels (14; and 2 all-reduces at TP > 1); the calls that launch none are
        // the QKV view and split, q and k views, torch.empty, 3 transposes, the score view, the
        // softmax's view in and out, the RNG tracker's 4 state swaps, the value and probability
        // views, the value transpose, the context view, permute, contiguous and the last view
        // (22), 2 bias expand_as, and at TP > 1 the 2 copy_to_tensor_model_parallel_region.
        ModelSpec gpt = llama8b();
        gpt.gated_mlp = false; // GPT-style biases
        ParallelPlan pl;
        TrainingSettings meg;
        meg.framework = Framework::Megatron;
        meg.flash_attention = false;
        QCOMPARE(forwardHostOpsPerLayer(gpt, pl, meg, false), 14.0 + 22 + 2);
        pl.tp = 2;
        QCOMPARE(forwardHostOpsPerLayer(gpt, pl, meg, false), 16.0 + 22 + 2 + 2);
        meg.flash_attention = true; // q, k, v and output rearranges around the flash call
        QCOMPARE(forwardHostOpsPerLayer(gpt, pl, meg, false), 13.0 + 5 + 2 + 2);
        // torchtitan's eager ops are already one kernel each.
        pl = ParallelPlan{};
        QCOMPARE(forwardHostOpsPerLayer(llama8b(), pl, fsdp(false), false),
                 forwardKernelsPerLayer(llama8b(), pl, fsdp(false), false));
    }

    void hostTimeOfAPassIsItsCalls()
    {
        // Per micro-batch, full recompute, at 12.5 µs per call: forward 38 calls; backward 3 per
        // forward call (the autograd node and its two ops) + the recomputed 38 + the checkpoint
        // function's 17 (RNG states saved, read, restored and put back, inputs detached,
        // enable_grad, autograd.backward, the input gradients).
        ModelSpec gpt = llama8b();
        gpt.gated_mlp = false;
        const ParallelPlan pl;
        TrainingSettings meg;
        meg.framework = Framework::Megatron;
        meg.flash_attention = false;
        meg.recompute = Recompute::Full;
        const Dims d = dimsFor(gpt, meg, pl);
        const LayerTimes lt =
            layerTimes(gpt, d, kernels(), pl, meg, ModelConstants{}, AttentionSetup{}, false);
        QVERIFY_CLOSE(lt.host_f, 38 * 12.5e-6, 1e-12);
        QVERIFY_CLOSE(lt.host_b, (3 * 38 + 38 + 17) * 12.5e-6, 1e-12);
        // Without recomputation the backward issues three calls per forward call only.
        meg.recompute = Recompute::None;
        const LayerTimes none =
            layerTimes(gpt, d, kernels(), pl, meg, ModelConstants{}, AttentionSetup{}, false);
        QVERIFY_CLOSE(none.host_b, 3 * 38 * 12.5e-6, 1e-12);
    }

    void launchesChargeForwardBackwardAndRecompute()
    {
        const ModelSpec m = llama8b();
        const ParallelPlan pl;
        TrainingSettings meg;
        meg.framework = Framework::Megatron;
        meg.recompute = Recompute::Full;
        ModelConstants kc;
        const Dims d = dimsFor(m, meg, pl);
        // 11 forward kernels: forward 11, backward 22, recompute 11, at 12.5 µs.
        const LayerTimes lt = layerTimes(m, d, kernels(), pl, meg, kc, AttentionSetup{}, false);
        QVERIFY_CLOSE(lt.launch, 44 * 12.5e-6, 1e-12);
        kc.kernel_launch_seconds = 0;
        const LayerTimes none = layerTimes(m, d, kernels(), pl, meg, kc, AttentionSetup{}, false);
        QVERIFY_CLOSE(lt.f - none.f, 11 * 12.5e-6, 1e-9);
        QVERIFY_CLOSE(lt.b - none.b, 33 * 12.5e-6, 1e-9);
    }

    void torchtitanSelectiveRecomputesKOAndW3()
    {
        // torchtitan's per-op SAC counts a block's matmuls from 1 in each call and saves the
        // odd ones: of q, k, v, o, w1, w3, w2 (its Llama order) K, O and w3 run again, with every
        // element-wise op; the attention core is saved. With HBM fast enough that every GEMM is
        // compute-bound, each costs its FLOPs at 1e15/s.
        const ModelSpec m = llama8b();
        const ParallelPlan pl;
        ModelConstants kc;
        kc.kernel_launch_seconds = 0;
        TrainingSettings sac = fsdp(true, Recompute::Selective);
        sac.rope_impl = RopeImpl::Real; // every element-wise op fused (kFusedElements)
        KernelModel k = kernels();
        k.hbm = 1e15;
        const Dims d = dimsFor(m, sac, pl);
        const LayerTimes lt = layerTimes(m, d, k, pl, sac, kc, AttentionSetup{}, false);
        const double T = d.tokens;
        const double gemms = 2 * T * (4096.0 * 1024 + 4096.0 * 4096 + 4096.0 * 14336) / 1e15;
        const double elem = 2 * T * kFusedElements / 1e15;
        QVERIFY_CLOSE(lt.recompute, gemms + elem, 1e-9);
        // 36.6 % of the forward matmuls' time (79.7M of 218.1M weights), not half.
        QVERIFY_CLOSE((lt.recompute - elem) / lt.linear_f, 79691776.0 / 218103808.0, 1e-9);
        // Megatron's selective recomputes only the attention core.
        TrainingSettings meg = sac;
        meg.framework = Framework::Megatron;
        const LayerTimes mg = layerTimes(m, d, k, pl, meg, kc, AttentionSetup{}, false);
        QVERIFY_CLOSE(mg.recompute, mg.core.f, 1e-12);
        QVERIFY(lt.recompute > mg.recompute);
        // Its hardware FLOPs: one more forward of K, O and w3 in each of the 32 layers, and no
        // attention core (8 sequences of 4,096, the padded vocabulary of 128,256).
        const double B = 8, s = 4096, N = B * s;
        const double base = hardwareFlopsPerStep(m, B, s, Recompute::None, 128256);
        const double op =
            hardwareFlopsPerStep(m, B, s, Recompute::Selective, 128256, kRecomputeCoreAttn, true);
        QVERIFY_CLOSE(op - base, 32 * 2 * N * 79691776.0, 1e-9);
    }

    // TransformerEngine's userbuffers overlap with its default configuration (initialize_ub):
    // ring-exchanged gathers under t chunks of their GEMM, pipelined reduce-scatters under 4
    // chunks (the last chunk's scatter exposed), bulk re-gathers and scatters beside whole GEMMs.
    void userbuffersOverlapFollowsTeDefaults()
    {
        Scenario s = llama8bTp8OnH100();
        s.training = fsdp(true);
        s.training.framework = Framework::Megatron;
        const Dims d = dimsFor(s.model, s.training, s.parallel);
        const Topology topo = placeGroups(s.parallel, s.cluster);
        const ModelConstants kc;
        const CommContext c{&s, &d, &topo, &kc, nullptr};
        const LinkModel l = c.link(topo.tp);
        const double S = d.b * d.s * d.h * 2;
        const double ag = c.seconds(Collective::AllGather, l, S);
        const double rs = c.seconds(Collective::ReduceScatter, l, S);
        LayerTimes lt;
        const CommTimes off = tpComm(c, lt);
        QVERIFY_CLOSE(off.forward, 2 * (ag + rs), 1e-12);
        s.parallel.tp_comm_overlap = true;
        // GEMMs far longer than any collective: a quarter of each forward reduce-scatter stays.
        lt.tp_gemm = TpGemmSeconds{1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1};
        CommTimes on = tpComm(c, lt);
        QVERIFY_CLOSE(on.forward, 2 * rs / 4, 1e-12);
        QCOMPARE(on.backward, 0.0);
        // Backward moves four gathers (two output gradients, two input re-gathers) and two
        // scatters; all of the layer's collectives but the exposed quarters are hidden.
        QVERIFY_CLOSE(on.hidden, 6 * ag + 4 * rs - rs / 2, 1e-12);
        // A ring gather of T under a GEMM of C leaves T - 7C/8 (t = 8); a pipelined scatter
        // under C leaves rs - 3C/4; a bulk one beside C leaves rs - C.
        const double C = 0.5 * ag;
        lt.tp_gemm = TpGemmSeconds{C, 1, 1, 1, C, 1, 0, 1, 1, C, 1};
        on = tpComm(c, lt);
        QVERIFY_CLOSE(on.forward, (ag - C * 7 / 8) + 2 * rs / 4, 1e-12);
        QVERIFY_CLOSE(on.backward, (ag - C * 7 / 8) + std::max(0.0, rs - C), 1e-12);
        // Full recompute repeats the forward's collectives and their exposure.
        s.training.recompute = Recompute::Full;
        const CommTimes rc = tpComm(c, lt);
        QVERIFY_CLOSE(rc.backward, on.backward + on.forward, 1e-12);
        // Without SP there is nothing to split: no change.
        s.training.recompute = Recompute::None;
        s.parallel.sequence_parallel = false;
        const Dims d2 = dimsFor(s.model, s.training, s.parallel);
        const CommContext c2{&s, &d2, &topo, &kc, nullptr};
        s.parallel.tp_comm_overlap = false;
        const double plain = tpComm(c2, lt).forward;
        s.parallel.tp_comm_overlap = true;
        QCOMPARE(tpComm(c2, lt).forward, plain);
    }

    // The GEMMs as the overlap runs them. TE: a ring-exchanged GEMM is t GEMMs of tokens/t rows;
    // a pipelined one 4 such GEMMs and, like a bulk-overlapped one, on 132 - 16 of the H100's
    // SMs. AsyncTP: every fused GEMM in t chunks, no SM margin.
    void overlappedGemmsRunSplitAndOnFewerSms()
    {
        const ModelSpec m = llama8b();
        Scenario s = llama8bTp8OnH100();
        s.training.framework = Framework::Megatron;
        s.parallel.tp_comm_overlap = true;
        const Dims d = dimsFor(s.model, s.training, s.parallel);
        KernelModel k = kernels();
        k.latency = 5e-6; // each chunk is a kernel of its own
        k.sms = 132;
        const double slow = 132.0 / 116.0;
        const double qkv = (d.q + 2 * d.kv) / d.t;
        const TpGemmSeconds te = tpGemmSeconds(m, d, k, s.training);
        QVERIFY_CLOSE(te.qkv_f, 8 * k.gemm(d.tokens / 8, d.h, qkv, true), 1e-12);
        QVERIFY_CLOSE(te.o_f, slow * 4 * k.gemm(d.tokens / 4, d.o / d.t, d.h, true), 1e-12);
        QVERIFY_CLOSE(te.qkv_wgrad, slow * k.gemm(d.h, d.tokens, qkv, true), 1e-12);
        // Splitting costs the extra starts (and re-reading the weights per chunk), the margin
        // 16/116 of the GEMMs beside pipelined and bulk communication.
        QVERIFY(te.split_f > 0);
        QVERIFY(te.split_b > 0);
        const double bulk = te.qkv_dgrad + te.up_dgrad + te.qkv_wgrad + te.up_wgrad;
        QVERIFY(te.split_b >= bulk * (1 - 1 / slow) - 1e-15);
        // With HBM fast enough that no chunk is bound by re-reading its weights, AsyncTP's four
        // forward GEMMs in 8 chunks cost exactly 4 x 7 more kernel starts.
        k.hbm = 1e18;
        TrainingSettings tt = fsdp(true);
        const TpGemmSeconds async = tpGemmSeconds(m, d, k, tt);
        QVERIFY_CLOSE(async.o_f, 8 * k.gemm(d.tokens / 8, d.o / d.t, d.h, true), 1e-12);
        QCOMPARE(async.qkv_dgrad, 0.0);
        QVERIFY_CLOSE(async.split_f, 4 * 7 * k.latency, 1e-9);

        // An MoE layer's MLP runs the dispatcher's collectives: nothing of it is split, so the
        // overlap leaves its compute as it was; a dense layer's grows by the split.
        const ModelSpec moe = testmodels::mixtral8x7b();
        ParallelPlan pl = s.parallel;
        const Dims dm = dimsFor(moe, s.training, pl);
        const ModelConstants kc;
        const LayerTimes plainMoe =
            layerTimes(moe, dm, k, pl, s.training, kc, AttentionSetup{}, true);
        const LayerTimes plainDense =
            layerTimes(m, d, k, pl, s.training, kc, AttentionSetup{}, false);
        pl.tp_comm_overlap = false;
        const LayerTimes offMoe =
            layerTimes(moe, dm, k, pl, s.training, kc, AttentionSetup{}, true);
        const LayerTimes offDense =
            layerTimes(m, d, k, pl, s.training, kc, AttentionSetup{}, false);
        QCOMPARE(plainMoe.f, offMoe.f);
        QVERIFY(plainDense.f > offDense.f);
    }

    void fp8CastBytesFollowTheRecipe()
    {
        // M 2, K 3, N 5: X has 6 elements, W 15, dY 10. Bytes per element from torchao's
        // roofline_utils.py (get_tensor_memory_traffic_ovhd_s, not fused with the previous op).
        // tensorwise: X and dY 2 (amax) + 2 + 1 + 1 = 6, W 2 + 3 (forward) + 3 (backward).
        Fp8CastBytes c = fp8CastBytes(2, 3, 5, Fp8Recipe::Tensorwise);
        QCOMPARE(c.forward, 6 * 6.0 + 5 * 15.0);
        QCOMPARE(c.backward, 6 * 10.0 + 3 * 15.0);
        // rowwise: X and dY 5 + 3 = 8, W 3 + 4 + 3 = 10: 48 + 150 + 80 = 278 bytes in all.
        c = fp8CastBytes(2, 3, 5, Fp8Recipe::Rowwise);
        QCOMPARE(c.forward + c.backward, 278.0);
        QCOMPARE(c.forward, 3 * 6.0 + 3 * 15.0);
        // rowwise_with_gw_hp: X and dY 3, W 3 + 3; mxfp8: 3 + 3 each.
        c = fp8CastBytes(2, 3, 5, Fp8Recipe::RowwiseGwHp);
        QCOMPARE(c.forward + c.backward, 3 * 6.0 + 6 * 15.0 + 3 * 10.0);
        c = fp8CastBytes(2, 3, 5, Fp8Recipe::Mxfp8);
        QCOMPARE(c.forward + c.backward, 6 * 6.0 + 6 * 15.0 + 6 * 10.0);
        // Cast on a 1/8 shard before the FP8 all-gather: (2 + 3)/8 + 2 (the transposed copy).
        c = fp8CastBytes(2, 3, 5, Fp8Recipe::Tensorwise, 8, 8);
        QCOMPARE(c.forward, (5 / 8.0 + 2) * 6 + 5 * 15.0);
        QCOMPARE(c.backward, (5 / 8.0 + 2) * 10 + 3 * 15.0);
        // Defaults: torchao's tensorwise for FSDP, Transformer Engine's delayed elsewhere.
        TrainingSettings tr = fsdp(true);
        QVERIFY(resolvedFp8Recipe(tr) == Fp8Recipe::Tensorwise);
        tr.framework = Framework::Megatron;
        QVERIFY(resolvedFp8Recipe(tr) == Fp8Recipe::Delayed);
        tr.fp8_recipe = Fp8Recipe::Rowwise;
        QVERIFY(resolvedFp8Recipe(tr) == Fp8Recipe::Rowwise);
        // rowwise_with_gw_hp runs the weight-gradient GEMM in BF16 (1e15 here, FP8 2e15).
        KernelModel k = kernels(true);
        k.recipe = Fp8Recipe::RowwiseGwHp;
        double f = 0, b = 0, w = 0;
        k.linear(4096, 4096, 4096, 1, f, b, w);
        QVERIFY_CLOSE(w, 2 * 4096. * 4096 * 4096 / 1e15, 1e-12);
    }

    void torchtitanAsyncTpFusesEachCollectiveWithItsOwnGemm()
    {
        Scenario s = llama8bTp8OnH100();
        s.training = fsdp(true, Recompute::Selective); // torchtitan's op-level SAC
        const Dims d = dimsFor(s.model, s.training, s.parallel);
        const Topology topo = placeGroups(s.parallel, s.cluster);
        const ModelConstants kc;
        const CommContext c{&s, &d, &topo, &kc, nullptr};
        const LinkModel l = c.link(topo.tp);
        const double S = d.b * d.s * d.h * 2; // one b·s·h bf16 activation
        const double ag = c.seconds(Collective::AllGather, l, S);
        const double rs = c.seconds(Collective::ReduceScatter, l, S);
        // Vanilla: 2 gathers + 2 scatters each way, and SAC's two re-gathers in backward.
        LayerTimes lt;
        CommTimes tp = tpComm(c, lt);
        QVERIFY_CLOSE(tp.forward, 2 * (ag + rs), 1e-12);
        QVERIFY_CLOSE(tp.backward, 2 * (ag + rs) + 2 * ag, 1e-12);
        // Float8 tensorwise gathers FP8: half the bytes; reduce-scatters stay BF16.
        s.training.precision = Precision::FP8;
        const double ag8 = c.seconds(Collective::AllGather, l, S / 2);
        QVERIFY_CLOSE(tpComm(c, lt).forward, 2 * (ag8 + rs), 1e-12);
        s.training.precision = Precision::BF16;
        // AsyncTP under GEMMs far longer than any collective: the forward keeps only the two
        // reduce-scatters' partial sums, the backward the two input-gradient reduce-scatters.
        s.parallel.tp_comm_overlap = true;
        lt.tp_gemm = TpGemmSeconds{1, 1, 1, 1, 1, 1, 1e-3};
        tp = tpComm(c, lt);
        QVERIFY_CLOSE(tp.forward, 2e-3, 1e-12);
        QVERIFY_CLOSE(tp.backward, 2 * rs, 1e-12);
        QVERIFY_CLOSE(tp.hidden, 4 * (ag + rs) + 2 * ag - 2 * rs, 1e-12);
        // A GEMM of C covers (t - 1)/t of C: a gather of T under its GEMM leaves T - 7C/8.
        const double C = 0.5 * ag;
        lt.tp_gemm = TpGemmSeconds{C, 1, 1, 1, 1, 1, 0};
        QVERIFY_CLOSE(tpComm(c, lt).forward, ag - C * 7 / 8, 1e-12);
        // Rowwise Float8: a cast between gather and GEMM, so no gather fuses.
        s.training.precision = Precision::FP8;
        s.training.fp8_recipe = Fp8Recipe::Rowwise;
        lt.tp_gemm = TpGemmSeconds{1, 1, 1, 1, 1, 1, 0};
        tp = tpComm(c, lt);
        QVERIFY_CLOSE(tp.forward, 2 * ag, 1e-12);
        QVERIFY_CLOSE(tp.backward, 2 * ag + 2 * rs + 2 * ag, 1e-12);
    }
};

QTEST_APPLESS_MAIN(TestKernelExtras)
#include "test_kernel_extras.moc"
