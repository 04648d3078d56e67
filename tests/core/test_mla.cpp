// SPDX-License-Identifier: GPL-3.0-or-later
// Multi-head latent attention (DeepSeek-V2 §2.1; Megatron-Core multi_latent_attention.py):
// weights, their TP sharding, FLOPs, stored activations and GEMM shapes against hand counts of
// the matrices the papers and Megatron-Core define, and the spec's JSON and rules.
#include "core/error.h"
#include "core/flops.h"
#include "core/gemm_shapes.h"
#include "core/memory.h"
#include "core/params.h"
#include "core/presets.h"
#include "core/spec_io.h"
#include "core/validate.h"
#include "test_close.h"

#include <nlohmann/json.hpp>

#include <QTest>

using namespace paralens;

namespace {

const ModelSpec& deepseekV3()
{
    return *PresetLibrary::builtin().model("deepseek-v3");
}

// DeepSeek-V3's attention matrices (config.json: h 7168, 128 heads, q rank 1536, kv rank 512,
// qk dims 128 + 64, v 128): W^DQ 7168x1536, W^UQ 1536x(128·192), W^DKV+W^KR 7168x(512+64),
// W^UKV 512x(128·256), W^O (128·128)x7168, and the two latent RMSNorms 1536 + 512.
constexpr double kQDown = 7168.0 * 1536, kQUp = 1536.0 * 128 * 192;
constexpr double kKvDown = 7168.0 * 576, kKvUp = 512.0 * 128 * 256;
constexpr double kOut = 128.0 * 128 * 7168, kLatentNorms = 1536 + 512;

// A small MLA model for the activation count: h 1024, 8 heads of 64 + 32 (qk) and 64 (v),
// q rank 256, kv rank 128, gated MLP 2048.
ModelSpec smallMla()
{
    ModelSpec m;
    m.layers = 4;
    m.hidden = 1024;
    m.heads = 8;
    m.kv_heads = 8;
    m.ffn_hidden = 2048;
    m.vocab = 32000;
    m.mla = MlaSpec{256, 128, 64, 32, 64};
    return m;
}

} // namespace

class TestMla : public QObject
{
    Q_OBJECT
private slots:
    void layerWeights()
    {
        const LayerParams p = denseLayerParams(deepseekV3());
        // Megatron-Core builds the down-projections "duplicated" (every TP rank holds them),
        // the up-projections and the output projection split by heads.
        QCOMPARE(p.attention, kQUp + kKvUp + kOut);
        QCOMPARE(p.attention_replicated, kQDown + kKvDown + kLatentNorms);
        QCOMPARE(p.attention + p.attention_replicated, 187107328.0);
        QCOMPARE(moeLayerParams(deepseekV3()).attention_replicated, p.attention_replicated);
    }

    // 671 B main model; 37.55 B active with the input embedding (36.63 B without it, DeepSeek's
    // README_WEIGHTS.md 36.6 B), counted by hand from the matrices above and the MoE shapes.
    void totals()
    {
        const double h = 7168, att = kQDown + kQUp + kKvDown + kKvUp + kOut + kLatentNorms;
        const double expert = 3 * h * 2048, dense = att + 3 * h * 18432 + 2 * h;
        const double moe = att + 256 * expert + expert + h * 256 + 2 * h;
        const double total = 3 * dense + 58 * moe + 2 * 129280 * h + h;
        QCOMPARE(totalParameters(deepseekV3()), total);
        QCOMPARE(activeParameters(deepseekV3()), total - 58 * 248 * expert);
        QVERIFY_CLOSE(total, 671.026404352e9, 1e-12);
    }

    // TP 8: the up/out projections, MLPs and shared expert / 8, the down-projections, norms and
    // routers whole, the embedding and head padded to 130048 rows / 8.
    void tensorParallelSharding()
    {
        const ModelSpec& m = deepseekV3();
        ParallelPlan plan;
        plan.tp = 8;
        plan.sequence_parallel = true;
        const StageLayers st{61, 58, true, true};
        const StageParams sp = stageParameters(m, plan, st);
        const double h = 7168, sharded = kQUp + kKvUp + kOut,
                     whole = kQDown + kKvDown + kLatentNorms;
        const double dense = 3 * ((sharded + 3 * h * 18432) / 8 + whole + 2 * h);
        const double moe = 58 * ((sharded + 3 * h * 2048) / 8 + whole + h * 256 + 2 * h);
        const double emb = 2 * 130048.0 * h / 8;
        QVERIFY_CLOSE(sp.dense, dense + moe + emb + h, 1e-12);
        QVERIFY_CLOSE(sp.expert, 58 * 256 * 3 * h * 2048 / 8, 1e-12);
    }

    // Forward FLOPs per token: 2 per weight of every projection; the core 2·s·n_h·(d_qk + d_v).
    void layerFlops()
    {
        const double N = 4096, s = 4096;
        const LayerFlops f = denseLayerFlops(deepseekV3(), N, s);
        QCOMPARE(f.qkv, 2 * N * (kQDown + kQUp + kKvDown + kKvUp));
        QCOMPARE(f.out_proj, 2 * N * kOut);
        QCOMPARE(f.attention_core, 2 * N * s * 128 * (192 + 128));
    }

    // Model FLOPs = 6·T·(matmul weights a token passes) + 6·T·s·n_h·(d_qk + d_v)·L: the active
    // weights less norms, routers and the input embedding (a lookup).
    void modelFlopsIdentity()
    {
        ModelSpec m = deepseekV3();
        m.mtp_layers = 0; // the main model (test_mtp counts the MTP module)
        const double s = 4096, B = 2, T = B * s, h = 7168;
        const double norms = 61 * (2 * h + kLatentNorms) + h;
        const double matmul = activeParameters(m) - norms - 58 * h * 256 - 129280 * h;
        const double core = 6 * T * s * 128 * (192 + 128) * 61;
        QVERIFY_CLOSE(modelFlopsPerStep(m, B, s), 6 * T * matmul + core, 1e-12);
    }

    // Stored bytes per token of the small model's layer (flash attention, no dropout):
    // norm input 2h and down-projection input 2h (÷ t with SP), both latents before and after
    // their norm 2·2·(256 + 128) (÷ t with SP: computed on the sequence shard), Q 2·768, K
    // 2·768, V 2·512, output 2·512, log-sum-exp 4·8 (÷ t), MLP norm and fc1 inputs 4h (÷ t
    // with SP) and the gated MLP's 6·2048 (÷ t).
    void activations_data()
    {
        QTest::addColumn<int>("tp");
        QTest::addColumn<bool>("sp");
        QTest::addColumn<double>("perToken");
        const double replicated = 4096 + 1536 + 4096, sharded = 5120 + 32 + 12288;
        QTest::newRow("tp1") << 1 << false << replicated + sharded;
        QTest::newRow("tp4") << 4 << false << replicated + sharded / 4;
        QTest::newRow("tp4 sp") << 4 << true << (replicated + sharded) / 4;
    }
    void activations()
    {
        QFETCH(int, tp);
        QFETCH(bool, sp);
        QFETCH(double, perToken);
        ActivationShape a;
        a.seq = 4096;
        a.micro_batch = 2;
        a.tp = tp;
        a.sequence_parallel = sp;
        a.flash_attention = true;
        a.dropout = false;
        QCOMPARE(denseLayerActivationBytes(smallMla(), a), perToken * 4096 * 2);
    }

    // Megatron-Core's MLA GEMMs: the down-projections on the rank's tokens (its sequence shard
    // with SP), whole; the up-projections and the output split by heads.
    void gemmShapes()
    {
        Scenario sc;
        sc.model = deepseekV3();
        sc.parallel.tp = 8;
        sc.training.micro_batch = 1;
        sc.training.seq_len = 4096;
        for (bool sp : {false, true}) {
            sc.parallel.sequence_parallel = sp;
            bool down = false, qUp = false, kvUp = false, out = false;
            for (const GemmShape& g : layerGemmShapes(sc)) {
                const std::string l = g.label;
                if (l == "mla_down") {
                    down = g.m == (sp ? 512 : 4096) && g.n == 2112 && g.k == 7168;
                } else if (l == "mla_q_up") {
                    qUp = g.m == 4096 && g.n == 3072 && g.k == 1536;
                } else if (l == "mla_kv_up") {
                    kvUp = g.m == 4096 && g.n == 4096 && g.k == 512;
                } else if (l == "attn_out") {
                    out = g.m == 4096 && g.n == 7168 && g.k == 2048;
                } else {
                    QVERIFY2(l != "qkv", "GQA's fused QKV GEMM with MLA");
                }
            }
            QVERIFY(down && qUp && kvUp && out);
        }
    }

    void jsonRoundTrip()
    {
        const nlohmann::json j = modelToJson(deepseekV3());
        QCOMPARE(j.at("mla").at("kv_lora_rank").get<int>(), 512);
        QVERIFY(modelFromJson(j, "model") == deepseekV3());
        ModelSpec dense = *PresetLibrary::builtin().model("llama3-8b");
        QVERIFY(!modelToJson(dense).contains("mla"));
        nlohmann::json bad = j;
        bad["mla"].erase("v_head_dim");
        try {
            modelFromJson(bad, "model");
            QFAIL("no error");
        } catch (const InputError& e) {
            QCOMPARE(QString(e.what()), QString("model.mla.v_head_dim: required key missing"));
        }
        bad = j;
        bad["mla"]["kv_lora_rank"] = -1;
        QVERIFY_THROWS_EXCEPTION(InputError, modelFromJson(bad, "model"));
    }

    void rules()
    {
        Scenario s;
        s.model = deepseekV3();
        s.model.kv_heads = 8;
        s.cluster = *PresetLibrary::builtin().hardware("h100-sxm");
        s.gpus = 8;
        s.parallel.tp = 8;
        s.training.global_batch = 8;
        bool found = false;
        for (const auto& e : validate(s))
            found = found || e.rule == "mla_kv_heads";
        QVERIFY(found);
        s.model = *PresetLibrary::builtin().model("llama3-8b");
        s.model.mla.v_head_dim = 128; // MLA fields without a kv latent
        found = false;
        for (const auto& e : validate(s))
            found = found || e.rule == "mla_needs_kv_lora_rank";
        QVERIFY(found);
    }
};

QTEST_APPLESS_MAIN(TestMla)
#include "test_mla.moc"
