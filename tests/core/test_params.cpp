// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/params.h"
#include "test_models.h"

#include <QTest>

#include <array>
#include <cmath>

using namespace paralens;
using namespace paralens::testmodels;

class TestParams : public QObject
{
    Q_OBJECT
private slots:
    void llama3Counts_data()
    {
        QTest::addColumn<int>("which");
        QTest::addColumn<double>("expected");
        // docs/formulas.md §1 worked totals (Llama 3 Table 3 shapes, V = 128,256).
        QTest::newRow("8B") << 0 << 8030261248.0;
        QTest::newRow("70B") << 1 << 70553706496.0;
        QTest::newRow("405B") << 2 << 405853388800.0;
    }
    void llama3Counts()
    {
        QFETCH(int, which);
        QFETCH(double, expected);
        const ModelSpec m = which == 0 ? llama3_8b() : which == 1 ? llama3_70b() : llama3_405b();
        QCOMPARE(totalParameters(m), expected);
    }

    // Narayanan Eq. 2: P = 12lh²(1 + 13/(12h) + (V + s)/(12lh)). Eq. 2 counts learned
    // positions (s·h) and no final LayerNorm (2h); ours the reverse, so adjust by those terms.
    void narayananEq2_data()
    {
        QTest::addColumn<int>("layers");
        QTest::addColumn<int>("hidden");
        QTest::addColumn<int>("heads");
        QTest::addColumn<double>("billions"); // Table 1 params column
        QTest::newRow("1.7B") << 24 << 2304 << 24 << 1.7;
        QTest::newRow("18.4B") << 40 << 6144 << 48 << 18.4;
        QTest::newRow("175B") << 96 << 12288 << 96 << 174.6;
        QTest::newRow("530B") << 105 << 20480 << 128 << 529.6;
        QTest::newRow("1T") << 128 << 25600 << 160 << 1008.0;
    }
    void narayananEq2()
    {
        QFETCH(int, layers);
        QFETCH(int, hidden);
        QFETCH(int, heads);
        QFETCH(double, billions);
        const double l = layers, h = hidden, V = 51200, s = 2048;
        const double eq2 = 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h));
        const double ours = totalParameters(gpt(layers, hidden, heads));
        QCOMPARE(ours + s * h - 2 * h, eq2);
        QVERIFY(std::abs(eq2 / 1e9 - billions) <= 0.051); // the column is Eq. 2, rounded
    }

    void paddedVocab_()
    {
        QCOMPARE(paddedVocab(128256, 1), std::int64_t(128256)); // 1002 · 128
        QCOMPARE(paddedVocab(128256, 8), std::int64_t(129024)); // ceil(125.25) · 1024
        QCOMPARE(paddedVocab(50257, 1), std::int64_t(50304));
        QCOMPARE(paddedVocab(51200, 8), std::int64_t(51200));
    }

    void moeCounts()
    {
        const ModelSpec m = mixtral8x7b();
        // Mixtral 8x7B is published as 46.7B total, 12.9B active (model card).
        QVERIFY(std::abs(totalParameters(m) / 1e9 - 46.7) < 0.1);
        QVERIFY(std::abs(activeParameters(m) / 1e9 - 12.9) < 0.1);
        ModelSpec ds = m;
        ds.layers = 61;
        ds.moe.first_dense_layers = 3;
        QCOMPARE(moeLayersIn(ds, 0, 61), 58);
        QCOMPARE(moeLayersIn(ds, 0, 3), 0);
        ds.moe.layer_frequency = 2; // layers 3, 5, ..., 59
        QCOMPARE(moeLayersIn(ds, 0, 61), 29);
        QCOMPARE(moeLayersIn(ds, 4, 6), 1);
    }

    void llama405bOnPp16IsUneven()
    {
        const ModelSpec m = llama3_405b();
        ParallelPlan plan;
        plan.pp = 16;
        std::array<StageLayers, 16> st{};
        QVERIFY(splitLayers(m, plan, LayerSplit::ShortEnds, st));
        int sum = 0;
        for (int r = 0; r < 16; ++r) {
            sum += st[r].layers;
            QCOMPARE(st[r].layers, (r == 0 || r == 15) ? 7 : 8); // Llama 3 §3.3.2
        }
        QCOMPARE(sum, 126);
        QVERIFY(st[0].first && st[15].last && !st[7].first && !st[7].last);
        QVERIFY(splitLayers(m, plan, LayerSplit::ExtraFirst, st));
        QCOMPARE(st[0].layers, 8);
        QCOMPARE(st[15].layers, 7);
    }

    void explicitAndInterleavedSplit()
    {
        ModelSpec m = llama3_8b();
        ParallelPlan plan;
        plan.pp = 4;
        plan.first_stage_layers = 5;
        plan.last_stage_layers = 6;
        std::array<StageLayers, 4> st{};
        QVERIFY(splitLayers(m, plan, LayerSplit::ShortEnds, st));
        QCOMPARE(st[0].layers, 5);
        QCOMPARE(st[1].layers, 11); // 21 over two middle stages
        QCOMPARE(st[2].layers, 10);
        QCOMPARE(st[3].layers, 6);
        plan = ParallelPlan{};
        plan.pp = 4;
        plan.virtual_stages = 2;
        QVERIFY(splitLayers(m, plan, LayerSplit::ShortEnds, st));
        for (const auto& s : st)
            QCOMPARE(s.layers, 8);
    }

    void moreTpNeverRaisesParameters()
    {
        for (const ModelSpec& m : {llama3_70b(), mixtral8x7b(), gpt3_175b()}) {
            double last = 1e300;
            for (int t : {1, 2, 4, 8}) {
                ParallelPlan plan;
                plan.tp = t;
                plan.pp = 4;
                std::array<StageLayers, 4> st{};
                QVERIFY(splitLayers(m, plan, LayerSplit::ShortEnds, st));
                double peak = 0;
                for (const auto& s : st)
                    peak = std::max(peak, stageParameters(m, plan, s).total());
                QVERIFY(peak <= last);
                last = peak;
            }
        }
    }

    void stagesSumToModel()
    {
        // Untied, p = 1: one GPU holds everything (with the padded vocabulary).
        const ModelSpec m = llama3_8b();
        ParallelPlan plan;
        std::array<StageLayers, 1> st{};
        QVERIFY(splitLayers(m, plan, LayerSplit::ShortEnds, st));
        QCOMPARE(stageParameters(m, plan, st[0]).total(), totalParameters(m));
        // p = 4, t = 1: stages add up to the whole model.
        plan.pp = 4;
        std::array<StageLayers, 4> s4{};
        QVERIFY(splitLayers(m, plan, LayerSplit::ShortEnds, s4));
        double sum = 0;
        for (const auto& s : s4)
            sum += stageParameters(m, plan, s).total();
        QCOMPARE(sum, totalParameters(m));
    }

    // Under a V (ZB-V, DualPipeV) device r holds model chunks r and 2p − 1 − r (Qi et al. 2024;
    // dualpipev.py), so the short end chunks of an uneven split both land on device 0.
    void vShapeSplit()
    {
        ModelSpec m = llama3_8b();
        m.layers = 30; // 8 chunks: 30 = 8·3 + 6, two short chunks of 3 at the model's ends
        ParallelPlan plan;
        plan.pp = 4;
        plan.virtual_stages = 2;
        plan.schedule = Schedule::ZBV;
        std::array<StageLayers, 4> st{};
        QVERIFY(splitLayers(m, plan, LayerSplit::ShortEnds, st));
        QCOMPARE(st[0].layers, 3 + 3); // chunks 0 and 7
        for (int r = 1; r < 4; ++r)
            QCOMPARE(st[r].layers, 4 + 4);
        QVERIFY(st[0].first && st[0].last && !st[3].first && !st[3].last);
        // Looped interleaving: device 0 chunks 0 and 4 (3 + 4), device 3 chunks 3 and 7 (4 + 3).
        plan.schedule = Schedule::Interleaved1F1B;
        QVERIFY(splitLayers(m, plan, LayerSplit::ShortEnds, st));
        QCOMPARE(st[0].layers, 7);
        QCOMPARE(st[3].layers, 7);
        QVERIFY(st[0].first && !st[0].last && st[3].last);

        // Explicit sizes are per pipeline rank (Megatron's decoder_first/last_pipeline_num_layers),
        // each rank's split over its two chunks, the first chunk taking the odd layer. Rank 0: 7
        // (4 + 3), rank 3: 10 (5 + 5), ranks 1, 2: 15 = 8 + 7 (4 + 4, 4 + 3). In model order
        // under a V: rank 0's chunk 0, ranks 1, 2, 3 down, ranks 3, 2, 1 back, rank 0's chunk 1.
        m.layers = 32;
        plan.first_stage_layers = 7;
        plan.last_stage_layers = 10;
        std::array<int, 8> chunks{};
        plan.schedule = Schedule::ZBV;
        QVERIFY(splitChunks(m, plan, LayerSplit::ShortEnds, chunks));
        QCOMPARE(chunks, (std::array<int, 8>{4, 4, 4, 5, 5, 3, 4, 3}));
        QVERIFY(splitLayers(m, plan, LayerSplit::ShortEnds, st));
        QCOMPARE(st[0].layers, 7);
        QCOMPARE(st[1].layers, 8);
        QCOMPARE(st[2].layers, 7);
        QCOMPARE(st[3].layers, 10);
        plan.schedule = Schedule::Interleaved1F1B; // looped: chunk j of rank r is j·4 + r
        QVERIFY(splitChunks(m, plan, LayerSplit::ShortEnds, chunks));
        QCOMPARE(chunks, (std::array<int, 8>{4, 4, 4, 5, 3, 4, 3, 5}));
    }
};

QTEST_APPLESS_MAIN(TestParams)
#include "test_params.moc"
