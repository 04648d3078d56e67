// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/memory.h"
#include "test_models.h"

#include <QTest>

#include <cmath>

using namespace paralens;
using namespace paralens::testmodels;

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
};

QTEST_APPLESS_MAIN(TestMemory)
#include "test_memory.moc"
