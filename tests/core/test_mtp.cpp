// SPDX-License-Identifier: GPL-3.0-or-later
// Multi-token-prediction modules (DeepSeek-AI 2024, "DeepSeek-V3 Technical Report",
// arXiv:2412.19437, §2.2 and Fig. 3; §4.2: depth D = 1): the module's weights against
// DeepSeek's published counts, its FLOPs against a hand count of its matrices, its place on the
// pipeline stage with the LM head, and model.mtp_layers through JSON, the Hugging Face import and
// the launch configurations.
#include "core/error.h"
#include "core/estimate.h"
#include "core/evaluate.h"
#include "core/flops.h"
#include "core/hf_config.h"
#include "core/launch_config.h"
#include "core/launch_import.h"
#include "core/params.h"
#include "core/pipeline_cost.h"
#include "core/presets.h"
#include "core/scenario_io.h"
#include "core/spec_io.h"

#include <nlohmann/json.hpp>

#include <QTest>

#include <cmath>

using namespace paralens;

namespace {

const ModelSpec& deepseekV3()
{
    return *PresetLibrary::builtin().model("deepseek-v3");
}

// DeepSeek-V3's config.json dims: h 7168, V 129280, 128 heads; MLA q rank 1536, kv rank 512,
// qk 128 + 64, v 128; 256 routed experts (top 8) and 1 shared of 2048, SwiGLU (3 matrices).
constexpr double kH = 7168, kV = 129280, kHeads = 128;
constexpr double kQRank = 1536, kKvRank = 512, kNope = 128, kRope = 64, kVDim = 128;
constexpr double kExperts = 256, kTopK = 8, kFe = 2048;

// One MoE block with MLA, by hand: W^DQ, W^UQ, W^DKV + W^KR, W^UK + W^UV, W^O, the two latent
// norms; 257 SwiGLU experts (routed + shared) and the router; the block's two RMSNorms.
double moeBlockParams()
{
    const double attention = kH * kQRank + kQRank * kHeads * (kNope + kRope) +
                             kH * (kKvRank + kRope) + kKvRank * kHeads * (kNope + kVDim) +
                             kHeads * kVDim * kH + kQRank + kKvRank;
    const double experts = (kExperts + 1) * 3 * kH * kFe;
    return attention + experts + kH * kExperts + 2 * kH;
}

Scenario dsv3(const char* parallel)
{
    const std::string text =
        std::string(R"({"model": "deepseek-v3", "hardware": "h100-sxm", "gpus": 256,
                         "parallel": )") +
        parallel + R"(, "training": {"seq_len": 4096, "micro_batch": 1, "global_batch": 512}})";
    return parseScenario(text, "dsv3");
}

struct Run
{
    Estimate est;
    PipelineTimeline timeline;
};

Run run(const Scenario& s)
{
    Run r;
    const ModelConstants k;
    evaluate(s, r.est, nullptr, k, &r.timeline);
    return r;
}

bool same(double a, double b)
{
    return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b));
}

} // namespace

class TestMtp : public QObject
{
    Q_OBJECT
private slots:
    // README_WEIGHTS.md of deepseek-ai/DeepSeek-V3: the MTP module has 11.5 B unique parameters
    // besides the shared embedding and output head; README.md: 685 B on Hugging Face = 671 B
    // main model + 14 B MTP weights (which hold their own copies of the embedding and head).
    void deepseekV3ModuleParameters()
    {
        const ModelSpec& m = deepseekV3();
        QCOMPARE(m.mtp_layers, 1);
        QVERIFY(m.mtpIsMoe());
        // Block + M_k (h × 2h) + three RMSNorms (hidden state, embedding, output).
        const double byHand = moeBlockParams() + 2 * kH * kH + 3 * kH;
        QVERIFY2(same(mtpParameters(m), byHand), qPrintable(QString::number(mtpParameters(m))));
        QVERIFY(std::fabs(byHand / 11.5e9 - 1) < 0.015);
        // With the module's embedding and head copies: 13.5 B, "14 B"; 685 B in all.
        const double withCopies = byHand + 2 * kV * kH;
        QVERIFY(std::fabs(withCopies / 14e9 - 1) < 0.05);
        QVERIFY(std::fabs((totalParameters(m) + withCopies) / 685e9 - 1) < 0.002);
        // The main model's count stays the model card's 671 B.
        QVERIFY(std::fabs(totalParameters(m) / 671e9 - 1) < 0.005);
        ModelSpec two = m;
        two.mtp_layers = 2;
        QVERIFY(same(mtpParameters(two), 2 * byHand));
        two.mtp_layers = 0;
        QCOMPARE(mtpParameters(two), 0.0);
    }

    // Per token, forward: the block (MLA projections, attention core over s, output
    // projection, 8 routed + 1 shared SwiGLU expert; the router is left out of model FLOPs),
    // M_k 2·2h·h and the head 2·h·V; model FLOPs are 3× forward (Megatron-LM's convention,
    // which counts MTP).
    void flopsPerTokenDifferByTheModule()
    {
        ModelSpec with = deepseekV3();
        ModelSpec without = with;
        without.mtp_layers = 0;
        const double s = 4096, B = 2, T = B * s;
        const double q = kHeads * (kNope + kRope), o = kHeads * kVDim;
        const double projections = kQRank * (kH + q) + kH * (kKvRank + kRope) +
                                   kKvRank * kHeads * (kNope + kVDim) + o * kH;
        const double block = 2 * projections + 2 * s * (q + o) + 2 * 3 * kH * kFe * (kTopK + 1);
        const double module = block + 2 * 2 * kH * kH + 2 * kH * kV;
        const double diff = modelFlopsPerStep(with, B, s) - modelFlopsPerStep(without, B, s);
        QVERIFY2(same(diff, 3 * T * module), qPrintable(QString::number(diff / (3 * T * module))));
        with.mtp_layers = 3;
        QVERIFY(same(modelFlopsPerStep(with, B, s) - modelFlopsPerStep(without, B, s),
                     3 * 3 * T * module));
        // Hardware FLOPs add the router (2·h·E) and the padded vocabulary; full recompute one
        // more forward of the block.
        with.mtp_layers = 1;
        const double hw = hardwareFlopsPerStep(with, B, s, Recompute::Full, 129280) -
                          hardwareFlopsPerStep(without, B, s, Recompute::Full, 129280);
        const double blockHw = block + 2 * kH * kExperts;
        QVERIFY(same(hw, T * (3 * (blockHw + 2 * 2 * kH * kH + 2 * kH * kV) + blockHw)));
    }

    // The module runs after the last layer on the stage with the LM head: that stage's compute,
    // parameters and activations grow and no other stage's do; the step follows the heavier
    // stage. 1F1B: stage p − 1; DualPipeV: stage 0 (the V puts the last chunk there).
    void headStageCarriesTheModule_data()
    {
        QTest::addColumn<QString>("parallel");
        QTest::addColumn<int>("head");
        QTest::newRow("1f1b") << R"({"tp": 1, "pp": 4, "ep": 8, "zero": 1})" << 3;
        QTest::newRow("dualpipe-v")
            << R"({"tp": 1, "pp": 4, "ep": 8, "zero": 1, "schedule": "dualpipe-v",
                   "virtual_stages": 2})"
            << 0;
    }
    void headStageCarriesTheModule()
    {
        QFETCH(QString, parallel);
        QFETCH(int, head);
        const Scenario with = dsv3(parallel.toStdString().c_str());
        Scenario without = with;
        without.model.mtp_layers = 0;
        const Run a = run(with), b = run(without);
        QVERIFY(a.timeline.simulated && b.timeline.simulated);
        const auto& sa = a.timeline.result.stages;
        const auto& sb = b.timeline.result.stages;
        QCOMPARE(int(sa.size()), 4);
        // At least the block's forward and backward: compare with one MoE layer's worth, the
        // busy time of a stage of 15 MoE layers over 15.
        const double perLayer = sb[1].busy_seconds / 15;
        for (int r = 0; r < 4; ++r) {
            QCOMPARE(a.est.stages[std::size_t(r)].mtp_layers, r == head ? 1 : 0);
            if (r == head) {
                QVERIFY(sa[std::size_t(r)].busy_seconds >
                        sb[std::size_t(r)].busy_seconds + 0.9 * perLayer);
                QVERIFY(a.est.stages[std::size_t(r)].parameters >
                        b.est.stages[std::size_t(r)].parameters);
                QVERIFY(a.est.stages[std::size_t(r)].activations >
                        b.est.stages[std::size_t(r)].activations);
            } else {
                QVERIFY(same(sa[std::size_t(r)].busy_seconds, sb[std::size_t(r)].busy_seconds));
                QVERIFY(same(a.est.stages[std::size_t(r)].parameters,
                             b.est.stages[std::size_t(r)].parameters));
                QVERIFY(same(a.est.stages[std::size_t(r)].activations,
                             b.est.stages[std::size_t(r)].activations));
            }
        }
        QVERIFY(a.est.time.step_seconds > b.est.time.step_seconds);
        QVERIFY(a.est.throughput.tokens_per_second < b.est.throughput.tokens_per_second);
    }

    // Parameters on the head stage (1F1B, pp 4, ep 8, no TP, BF16 weights in Megatron's
    // layout): the block's dense part + M_k + norms whole, its routed experts / 8, and a copy of
    // the word embedding (the stage has the untied head, not the embedding), 2 bytes each.
    void headStageParametersByHand()
    {
        const Scenario with = dsv3(R"({"tp": 1, "pp": 4, "ep": 8, "zero": 1})");
        Scenario without = with;
        without.model.mtp_layers = 0;
        const Run a = run(with), b = run(without);
        const double routed = kExperts * 3 * kH * kFe;
        const double mine = moeBlockParams() - routed + routed / 8 + 2 * kH * kH + 3 * kH;
        const double vpad = std::ceil(kV / 128) * 128;
        const double added = a.est.stages[3].parameters - b.est.stages[3].parameters;
        QVERIFY2(same(added, 2 * (mine + vpad * kH)), qPrintable(QString::number(added)));
    }

    void jsonRoundTripsAndBounds()
    {
        ModelSpec m = deepseekV3();
        m.mtp_layers = 2;
        const nlohmann::json j = modelToJson(m);
        QCOMPARE(j.at("mtp_layers").get<int>(), 2);
        QVERIFY(modelFromJson(j, "model") == m);
        m.mtp_layers = 0;
        QVERIFY(!modelToJson(m).contains("mtp_layers"));
        QVERIFY(!(modelFromJson(j, "model") == m));

        Scenario s = dsv3(R"({"tp": 1, "pp": 4, "ep": 8})");
        s.model_id.clear();
        s.model.mtp_layers = 3;
        const Scenario back = parseScenario(scenarioToText(s), "back");
        QCOMPARE(back.model.mtp_layers, 3);
        QVERIFY(back == s);

        for (const char* bad : {"-1", "1.5", "\"one\"", "100001"}) {
            nlohmann::json k = modelToJson(deepseekV3());
            k["mtp_layers"] = nlohmann::json::parse(bad);
            try {
                modelFromJson(k, "model");
                QFAIL(bad);
            } catch (const InputError& e) {
                QVERIFY2(std::string(e.what()).find("mtp_layers") != std::string::npos, e.what());
            }
        }
        nlohmann::json typo = modelToJson(deepseekV3());
        typo["mtp_layer"] = 1;
        QVERIFY_THROWS_EXCEPTION(InputError, modelFromJson(typo, "model"));
    }

    // config.json's num_nextn_predict_layers is the module count; the preset written carries it.
    void hfImportReadsNextnLayers()
    {
        nlohmann::json c = nlohmann::json::parse(R"({
            "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
            "num_hidden_layers": 4, "hidden_size": 1024, "num_attention_heads": 8,
            "num_key_value_heads": 8, "intermediate_size": 2048, "vocab_size": 32000,
            "moe_intermediate_size": 512, "n_routed_experts": 16, "num_experts_per_tok": 2,
            "n_shared_experts": 1, "first_k_dense_replace": 1, "moe_layer_freq": 1,
            "q_lora_rank": 256, "kv_lora_rank": 128, "qk_nope_head_dim": 64,
            "qk_rope_head_dim": 32, "v_head_dim": 64, "tie_word_embeddings": false,
            "num_nextn_predict_layers": 2})");
        const HfImport imp = importHfConfig(c.dump(), "config.json");
        QCOMPARE(imp.model.mtp_layers, 2);
        QVERIFY(imp.sources.count("mtp_layers"));
        for (const auto& n : imp.notes)
            QVERIFY2(n.find("num_nextn_predict_layers") == std::string::npos, n.c_str());
        c["num_nextn_predict_layers"] = 0;
        QCOMPARE(importHfConfig(c.dump(), "config.json").model.mtp_layers, 0);
        c["num_nextn_predict_layers"] = -1;
        QVERIFY_THROWS_EXCEPTION(InputError, importHfConfig(c.dump(), "config.json"));
    }

    // Megatron-LM --mtp-num-layers and Megatron-Bridge model.mtp_num_layers carry the count
    // both ways; torchtitan and DeepSpeed have no MTP and say so.
    void launchConfigsCarryTheCount()
    {
        Scenario s = dsv3(R"({"tp": 1, "pp": 4, "ep": 8, "zero": 1})");
        for (LaunchFramework f : {LaunchFramework::Megatron, LaunchFramework::MegatronBridge}) {
            const LaunchConfig cfg = launchConfig(s, f);
            const std::string& text = cfg.files.front().text;
            QVERIFY(text.find(f == LaunchFramework::Megatron
                                  ? "--mtp-num-layers 1"
                                  : "model.mtp_num_layers=1") != std::string::npos);
            for (const auto& w : cfg.warnings)
                QVERIFY(w.id != "mtp_unsupported");
            const LaunchImport in = importLaunch(text, cfg.files.front().name);
            QCOMPARE(in.scenario.model_id, std::string("deepseek-v3"));
            QCOMPARE(in.scenario.model.mtp_layers, 1);
        }
        // A custom model with two modules and no preset of its shape.
        Scenario custom = s;
        custom.model_id.clear();
        custom.model.name = "two-mtp";
        custom.model.mtp_layers = 2;
        for (LaunchFramework f : {LaunchFramework::Megatron, LaunchFramework::MegatronBridge}) {
            const LaunchConfig cfg = launchConfig(custom, f);
            const LaunchImport in = importLaunch(cfg.files.front().text, cfg.files.front().name);
            QVERIFY(in.scenario.model_id.empty());
            QCOMPARE(in.scenario.model.mtp_layers, 2);
        }
        // Without MTP nothing is written.
        Scenario none = custom;
        none.model.mtp_layers = 0;
        QVERIFY(launchConfig(none, LaunchFramework::Megatron)
                    .files.front()
                    .text.find("--mtp-num-layers") == std::string::npos);
        for (LaunchFramework f : {LaunchFramework::Torchtitan, LaunchFramework::DeepSpeed}) {
            bool warned = false;
            for (const auto& w : launchConfig(s, f).warnings)
                warned = warned || w.id == "mtp_unsupported";
            QVERIFY2(warned, std::string(toString(f)).c_str());
            for (const auto& w : launchConfig(none, f).warnings)
                QVERIFY(w.id != "mtp_unsupported");
        }
    }
};

QTEST_APPLESS_MAIN(TestMtp)
#include "test_mtp.moc"
