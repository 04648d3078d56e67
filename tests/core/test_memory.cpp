// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/memory.h"
#include "core/plan_options.h"
#include "test_models.h"
#include "test_scenarios.h"

#include <array>

#include <QTest>

#include <cmath>

using namespace paralens;
using namespace paralens::testmodels;

namespace {

// One layer's activation shape at sequence `seq` with flash attention and no dropout.
ActivationShape flashNoDropout(double seq)
{
    ActivationShape a;
    a.seq = seq;
    a.flash_attention = true;
    a.dropout = false;
    return a;
}

} // namespace

class TestMemory : public QObject
{
    Q_OBJECT
private slots:
    // ZeRO paper (Rajbhandari et al. 2020) Table 1: Ψ = 7.5e9, K = 12, GB = 1e9 B.
    void zeroPaperTable1_data()
    {
        QTest::addColumn<int>("nd");
        QTest::addColumn<double>("os");
        QTest::addColumn<double>("osg");
        QTest::addColumn<double>("osgp");
        QTest::newRow("1") << 1 << 120.0 << 120.0 << 120.0;
        QTest::newRow("4") << 4 << 52.5 << 41.3 << 30.0;
        QTest::newRow("16") << 16 << 35.6 << 21.6 << 7.5;
        QTest::newRow("64") << 64 << 31.4 << 16.6 << 1.88;
        QTest::newRow("256") << 256 << 30.4 << 15.4 << 0.47;
        QTest::newRow("1024") << 1024 << 30.1 << 15.1 << 0.12;
    }
    void zeroPaperTable1()
    {
        QFETCH(int, nd);
        QFETCH(double, os);
        QFETCH(double, osg);
        QFETCH(double, osgp);
        const auto fw = conventions(Framework::DeepSpeed, Optimizer::Adam);
        const double psi = 7.5e9;
        QCOMPARE(modelStateBytes(psi, fw, 0, nd, false).total(), 120e9);
        // The paper rounds to 0.1 GB (0.01 below 1 GB).
        const double tol = 0.051e9;
        QVERIFY(std::abs(modelStateBytes(psi, fw, 1, nd, false).total() - os * 1e9) < tol);
        QVERIFY(std::abs(modelStateBytes(psi, fw, 2, nd, false).total() - osg * 1e9) < tol);
        QVERIFY(std::abs(modelStateBytes(psi, fw, 3, nd, false).total() - osgp * 1e9) <
                (osgp < 1 ? 0.006e9 : tol));
    }
    void zeroPaperText64()
    {
        const auto fw = conventions(Framework::DeepSpeed, Optimizer::Adam);
        const double gb = 1e9, psi = 7.5e9;
        QCOMPARE(std::round(modelStateBytes(psi, fw, 0, 64, false).total() / gb * 10) / 10, 120.0);
        QCOMPARE(std::round(modelStateBytes(psi, fw, 1, 64, false).total() / gb * 10) / 10, 31.4);
        QCOMPARE(std::round(modelStateBytes(psi, fw, 2, 64, false).total() / gb * 10) / 10, 16.6);
        QCOMPARE(std::round(modelStateBytes(psi, fw, 3, 64, false).total() / gb * 10) / 10, 1.9);
    }

    // Megatron dist_optimizer.md: bf16 params / fp32 main grads: 18 B, or 6 + 12/d with the
    // distributed optimizer.
    void megatronBytesPerParam()
    {
        const auto fw = conventions(Framework::Megatron, Optimizer::Adam);
        QCOMPARE(modelStateBytes(1.0, fw, 0, 64, false).total(), 18.0);
        for (int d : {1, 2, 8, 64, 1024})
            QCOMPARE(modelStateBytes(1.0, fw, 1, d, false).total(), 6.0 + 12.0 / d);
        // Offload takes the optimizer states off the GPU.
        QCOMPARE(modelStateBytes(1.0, fw, 1, 8, true).total(), 6.0);
    }

    void zeroStagesNeverGrow()
    {
        for (Framework f : {Framework::Megatron, Framework::DeepSpeed, Framework::FSDP}) {
            const auto fw = conventions(f, Optimizer::Adam);
            double last = 1e300;
            for (int z = 0; z <= 3; ++z) {
                const double b = modelStateBytes(1e9, fw, z, 16, false).total();
                QVERIFY(b < last);
                last = b;
            }
        }
    }

    // Korthikanti et al. 2022 Table 2 per-layer activations, GPT-3 shapes (h 12288, a 96,
    // s 2048), plain MLP, no flash attention, t = 8, b = 1.
    void korthikantiTable2_data()
    {
        QTest::addColumn<int>("tp");
        QTest::addColumn<bool>("sp");
        QTest::addColumn<int>("recompute");
        QTest::addColumn<double>("expected");
        const double s = 2048, b = 1, h = 12288, a = 96, t = 8;
        const double sbh = s * b * h;
        QTest::newRow("no parallelism") << 1 << false << 0 << sbh * (34 + 5 * a * s / h);
        QTest::newRow("tensor parallel")
            << 8 << false << 0 << sbh * (10 + 24 / t + 5 * a * s / (h * t));
        QTest::newRow("tp + sp") << 8 << true << 0 << sbh * (34 / t + 5 * a * s / (h * t));
        QTest::newRow("tp + selective") << 8 << false << 1 << sbh * (10 + 24 / t);
        QTest::newRow("tp + sp + selective") << 8 << true << 1 << sbh * 34 / t;
        QTest::newRow("full recompute") << 8 << false << 2 << 2 * sbh;
    }
    void korthikantiTable2()
    {
        QFETCH(int, tp);
        QFETCH(bool, sp);
        QFETCH(int, recompute);
        QFETCH(double, expected);
        ActivationShape a;
        a.seq = 2048;
        a.micro_batch = 1;
        a.tp = tp;
        a.sequence_parallel = sp;
        a.recompute = static_cast<Recompute>(recompute);
        a.flash_attention = false;
        QCOMPARE(denseLayerActivationBytes(gpt3_175b(), a), expected);
    }

    void korthikantiDerived()
    {
        // 5·a·s/h = 80 for GPT-3 (Korthikanti §5): the score term is 80/34 of the rest.
        ActivationShape a;
        a.seq = 2048;
        a.flash_attention = false;
        const ModelSpec m = gpt3_175b();
        const double sbh = 2048.0 * 12288;
        QCOMPARE(denseLayerActivationBytes(m, a) / sbh, 34.0 + 80.0);
        // Flash attention removes the score matrices (keeps a 4·a·s·b fp32 log-sum-exp).
        a.flash_attention = true;
        QCOMPARE(denseLayerActivationBytes(m, a), 34 * sbh + 4 * 96 * 2048.0);
        // CP divides every term.
        ActivationShape c = a;
        c.cp = 4;
        QCOMPARE(denseLayerActivationBytes(m, c), denseLayerActivationBytes(m, a) / 4);
        // Gated MLP (docs/formulas.md §3.2): SP + selective ≈ sbh(18 + 6·ffn/h) with MHA (+ lse).
        ModelSpec g = m;
        g.gated_mlp = true;
        g.ffn_hidden = 3 * 12288;
        ActivationShape sel;
        sel.seq = 2048;
        sel.recompute = Recompute::Selective;
        QCOMPARE(denseLayerActivationBytes(g, sel) / sbh, 18.0 + 6 * 3.0);
    }

    void moeLayerActivations()
    {
        // docs/formulas.md §3.2 (derived): per token 16h + 2h + k(2h + 6 ffn_e) + 2kh
        // + 6 ffn_sh + 4E with SP, MHA-equivalent attention; Mixtral has GQA so recompute the
        // attention part by hand.
        const ModelSpec m = mixtral8x7b();
        ActivationShape a;
        a.seq = 4096;
        a.recompute = Recompute::Selective;
        const double h = 4096, q = 4096, kv = 1024, k = 2, fe = 14336, E = 8, N = 4096;
        const double attn = 5 * h + 2 * (q + 2 * kv) + 2 * q; // no flash, selective: no scores
        const double expected = N * (attn + 5 * h + 4 * k * h + 4 * E + k * 6 * fe);
        a.flash_attention = false;
        QCOMPARE(moeLayerActivationBytes(m, a), expected);
        // With MHA the notes' form applies as written.
        ModelSpec mha = m;
        mha.kv_heads = 32;
        const double notes = N * (16 * h + 2 * h + k * (2 * h + 6 * fe) + 2 * k * h + 4 * E);
        QCOMPARE(moeLayerActivationBytes(mha, a), notes);
    }

    // Transformer Engine saves each FP8 linear's input quantized (1 byte) for its weight
    // gradient; the fused attention keeps its bf16 output besides the projection's FP8 copy
    // (docs/formulas.md §3.2). Llama 3 70B at t 4 with SP, s 8192, flash, no dropout: the QKV
    // and fc1 inputs (h/t each), the fc2 input (ffn/t) are saved at 1 byte, the projection adds
    // o/t: 8192 · (2·8192 + 28672 − 8192)/4 bytes fewer per layer.
    void fp8LinearInputsSavedQuantized()
    {
        const ModelSpec m = llama3_70b();
        ActivationShape a = flashNoDropout(8192);
        a.tp = 4;
        a.sequence_parallel = true;
        ActivationShape q = a;
        q.fp8_linear_inputs = true;
        const double saved = 8192.0 * (2 * 8192 + 28672 - 8192) / 4;
        QCOMPARE(denseLayerActivationBytes(m, a) - denseLayerActivationBytes(m, q), saved);
        // Without the fused kernel nothing else holds the attention output: o/t is saved too.
        a.flash_attention = q.flash_attention = false;
        a.recompute = q.recompute = Recompute::Selective;
        QCOMPARE(denseLayerActivationBytes(m, a) - denseLayerActivationBytes(m, q),
                 8192.0 * (2 * 8192 + 28672 + 8192) / 4);
        // Full recompute keeps the bf16 layer input alone.
        a.recompute = q.recompute = Recompute::Full;
        QCOMPARE(denseLayerActivationBytes(m, q), denseLayerActivationBytes(m, a));
        // MoE (Mixtral, t 1, flash): QKV input h, the k permuted copies k·h, the experts' fc2
        // inputs k·ffn_e; the projection's FP8 copy adds o = h back.
        const ModelSpec x = mixtral8x7b();
        const ActivationShape e = flashNoDropout(4096);
        ActivationShape eq = e;
        eq.fp8_linear_inputs = true;
        QCOMPARE(moeLayerActivationBytes(x, e) - moeLayerActivationBytes(x, eq),
                 4096.0 * (2 * 4096 + 2 * 14336));
        // A shared expert's fc1 keeps its own FP8 copy of the router input (h).
        ModelSpec sh = x;
        sh.moe.shared_experts = 1;
        QCOMPARE(moeLayerActivationBytes(sh, e) - moeLayerActivationBytes(sh, eq),
                 4096.0 * (2 * 4096 + 2 * 14336 + 14336 - 4096));
    }

    // Which runs save FP8 inputs: Transformer Engine frameworks in FP8 only; torchao's
    // Float8Linear (torchtitan, FSDP) saves the bf16 input.
    void fp8InputsFollowTheFramework()
    {
        TrainingSettings t;
        t.precision = Precision::FP8;
        ParallelPlan p;
        for (Framework f : {Framework::Megatron, Framework::DeepSpeed, Framework::FSDP}) {
            t.framework = f;
            QCOMPARE(conventions(t, p).fp8_saves_quantized_inputs, f != Framework::FSDP);
        }
        t.framework = Framework::Megatron;
        t.precision = Precision::BF16;
        QVERIFY(!conventions(t, p).fp8_saves_quantized_inputs);
    }

    // Megatron-Core with a recipe other than delayed: the out-projection and the shared
    // experts' fc1 save the bf16 input the fused attention and the router already hold, no
    // FP8 copy (attention.py, shared_experts.py: fp8_recipe != 'delayed'). Mixtral at t 1,
    // flash, s 4096: the projection's o = h copy is gone, and with a shared expert its h too.
    void fp8NonDelayedReusesHeldInputs()
    {
        TrainingSettings t;
        t.precision = Precision::FP8;
        t.framework = Framework::Megatron;
        ParallelPlan p;
        QVERIFY(!conventions(t, p).fp8_reuses_held_inputs); // Megatron's default: delayed
        for (Fp8Recipe r : {Fp8Recipe::Tensorwise, Fp8Recipe::Mxfp8}) {
            t.fp8_recipe = r;
            QVERIFY(conventions(t, p).fp8_reuses_held_inputs);
        }
        t.framework = Framework::DeepSpeed;
        QVERIFY(!conventions(t, p).fp8_reuses_held_inputs);

        const ModelSpec x = mixtral8x7b();
        ActivationShape a = flashNoDropout(4096);
        a.fp8_linear_inputs = true;
        ActivationShape r = a;
        r.fp8_reuses_held_inputs = true;
        QCOMPARE(moeLayerActivationBytes(x, a) - moeLayerActivationBytes(x, r), 4096.0 * 4096);
        QCOMPARE(denseLayerActivationBytes(llama3_8b(), a) -
                     denseLayerActivationBytes(llama3_8b(), r),
                 4096.0 * 4096);
        ModelSpec sh = x;
        sh.moe.shared_experts = 1;
        QCOMPARE(moeLayerActivationBytes(sh, a) - moeLayerActivationBytes(sh, r),
                 2 * 4096.0 * 4096);
    }

    // Megatron-Core since v0.13 multiplies the router probabilities inside the experts'
    // activation and unpermutes without them: the combine keeps no expert outputs, 2·k·h bytes
    // per token less than Megatron-Core v0.12 and DeepSpeed (token_dispatcher.py). Qwen3-30B-A3B
    // shapes (h 2048, top-8): 32 KiB per token.
    void megatronCombineKeepsNoExpertOutputs()
    {
        TrainingSettings t;
        ParallelPlan p;
        for (Framework f : {Framework::Megatron, Framework::DeepSpeed, Framework::FSDP}) {
            t.framework = f;
            QCOMPARE(conventions(t, p).moe_combine_keeps_outputs, f != Framework::Megatron);
        }
        ModelSpec m = mixtral8x7b();
        m.hidden = 2048;
        m.moe.top_k = 8;
        ActivationShape a;
        a.seq = 4096;
        a.flash_attention = true;
        ActivationShape c = a;
        c.moe_combine_keeps_outputs = false;
        QCOMPARE(moeLayerActivationBytes(m, a) - moeLayerActivationBytes(m, c),
                 4096.0 * 2 * 8 * 2048);
        QCOMPARE(2 * 8 * 2048.0, 32.0 * 1024);
        // moe recompute keeps the layer input alone either way.
        a.recompute = c.recompute = Recompute::Selective;
        a.recompute_modules = c.recompute_modules = kRecomputeMoe;
        QCOMPARE(moeLayerActivationBytes(m, a), moeLayerActivationBytes(m, c));
    }

    // ZB-V / DualPipeV put model chunks r and 2p − 1 − r on device r (Qi et al. 2024, "Pipeline
    // Parallelism with Controllable Memory"; deepseek-ai/DualPipe dualpipev.py): the embedding
    // (chunk 0) and the final norm + LM head + loss (chunk 2p − 1) both on device 0, the last
    // device the two middle chunks. Hand-computed for Llama 3 8B (Table 3 shapes), t = 1,
    // p = 4, s = 4096, b = 1, m = 8, Megatron, ZeRO 0, no dropout.
    void vShapeKeepsBothEndsOnDeviceZero()
    {
        Scenario s = scenario(llama3_8b(), h100_sxm(), 1, 4, 1, 8);
        s.training.recompute = Recompute::Selective; // attention core only: no working set
        s.training.dropout = false;
        const double h = 4096, sb = 4096, vpad = 128256; // 128,256 = 1002·128: no padding
        // Per layer: Q, O 2h², K, V 2·h·1024, SwiGLU 3·h·14,336, two RMSNorms 2h.
        const double layer = 2 * h * h + 2 * h * 1024 + 3 * h * 14336 + 2 * h;
        QCOMPARE(layer, 218112000.0);
        const double emb = vpad * h;
        const ModelConstants k;
        auto run = [&](Schedule sched, std::array<double, 4> inflight) {
            s.parallel = withSchedule(s.parallel, sched);
            const FrameworkConventions fw = conventions(s.training, s.parallel);
            std::array<StageLayers, 4> st{};
            std::array<StageParams, 4> sp{};
            if (!splitLayers(s.model, s.parallel, fw.split, st))
                qFatal("split");
            for (int r = 0; r < 4; ++r)
                sp[r] = stageParameters(s.model, s.parallel, st[r]);
            Estimate e;
            stageMemory(s, fw, k, st, sp, inflight, e);
            return std::tuple{st, sp, e};
        };

        // ZB-V: 8 chunks of 4 layers, two per device.
        {
            const auto [st, sp, e] = run(Schedule::ZBV, {4, 4, 4, 4});
            for (int r = 0; r < 4; ++r) {
                QCOMPARE(st[r].layers, 8);
                QCOMPARE(st[r].first, r == 0);
                QCOMPARE(st[r].last, r == 0);
                QCOMPARE(e.stages[r].holds_embedding, r == 0);
                QCOMPARE(e.stages[r].holds_lm_head, r == 0);
            }
            QCOMPARE(sp[0].total(), 8 * layer + 2 * emb + h); // embedding, LM head, final norm
            QCOMPARE(sp[3].total(), 8 * layer);               // neither end
            QCOMPARE(sp[1].total(), 8 * layer);
            // bf16 weights (2 bytes, ZeRO 0).
            QCOMPARE(e.stages[0].parameters - e.stages[3].parameters, 2 * (2 * emb + h));
            // Same layers and in-flight count: stage 0 adds the token ids (8 bytes per token)
            // for its 4 micro-batches, the head's final-norm and LM-head inputs (2 + 2 bytes ·
            // h) and fp32 logits (4·V) for the one micro-batch between the last chunk's F and
            // B, and Megatron's one further fp32 logits copy at the loss's backward.
            const double embAct = 8 * sb, headAct = 4 * sb * h + 4 * sb * vpad;
            const double loss = 4 * sb * vpad;
            QCOMPARE(e.stages[0].activations - e.stages[3].activations,
                     4 * embAct + headAct + loss);
        }
        // DualPipeV: the same placement.
        {
            const auto [st, sp, e] = run(Schedule::DualPipeV, {4.5, 4.5, 4.5, 4.5});
            QVERIFY(st[0].first && st[0].last && !st[3].first && !st[3].last);
            QCOMPARE(sp[0].total(), 8 * layer + 2 * emb + h);
        }
        // 1F1B unchanged: embedding on stage 0, LM head on stage 3.
        {
            const auto [st, sp, e] = run(Schedule::OneF1B, {4, 3, 2, 1});
            for (int r = 0; r < 4; ++r) {
                QCOMPARE(st[r].first, r == 0);
                QCOMPARE(st[r].last, r == 3);
                QCOMPARE(e.stages[r].holds_embedding, r == 0);
                QCOMPARE(e.stages[r].holds_lm_head, r == 3);
            }
            QCOMPARE(sp[0].total(), 8 * layer + emb);
            QCOMPARE(sp[3].total(), 8 * layer + emb + h);
            // Stage 3 holds one micro-batch of 8 layers plus the head, stage 1 three of 8 layers.
            const double headAct = 4 * sb * h + 4 * sb * vpad, loss = 4 * sb * vpad;
            QCOMPARE(e.stages[3].activations - e.stages[1].activations / 3, headAct + loss);
        }
        // Tied: one matrix on device 0 under a V; a second copy on the last stage in 1F1B.
        s.model.tied_embeddings = true;
        {
            const auto [st, sp, e] = run(Schedule::ZBV, {4, 4, 4, 4});
            QCOMPARE(sp[0].total(), 8 * layer + emb + h);
            QCOMPARE(sp[3].total(), 8 * layer);
        }
        {
            const auto [st, sp, e] = run(Schedule::OneF1B, {4, 3, 2, 1});
            QCOMPARE(sp[0].total(), 8 * layer + emb);
            QCOMPARE(sp[3].total(), 8 * layer + emb + h);
        }
    }

    // torch.distributed.pipelining's receive buffers (FSDP conventions): one b·s·h bf16 hidden
    // state per micro-batch for each chunk input that is not the model's first (activations)
    // and each that is not its last (gradients). Under a V, device 0's two chunks are the
    // model's first and last: 2 buffers a micro-batch; the last device's two middle chunks 4.
    void vShapeReceiveBuffers()
    {
        Scenario s = scenario(llama3_8b(), h100_sxm(), 1, 4, 1, 8);
        s.training.framework = Framework::FSDP;
        s.parallel.zero = 0;
        s.parallel = withSchedule(s.parallel, Schedule::ZBV);
        const FrameworkConventions fw = conventions(s.training, s.parallel);
        QVERIFY(fw.pp_buffers_per_microbatch);
        std::array<StageLayers, 4> st{};
        std::array<StageParams, 4> sp{};
        QVERIFY(splitLayers(s.model, s.parallel, fw.split, st));
        for (int r = 0; r < 4; ++r)
            sp[r] = stageParameters(s.model, s.parallel, st[r]);
        const std::array<double, 4> inflight{4, 4, 4, 4};
        Estimate e;
        stageMemory(s, fw, ModelConstants{}, st, sp, inflight, e);
        const double hidden = 2.0 * 4096 * 4096, m = 8;
        QCOMPARE(e.stages[3].comm_buffers - e.stages[0].comm_buffers, (4 - 2) * m * hidden);
        QCOMPARE(e.stages[3].comm_buffers, e.stages[2].comm_buffers);
    }

    // PyTorch ring attention's backward buffers (torchtitan, _templated_ring_attention_backward)
    // on a stage without the LM head and without recompute, so they are its only transient:
    // Llama 3 8B, cp 4, s = 131072, N = 32768 tokens a rank, K/V repeated to w = 4096.
    void ringAttentionBackwardBuffers()
    {
        Scenario s = scenario(llama3_8b(), h100_sxm(), 1, 2, 1, 2, 131072);
        s.parallel.cp = 4;
        s.gpus = 8;
        s.training.framework = Framework::FSDP;
        s.training.recompute = Recompute::None;
        s.parallel.zero = 0;
        auto activations = [&](bool buffers) {
            FrameworkConventions fw = conventions(s.training, s.parallel);
            fw.cp.fp32_grad_accumulators = buffers;
            std::array<StageLayers, 2> st{};
            std::array<StageParams, 2> sp{};
            if (!splitLayers(s.model, s.parallel, fw.split, st))
                qFatal("split");
            for (int r = 0; r < 2; ++r)
                sp[r] = stageParameters(s.model, s.parallel, st[r]);
            const std::array<double, 2> inflight{2, 1};
            Estimate e;
            stageMemory(s, fw, ModelConstants{}, st, sp, inflight, e);
            return e.stages[0].activations;
        };
        const double N = 32768, w = 4096, seq = 131072;
        const double gathered = 2 * 2 * seq * w;             // K and V of the whole sequence, bf16
        const double fp32 = 4 * N * w + 3 * (2 * 4 * N * w); // dQ; dK, dV three times
        const double block = 2 * N * (w + 2 * w);            // the block's bf16 dQ, dK, dV
        QCOMPARE(gathered + fp32 + block, 6710886400.0);
        QCOMPARE(activations(true) - activations(false), gathered + fp32 + block);
        // The all-to-all rotater sends and receives one K/V chunk instead of gathering them all.
        s.parallel.cp_comm = CpComm::P2P;
        QCOMPARE(activations(true) - activations(false), 2 * (2 * 2 * N * w) + fp32 + block);
        // Without CP there is no ring.
        s.parallel.cp = 1;
        s.gpus = 2;
        s.training.seq_len = 32768;
        QCOMPARE(activations(true) - activations(false), 0.0);
    }
};

QTEST_APPLESS_MAIN(TestMemory)
#include "test_memory.moc"
