// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/flops.h"
#include "test_models.h"

#include <QTest>

#include <cmath>

using namespace paralens;
using namespace paralens::testmodels;

namespace {
// Oracles typed from the papers, independent of core/flops.cpp.
double narayananEq3(double B, double s, double l, double h, double V)
{
    return 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
}
double korthikantiEq7(double B, double s, double L, double h, double V)
{
    return 72 * B * L * s * h * h * (1 + s / (6 * h) + V / (12 * h * L));
}
bool close(double a, double b, double rel = 1e-12)
{
    return std::abs(a - b) <= rel * std::abs(b);
}
} // namespace

class TestFlops : public QObject
{
    Q_OBJECT
private slots:
    void narayananEq3IsHardwareFlopsWithFullRecompute_data()
    {
        QTest::addColumn<int>("layers");
        QTest::addColumn<int>("hidden");
        QTest::addColumn<int>("heads");
        QTest::addColumn<int>("batch");
        QTest::newRow("1.7B") << 24 << 2304 << 24 << 512;
        QTest::newRow("175B") << 96 << 12288 << 96 << 1536;
        QTest::newRow("1T") << 128 << 25600 << 160 << 3072;
    }
    void narayananEq3IsHardwareFlopsWithFullRecompute()
    {
        QFETCH(int, layers);
        QFETCH(int, hidden);
        QFETCH(int, heads);
        QFETCH(int, batch);
        const ModelSpec m = gpt(layers, hidden, heads);
        const double ours = hardwareFlopsPerStep(m, batch, 2048, Recompute::Full, 51200);
        QVERIFY(close(ours, narayananEq3(batch, 2048, layers, hidden, 51200)));
    }
    void narayanan1TFigure()
    {
        // docs/formulas.md §8: the 1T row has F = 5.139e19 FLOPs per iteration.
        const double f =
            hardwareFlopsPerStep(gpt(128, 25600, 160), 3072, 2048, Recompute::Full, 51200);
        QVERIFY(std::abs(f / 5.139e19 - 1) < 1e-3);
    }
    void korthikantiEq7IsModelFlops()
    {
        for (const ModelSpec& m : {gpt3_175b(), gpt(105, 20480, 128)}) {
            const double ours = modelFlopsPerStep(m, 1536, 2048);
            QVERIFY(close(ours, korthikantiEq7(1536, 2048, m.layers, double(m.hidden), 51200)));
            // Model FLOPs do not depend on recomputation; hardware FLOPs without recompute equal
            // them when the vocabulary needs no padding.
            QVERIFY(close(hardwareFlopsPerStep(m, 1536, 2048, Recompute::None, 51200), ours));
        }
    }
    void gpt3PerToken()
    {
        // docs/formulas.md §2.2 (derived): GPT-3 175B, Eq. 7 per token 1.0764e12 (s 2048).
        const double perToken = modelFlopsPerStep(gpt3_175b(), 1, 2048) / 2048;
        QVERIFY(std::abs(perToken / 1.0764e12 - 1) < 1e-3);
    }
    void generalisedToGqaGatedMoe()
    {
        // 6·T·(weights a token passes) + 12·T·s·q·L, by hand for Llama-3 8B, s 8192, B 1.
        const ModelSpec m = llama3_8b();
        const double s = 8192, T = s, h = 4096, q = 4096, kv = 1024, ffn = 14336, L = 32,
                     V = 128256;
        const double perLayer = h * (q + 2 * kv) + q * h + 3 * h * ffn;
        const double expected = 6 * T * (L * perLayer + h * V) + 12 * T * s * q * L;
        QVERIFY(close(modelFlopsPerStep(m, 1, s), expected));
        // MoE: k routed experts + router excluded from model FLOPs.
        const ModelSpec x = mixtral8x7b();
        const double perMoe = h * (q + 2 * kv) + q * h + 2 * 3 * h * ffn;
        const double mx = 6 * T * (L * perMoe + h * 32000) + 12 * T * s * q * L;
        QVERIFY(close(modelFlopsPerStep(x, 1, s), mx));
        // The router is in the hardware FLOPs (2·N·h·E per layer, 3 passes).
        const double hw = hardwareFlopsPerStep(x, 1, s, Recompute::None, 32000);
        QVERIFY(close(hw - mx, 3 * 2 * T * h * 8 * L));
    }
    void layerFlopsAreSumOfOps()
    {
        const LayerFlops f = denseLayerFlops(gpt3_175b(), 2048, 2048);
        const double N = 2048, h = 12288;
        QVERIFY(close(f.total(), 24 * N * h * h + 4 * N * 2048 * h)); // Korthikanti App. A
        QVERIFY(close(lmHeadFlops(gpt3_175b(), N, 51200), 2 * N * h * 51200));
    }
};

QTEST_APPLESS_MAIN(TestFlops)
#include "test_flops.moc"
