// SPDX-License-Identifier: GPL-3.0-or-later
// Layer GEMM shapes, checked against hand-computed Llama-3-70B and Mixtral-8x7B numbers
// (model cards: hidden 8192, 64 heads, 8 KV heads of 128, FFN 28672; Mixtral hidden 4096,
// 32 heads, 8 KV heads, 8 experts top-2 of FFN 14336).
#include "core/gemm_shapes.h"

#include <QTest>

using namespace paralens;

namespace {

bool has(const std::vector<GemmShape>& v, const char* label, long long m, long long n, long long k)
{
    for (const auto& s : v)
        if (s.label == label)
            return s.m == m && s.n == n && s.k == k;
    return false;
}

} // namespace

class TestGemmShapes : public QObject
{
    Q_OBJECT
private slots:
    void llama70bTp8()
    {
        Scenario s;
        s.model.layers = 80;
        s.model.hidden = 8192;
        s.model.heads = 64;
        s.model.kv_heads = 8;
        s.model.ffn_hidden = 28672;
        s.model.gated_mlp = true;
        s.parallel.tp = 8;
        s.training.micro_batch = 1;
        s.training.seq_len = 8192;
        const auto v = layerGemmShapes(s);
        QCOMPARE(v.size(), size_t(4));
        QVERIFY(has(v, "qkv", 8192, (64 + 16) * 128 / 8, 8192)); // 1280
        QVERIFY(has(v, "attn_out", 8192, 8192, 64 * 128 / 8));   // k = 1024
        QVERIFY(has(v, "mlp_up", 8192, 2 * 28672 / 8, 8192));    // gate + up: 7168
        QVERIFY(has(v, "mlp_down", 8192, 8192, 28672 / 8));      // k = 3584
        // Context parallelism splits the tokens.
        s.parallel.cp = 2;
        QVERIFY(has(layerGemmShapes(s), "qkv", 4096, 1280, 8192));
    }
    void mixtralExperts()
    {
        Scenario s;
        s.model.layers = 32;
        s.model.hidden = 4096;
        s.model.heads = 32;
        s.model.kv_heads = 8;
        s.model.moe.experts = 8;
        s.model.moe.top_k = 2;
        s.model.moe.expert_ffn_hidden = 14336;
        s.parallel.tp = 1;
        s.parallel.ep = 4;
        s.training.micro_batch = 1;
        s.training.seq_len = 4096;
        const auto v = layerGemmShapes(s);
        // Every layer is MoE: no dense MLP.
        QVERIFY(!has(v, "mlp_up", 0, 0, 0));
        QCOMPARE(v.size(), size_t(4));
        // 4096 tokens · top-2 · EP 4 ranks' tokens over 8 experts = 4096 per expert.
        QVERIFY(has(v, "expert_up", 4096, 2 * 14336, 4096));
        QVERIFY(has(v, "expert_down", 4096, 4096, 14336));
        QVERIFY(has(v, "qkv", 4096, (32 + 16) * 128, 4096));
    }
    void emptyModelGivesNothing() { QVERIFY(layerGemmShapes(Scenario{}).empty()); }
};

QTEST_APPLESS_MAIN(TestGemmShapes)
#include "test_gemm_shapes.moc"
