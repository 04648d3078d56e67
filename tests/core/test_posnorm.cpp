// SPDX-License-Identifier: GPL-3.0-or-later
// A model's positions (RoPE, learned, none) and norm (RMSNorm, LayerNorm): the element-wise
// traffic and kernel counts they imply, counted by hand from the per-op figures of
// docs/formulas.md §2.4; their JSON keys, the Hugging Face import and the launch round trips.
#include "core/constants.h"
#include "core/dims.h"
#include "core/error.h"
#include "core/hf_config.h"
#include "core/kernel_time.h"
#include "core/launch_config.h"
#include "core/launch_import.h"
#include "core/params.h"
#include "core/presets.h"
#include "core/scenario_io.h"
#include "core/spec_io.h"

#include "test_close.h"

#include <nlohmann/json.hpp>

#include <QTest>

using namespace paralens;

namespace {

// A GPT-style layer: h 4096, 32 heads of 128 (MHA: q = kv = 4096), GeLU MLP of 16384.
ModelSpec gptLayer(PositionEmbedding p, NormType n)
{
    ModelSpec m;
    m.name = "gpt";
    m.layers = 2;
    m.hidden = 4096;
    m.heads = 32;
    m.kv_heads = 32;
    m.ffn_hidden = 16384;
    m.vocab = 50304;
    m.gated_mlp = false;
    m.tied_embeddings = true;
    m.position_embedding = p;
    m.norm = n;
    return m;
}

// GEMMs at 1e15 FLOP/s, HBM at 1e12 B/s: one two-byte element per token costs 2·tokens/1e12 s.
KernelModel kernels()
{
    KernelModel k;
    k.peak_bf16 = k.peak_lin = 1e15;
    k.eff_bf16 = k.eff_lin = 1;
    k.attn_ratio = 1;
    k.half = 0;
    k.hbm = 1e12;
    return k;
}

TrainingSettings training(Framework f)
{
    TrainingSettings tr;
    tr.seq_len = 2048;
    tr.framework = f;
    tr.flash_attention = true;
    tr.dropout = false;
    return tr;
}

Dims dimsFor(const ModelSpec& m, const TrainingSettings& tr)
{
    ActivationShape a;
    a.seq = tr.seq_len;
    a.micro_batch = tr.micro_batch;
    a.flash_attention = tr.flash_attention;
    return dimsOf(m, a);
}

double forwardSeconds(const ModelSpec& m, const TrainingSettings& tr)
{
    ModelConstants kc;
    kc.kernel_launch_seconds = 0;
    return layerTimes(m, dimsFor(m, tr), kernels(), ParallelPlan{}, tr, kc, AttentionSetup{}, false)
        .f;
}

QString modelError(const std::string& text)
{
    try {
        modelFromJson(nlohmann::json::parse(text), "model");
    } catch (const InputError& e) {
        return QString::fromStdString(e.what());
    }
    return QString();
}

} // namespace

class TestPosNorm : public QObject
{
    Q_OBJECT

private slots:
    // Eager PyTorch (FSDP, no compile), per token and layer in two-byte elements, h = q = kv =
    // 4096, FFN 16384. RoPE + RMSNorm: two RMSNorms 2·18·h, residual adds 2·3·h, RoPE
    // 10·(q + kv), attention output copy 2·q, GeLU 2·FFN = 147456 + 24576 + 81920 + 8192 +
    // 32768 = 294912. Learned + LayerNorm: two native layer_norm kernels 2·2·h, the adds, no
    // RoPE, the copy, GeLU = 16384 + 24576 + 8192 + 32768 = 81920. The rest of the layer (GEMMs,
    // attention) is the same, so the forward differs by 2 bytes · tokens · (294912 − 81920).
    void eagerTrafficFollowsPositionsAndNorm()
    {
        constexpr double ropeRms = 2 * 18 * 4096. + 6 * 4096. + 10 * 8192. + 2 * 4096. + 2 * 16384.;
        constexpr double learnedLn = 2 * 2 * 4096. + 6 * 4096. + 2 * 4096. + 2 * 16384.;
        QCOMPARE(ropeRms, 294912.0);
        QCOMPARE(learnedLn, 81920.0);
        const TrainingSettings tr = training(Framework::FSDP);
        const ModelSpec a = gptLayer(PositionEmbedding::Rope, NormType::RmsNorm);
        const ModelSpec b = gptLayer(PositionEmbedding::Learned, NormType::LayerNorm);
        const double tokens = dimsFor(a, tr).tokens;
        QVERIFY_CLOSE(forwardSeconds(a, tr) - forwardSeconds(b, tr),
                      2 * tokens * (ropeRms - learnedLn) / 1e12, 1e-9);
        // Each part alone: RoPE is 10·(q + kv) = 81920 elements, an RMSNorm 16 more than a
        // LayerNorm per h (2·16·h = 131072 for the layer's two).
        const ModelSpec c = gptLayer(PositionEmbedding::None, NormType::RmsNorm);
        QVERIFY_CLOSE(forwardSeconds(a, tr) - forwardSeconds(c, tr), 2 * tokens * 81920 / 1e12,
                      1e-9);
        const ModelSpec e = gptLayer(PositionEmbedding::None, NormType::LayerNorm);
        QVERIFY_CLOSE(forwardSeconds(c, tr) - forwardSeconds(e, tr), 2 * tokens * 131072 / 1e12,
                      1e-9);
        // No positions and learned positions cost the layers the same.
        QVERIFY_CLOSE(forwardSeconds(b, tr), forwardSeconds(e, tr), 1e-12);
    }

    // Megatron's fused kernels: the norms stream r2 w2 whichever they are (Apex / TE), and RoPE
    // reads and writes q and k once: 2·(q + kv) = 16384 elements, only with RoPE.
    void fusedTrafficChargesRopeOnly()
    {
        const TrainingSettings tr = training(Framework::Megatron);
        const ModelSpec a = gptLayer(PositionEmbedding::Rope, NormType::RmsNorm);
        const ModelSpec b = gptLayer(PositionEmbedding::Learned, NormType::LayerNorm);
        const ModelSpec c = gptLayer(PositionEmbedding::Rope, NormType::LayerNorm);
        const double tokens = dimsFor(a, tr).tokens;
        QVERIFY_CLOSE(forwardSeconds(a, tr) - forwardSeconds(b, tr), 2 * tokens * 16384 / 1e12,
                      1e-9);
        QVERIFY_CLOSE(forwardSeconds(a, tr), forwardSeconds(c, tr), 1e-12);
    }

    // Kernels per layer forward. Eager (torchtitan-style) learned + LayerNorm: q, k, v, o and
    // the two MLP GEMMs (6), SDPA (1), two layer_norm (2), two adds (2), no RoPE, the copy (1),
    // GeLU (1) = 13; RoPE + RMSNorm adds 2·5 norm ops and 2·3 RoPE ops = 29. Megatron: QKV, o,
    // fc1, fc2 (4), flash (1), norms, adds, activation (5) = 10, and RoPE's one kernel = 11.
    void kernelCountsFollowPositionsAndNorm()
    {
        const ModelSpec a = gptLayer(PositionEmbedding::Rope, NormType::RmsNorm);
        const ModelSpec b = gptLayer(PositionEmbedding::Learned, NormType::LayerNorm);
        const ParallelPlan pl;
        QCOMPARE(forwardKernelsPerLayer(b, pl, training(Framework::FSDP), false), 13.0);
        QCOMPARE(forwardKernelsPerLayer(a, pl, training(Framework::FSDP), false), 29.0);
        QCOMPARE(forwardKernelsPerLayer(b, pl, training(Framework::Megatron), false), 10.0);
        QCOMPARE(forwardKernelsPerLayer(a, pl, training(Framework::Megatron), false), 11.0);
    }

    // LayerNorm holds a weight and a bias (2h), RMSNorm a weight (h); two per layer and the
    // final norm. The linear biases stay with the MLP type.
    void normParametersFollowTheNorm()
    {
        const ModelSpec ln = gptLayer(PositionEmbedding::Learned, NormType::LayerNorm);
        const ModelSpec rms = gptLayer(PositionEmbedding::Learned, NormType::RmsNorm);
        QCOMPARE(denseLayerParams(ln).norms, 4 * 4096.0);
        QCOMPARE(denseLayerParams(rms).norms, 2 * 4096.0);
        QCOMPARE(totalParameters(ln) - totalParameters(rms), (2 * 2 + 1) * 4096.0);
        QCOMPARE(denseLayerParams(ln).attention, denseLayerParams(rms).attention);
    }

    void jsonDefaultsFollowGatedMlp()
    {
        const std::string shape =
            R"("layers": 2, "hidden": 64, "heads": 4, "ffn_hidden": 256, "vocab": 100)";
        const ModelSpec gated = modelFromJson(nlohmann::json::parse("{" + shape + "}"), "model");
        QVERIFY(gated.position_embedding == PositionEmbedding::Rope);
        QVERIFY(gated.norm == NormType::RmsNorm);
        const ModelSpec plain =
            modelFromJson(nlohmann::json::parse("{" + shape + R"(, "gated_mlp": false})"), "model");
        QVERIFY(plain.position_embedding == PositionEmbedding::Learned);
        QVERIFY(plain.norm == NormType::LayerNorm);
        // The convention is not written back; the keys are only when they differ from it.
        QVERIFY(!modelToJson(gated).contains("position_embedding"));
        QVERIFY(!modelToJson(plain).contains("norm"));
        const ModelSpec neox = modelFromJson(
            nlohmann::json::parse("{" + shape +
                                  R"(, "gated_mlp": false, "position_embedding": "rope"})"),
            "model");
        QVERIFY(neox.position_embedding == PositionEmbedding::Rope);
        QVERIFY(neox.norm == NormType::LayerNorm);
        const nlohmann::json j = modelToJson(neox);
        QCOMPARE(QString::fromStdString(j.at("position_embedding").get<std::string>()), "rope");
        QVERIFY(!j.contains("norm"));
        QVERIFY(modelFromJson(j, "model") == neox);
        ModelSpec alibi = neox;
        alibi.position_embedding = PositionEmbedding::None;
        alibi.gated_mlp = true;
        alibi.norm = NormType::LayerNorm;
        const nlohmann::json k = modelToJson(alibi);
        QCOMPARE(QString::fromStdString(k.at("position_embedding").get<std::string>()), "none");
        QCOMPARE(QString::fromStdString(k.at("norm").get<std::string>()), "layernorm");
        QVERIFY(modelFromJson(k, "model") == alibi);
        QVERIFY(!(alibi == neox));
    }

    void jsonRejectsUnknownValues()
    {
        const std::string shape =
            R"("layers": 2, "hidden": 64, "heads": 4, "ffn_hidden": 256, "vocab": 100)";
        const QString pe = modelError("{" + shape + R"(, "position_embedding": "alibi"})");
        QVERIFY2(pe.contains("model.position_embedding") && pe.contains("rope, learned, none"),
                 qPrintable(pe));
        const QString nm = modelError("{" + shape + R"(, "norm": "batchnorm"})");
        QVERIFY2(nm.contains("model.norm") && nm.contains("rmsnorm, layernorm"), qPrintable(nm));
        QVERIFY(!modelError("{" + shape + R"(, "norm": 3})").isEmpty());
    }

    void presetsNameTheirPositionsAndNorm()
    {
        const PresetLibrary& p = PresetLibrary::builtin();
        const ModelSpec* gpt3 = p.model("gpt3-175b");
        QVERIFY(gpt3);
        QVERIFY(gpt3->position_embedding == PositionEmbedding::Learned);
        QVERIFY(gpt3->norm == NormType::LayerNorm);
        for (const char* id : {"llama3-8b", "llama2-70b", "mixtral-8x7b", "deepseek-v3"}) {
            const ModelSpec* m = p.model(id);
            QVERIFY2(m, id);
            QVERIFY2(m->position_embedding == PositionEmbedding::Rope, id);
            QVERIFY2(m->norm == NormType::RmsNorm, id);
        }
    }

    // GPT-NeoX-20B (Black et al. 2022, §2.1: rotary embeddings on 25 % of each head, LayerNorm):
    // a plain MLP with RoPE, so the preset writes position_embedding and not norm.
    void hfGptNeoxIsRopeWithLayerNorm()
    {
        const HfImport neox =
            importHfConfigFile(PARALENS_SOURCE_DIR "/tests/data/hf/gpt-neox-20b.json");
        QVERIFY(neox.model.position_embedding == PositionEmbedding::Rope);
        QVERIFY(neox.model.norm == NormType::LayerNorm);
        bool noted = false;
        for (const auto& n : neox.notes)
            noted = noted || n.find("rotary_pct 0.25") != std::string::npos;
        QVERIFY(noted);
        const auto preset = hfPresetJson(neox, "gpt-neox-20b", "gpt-neox-20b.json");
        QCOMPARE(QString::fromStdString(preset.at("position_embedding").get<std::string>()),
                 "rope");
        QVERIFY(!preset.contains("norm"));
        const HfImport llama =
            importHfConfigFile(PARALENS_SOURCE_DIR "/tests/data/hf/llama-3.1-8b.json");
        QVERIFY(llama.model.position_embedding == PositionEmbedding::Rope);
        QVERIFY(llama.model.norm == NormType::RmsNorm);
    }

    // Each Megatron-family writer names the positions and norm; its importer reads them back.
    void launchFilesRoundTripPositionsAndNorm()
    {
        for (const auto& pn : {std::pair{PositionEmbedding::Learned, NormType::LayerNorm},
                               std::pair{PositionEmbedding::None, NormType::LayerNorm},
                               std::pair{PositionEmbedding::Rope, NormType::LayerNorm},
                               std::pair{PositionEmbedding::Rope, NormType::RmsNorm}}) {
            Scenario s = defaultScenario();
            s.model_id.clear();
            s.model = gptLayer(pn.first, pn.second);
            s.gpus = 8;
            s.parallel = ParallelPlan{};
            s.parallel.dp = 8;
            s.training = training(Framework::Megatron);
            s.training.global_batch = 64;
            for (const auto f : {LaunchFramework::Megatron, LaunchFramework::MegatronBridge,
                                 LaunchFramework::DeepSpeed}) {
                Scenario t = s;
                if (f == LaunchFramework::DeepSpeed)
                    t.training.framework = Framework::DeepSpeed;
                const LaunchConfig c = launchConfig(t, f);
                const std::string name = std::string(toString(f)) + " " +
                                         std::string(toString(pn.first)) + " " +
                                         std::string(toString(pn.second));
                if (f == LaunchFramework::Megatron) {
                    const std::string& text = c.files.front().text;
                    QVERIFY2((text.find("--normalization") != std::string::npos) ==
                                 (pn.second == NormType::RmsNorm),
                             name.c_str());
                    QVERIFY2((text.find("--position-embedding-type none") != std::string::npos) ==
                                 (pn.first == PositionEmbedding::None),
                             name.c_str());
                }
                // The launch script (DeepSpeed's first file is its JSON, which the script names).
                const LaunchFile* script = &c.files.front();
                for (const auto& file : c.files)
                    if (file.name == "launch.sh")
                        script = &file;
                const LaunchImport in =
                    importLaunch(script->text, script->name, {}, PresetLibrary::builtin(),
                                 [&](const std::string& sibling) {
                                     for (const auto& file : c.files)
                                         if (file.name == sibling)
                                             return file.text;
                                     return std::string();
                                 });
                QVERIFY2(in.scenario.model.position_embedding == pn.first, name.c_str());
                QVERIFY2(in.scenario.model.norm == pn.second, name.c_str());
            }
        }
    }

    // torchtitan runs RoPE + RMSNorm only: another model is named in a warning.
    void torchtitanWarnsForOtherModels()
    {
        Scenario s = defaultScenario();
        s.training.framework = Framework::FSDP;
        auto has = [](const LaunchConfig& c) {
            for (const auto& w : c.warnings)
                if (w.id == "positions_norm_unsupported")
                    return true;
            return false;
        };
        QVERIFY(!has(launchConfig(s, LaunchFramework::Torchtitan)));
        s.model.norm = NormType::LayerNorm;
        QVERIFY(has(launchConfig(s, LaunchFramework::Torchtitan)));
        s.model.norm = NormType::RmsNorm;
        s.model.position_embedding = PositionEmbedding::Learned;
        QVERIFY(has(launchConfig(s, LaunchFramework::Torchtitan)));
    }
};

QTEST_APPLESS_MAIN(TestPosNorm)
#include "test_posnorm.moc"
