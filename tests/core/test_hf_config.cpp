// SPDX-License-Identifier: GPL-3.0-or-later
// Hugging Face config.json import: the parameter counts of the imported models against the
// totals their model cards and papers publish, the fields against the built-in presets of the
// same models, the notes on what was assumed, and named errors for hostile files. The fixtures
// in tests/data/hf/ are written from the models' published config.json values.
#include "core/error.h"
#include "core/hf_config.h"
#include "core/params.h"
#include "core/presets.h"
#include "core/spec_io.h"

#include <nlohmann/json.hpp>

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <fstream>

using namespace paralens;

namespace {

const QString kData = QStringLiteral(PARALENS_SOURCE_DIR "/tests/data/hf/");

HfImport load(const QString& name)
{
    return importHfConfigFile((kData + name).toStdString());
}

std::string fixtureText(const QString& name)
{
    QFile f(kData + name);
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot read fixture %s", qPrintable(name));
    return f.readAll().toStdString();
}

// The import error for `text`, or "" when it imports.
QString importError(const std::string& text)
{
    try {
        importHfConfig(text, "cfg.json");
    } catch (const InputError& e) {
        return QString::fromStdString(e.what());
    }
    return QString();
}

// A fixture with one key replaced (or removed when `value` is null).
std::string patched(const QString& name, const std::string& key, const nlohmann::json& value)
{
    nlohmann::json j = nlohmann::json::parse(fixtureText(name));
    if (value.is_null())
        j.erase(key);
    else
        j[key] = value;
    return j.dump();
}

bool hasNote(const HfImport& imp, const char* text)
{
    for (const auto& n : imp.notes)
        if (n.find(text) != std::string::npos)
            return true;
    return false;
}

// Where a card quotes two significant digits ("3.3B"), the digits themselves are the bound:
// the count must round or truncate to them.
bool withinQuotedDigits(double value, double quoted, double unit)
{
    return value >= quoted - unit / 2 && value < quoted + unit;
}

} // namespace

class TestHfConfig : public QObject
{
    Q_OBJECT
private slots:
    // Totals within 0.5 % of the published figure; MoE active counts too where the figure has
    // three digits. Sources: Llama 3.1 model card (8.03 B, 70.6 B); Mistral 7B card (7.24 B);
    // Mixtral 8x7B (46.7 B total, 12.9 B active, Mistral AI announcement); Qwen2.5-7B card
    // (7.61 B); Qwen3-30B-A3B card (30.5 B); DeepSeek-V3 README_WEIGHTS.md (671 B main model,
    // 36.6 B activated); Gemma 2 9B (9.24 B, Gemma 2 report Table 1); GPT-NeoX-20B paper
    // (Black et al. 2022, 20,554,567,680); DeepSeek-V2-Lite card (15.7 B).
    void publishedTotals_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<double>("total");
        QTest::addColumn<double>("active"); // 0: dense
        QTest::addColumn<double>("tolerance");
        QTest::newRow("llama-3.1-8b") << "llama-3.1-8b.json" << 8.03e9 << 0.0 << 0.005;
        QTest::newRow("llama-3.1-70b") << "llama-3.1-70b.json" << 70.6e9 << 0.0 << 0.005;
        QTest::newRow("mistral-7b") << "mistral-7b-v0.1.json" << 7.24e9 << 0.0 << 0.005;
        QTest::newRow("mixtral-8x7b") << "mixtral-8x7b-v0.1.json" << 46.7e9 << 12.9e9 << 0.005;
        QTest::newRow("qwen2.5-7b") << "qwen2.5-7b.json" << 7.61e9 << 0.0 << 0.005;
        QTest::newRow("qwen3-30b-a3b") << "qwen3-30b-a3b.json" << 30.5e9 << 0.0 << 0.005;
        QTest::newRow("gemma-2-9b") << "gemma-2-9b.json" << 9.24e9 << 0.0 << 0.005;
        QTest::newRow("gpt-neox-20b") << "gpt-neox-20b.json" << 20554567680.0 << 0.0 << 0.0;
        QTest::newRow("deepseek-v2-lite") << "deepseek-v2-lite.json" << 15.7e9 << 0.0 << 0.005;
    }
    void publishedTotals()
    {
        QFETCH(QString, file);
        QFETCH(double, total);
        QFETCH(double, active);
        QFETCH(double, tolerance);
        const ModelSpec m = load(file).model;
        const double n = totalParameters(m);
        if (tolerance == 0)
            QCOMPARE(static_cast<long long>(n), static_cast<long long>(total));
        QVERIFY2(std::fabs(n / total - 1) <= tolerance, qPrintable(QString::number(n, 'g', 6)));
        if (active > 0) {
            const double a = activeParameters(m);
            QVERIFY2(std::fabs(a / active - 1) <= tolerance,
                     qPrintable(QString::number(a, 'g', 6)));
        }
    }

    // DeepSeek-V3: the published 671 B is the main model without the 14 B multi-token-
    // prediction module (config.json num_nextn_predict_layers 1; DeepSeek's README_WEIGHTS.md:
    // 671 B main, 11.5 B unique MTP), which totalParameters() counts; the module is
    // ModelSpec::mtp_layers (test_mtp checks its count). Its 36.6 B activated
    // parameters count the output head but not the input embedding (a lookup): ours minus the
    // input embedding. The report's "37 B" is that figure rounded.
    void deepseekV3Counts()
    {
        const HfImport imp = load("deepseek-v3.json");
        const ModelSpec& m = imp.model;
        QVERIFY(std::fabs(totalParameters(m) / 671e9 - 1) <= 0.005);
        const double active = activeParameters(m) - double(m.vocab) * double(m.hidden);
        QVERIFY2(std::fabs(active / 36.6e9 - 1) <= 0.005, qPrintable(QString::number(active)));
        QVERIFY(withinQuotedDigits(active, 37e9, 1e9));
        QCOMPARE(m.mtp_layers, 1);
        QVERIFY(!hasNote(imp, "num_nextn_predict_layers"));
    }

    // Cards that quote two digits: Qwen3-30B-A3B "3.3B activated" (ours 3.35 B, the card
    // truncates), Phi-3-mini "3.8B" (Abdin et al. 2024), OLMo 2 7B "7.3B" (model card).
    void quotedDigits()
    {
        QVERIFY(
            withinQuotedDigits(activeParameters(load("qwen3-30b-a3b.json").model), 3.3e9, 0.1e9));
        QVERIFY(
            withinQuotedDigits(totalParameters(load("phi-3-mini-4k.json").model), 3.8e9, 0.1e9));
        QVERIFY(withinQuotedDigits(totalParameters(load("olmo-2-7b.json").model), 7.3e9, 0.1e9));
    }

    // The importer reads the same shapes the built-in presets transcribe from the papers.
    void matchesBuiltinPresets_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("preset");
        QTest::newRow("llama3-8b") << "llama-3.1-8b.json"
                                   << "llama3-8b";
        QTest::newRow("llama3-70b") << "llama-3.1-70b.json"
                                    << "llama3-70b";
        QTest::newRow("mixtral-8x7b") << "mixtral-8x7b-v0.1.json"
                                      << "mixtral-8x7b";
        QTest::newRow("deepseek-v3") << "deepseek-v3.json"
                                     << "deepseek-v3";
    }
    void matchesBuiltinPresets()
    {
        QFETCH(QString, file);
        QFETCH(QString, preset);
        ModelSpec imported = load(file).model;
        const ModelSpec* builtin = PresetLibrary::builtin().model(preset.toStdString());
        QVERIFY(builtin);
        imported.name = builtin->name;
        QVERIFY(imported == *builtin);
    }

    // Fields read by hand from the fixtures, for the families without a built-in preset.
    void familyFields()
    {
        const ModelSpec q = load("qwen3-30b-a3b.json").model;
        QCOMPARE(q.head_dim, 128); // 2048 / 32 would be 64
        QCOMPARE(q.kv_heads, 4);
        QCOMPARE(q.moe.experts, 128);
        QCOMPARE(q.moe.top_k, 8);
        QCOMPARE(q.moe.expert_ffn_hidden, 768);
        QCOMPARE(q.moe.first_dense_layers, 0);

        const HfImport g = load("gemma-2-9b.json");
        QCOMPARE(g.model.head_dim, 256);
        QVERIFY(g.model.tied_embeddings); // absent: the Gemma default
        QVERIFY(hasNote(g, "tie_word_embeddings absent: assumed true"));
        QVERIFY(g.model.gated_mlp);

        const HfImport g3 = load("gemma-3-27b.json");
        QCOMPARE(g3.model.layers, 62);
        QCOMPARE(g3.model.hidden, 5376);
        QCOMPARE(g3.model.head_dim, 128);
        QCOMPARE(g3.model.vocab, 262208);
        QVERIFY(hasNote(g3, "vocab_size absent: assumed 262208"));
        QVERIFY(hasNote(g3, "vision tower"));

        const HfImport neox = load("gpt-neox-20b.json");
        QVERIFY(!neox.model.gated_mlp);
        QCOMPARE(neox.model.kv_heads, 64);
        QVERIFY(hasNote(neox, "num_key_value_heads absent"));

        const ModelSpec lite = load("deepseek-v2-lite.json").model;
        QCOMPARE(lite.mla.q_lora_rank, 0); // null: queries straight from the hidden state
        QCOMPARE(lite.mla.kv_lora_rank, 512);
        QCOMPARE(lite.moe.shared_experts, 2);
        QCOMPARE(lite.moe.first_dense_layers, 1);
        QCOMPARE(lite.moe.groups, 0); // n_group 1 is no group limit
        QCOMPARE(lite.kv_heads, lite.heads);

        const ModelSpec phi = load("phi-3-mini-4k.json").model;
        QCOMPARE(phi.vocab, 32064);
        QVERIFY(!phi.tied_embeddings);
        QCOMPARE(load("olmo-2-7b.json").model.ffn_hidden, 11008);
    }

    // Layer frequency: Qwen's decoder_sparse_step 2 makes layers 1, 3, 5, ... sparse; DeepSeek's
    // moe_layer_freq 2 after first_k_dense_replace 1 makes layers 2, 4, ... sparse
    // (transformers' modeling files); the spec must mark exactly those.
    void layerFrequency()
    {
        const ModelSpec q =
            importHfConfig(patched("qwen3-30b-a3b.json", "decoder_sparse_step", 2), "q").model;
        for (int i = 0; i < q.layers; ++i)
            QCOMPARE(q.isMoeLayer(i), (i + 1) % 2 == 0);
        nlohmann::json d = nlohmann::json::parse(fixtureText("deepseek-v2-lite.json"));
        d["moe_layer_freq"] = 2;
        const ModelSpec ds = importHfConfig(d.dump(), "d").model;
        for (int i = 0; i < ds.layers; ++i)
            QCOMPARE(ds.isMoeLayer(i), i >= 1 && i % 2 == 0);
        const ModelSpec lead =
            importHfConfig(patched("qwen3-30b-a3b.json", "mlp_only_layers", {0, 1, 2}), "q").model;
        QCOMPARE(lead.moe.first_dense_layers, 3);
    }

    void notes()
    {
        const HfImport llama = load("llama-3.1-8b.json");
        QVERIFY(hasNote(llama, "not read"));
        QVERIFY(hasNote(llama, "rope_theta"));
        QVERIFY(!hasNote(llama, "hidden_size")); // read keys are not listed
        QVERIFY(hasNote(load("mistral-7b-v0.1.json"), "sliding-window attention (window 4096)"));
        QVERIFY(hasNote(load("qwen2.5-7b.json"), "q/k/v projection biases"));
        QVERIFY(!hasNote(load("qwen2.5-7b.json"), "sliding-window")); // use_sliding_window false
        QVERIFY(hasNote(load("qwen3-30b-a3b.json"), "q/k RMSNorm"));
    }

    // Qwen3's attention normalises q and k per head (transformers Qwen3Attention q_norm,
    // k_norm); Llama and Qwen2 do not.
    void qkNormFromTheArchitecture()
    {
        const HfImport qwen3 = load("qwen3-30b-a3b.json");
        QVERIFY(qwen3.model.qk_norm);
        QVERIFY(qwen3.sources.count("qk_norm") == 1);
        QVERIFY(!load("llama-3.1-8b.json").model.qk_norm);
        QVERIFY(!load("qwen2.5-7b.json").model.qk_norm);
    }

    // The preset written for an import loads back through the preset reader to the same spec.
    void presetRoundTrip_data()
    {
        QTest::addColumn<QString>("file");
        for (const char* f : {"llama-3.1-8b.json", "deepseek-v3.json", "qwen3-30b-a3b.json",
                              "gemma-3-27b.json", "gpt-neox-20b.json", "deepseek-v2-lite.json"})
            QTest::newRow(f) << f;
    }
    void presetRoundTrip()
    {
        QFETCH(QString, file);
        const HfImport imp = load(file);
        const std::string text = hfPresetJson(imp, "imported-model", "config.json").dump(2);
        PresetLibrary lib;
        lib.addText(text, "imported.json");
        const ModelSpec* m = lib.model("imported-model");
        QVERIFY(m);
        QVERIFY(*m == imp.model);
        QVERIFY(!lib.isBuiltin("imported-model"));
        QVERIFY(QString::fromStdString(lib.source("imported-model")).contains("config.json"));
    }

    void hostileInput_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("expected");
        const std::string llama = fixtureText("llama-3.1-8b.json");
        QTest::newRow("empty") << QByteArray() << "malformed JSON";
        QTest::newRow("truncated")
            << QByteArray::fromStdString(llama.substr(0, llama.size() / 2)) << "malformed JSON";
        QTest::newRow("binary") << QByteArray("\x7f\x45\x4c\x46\x02\x01\x00\xff", 8)
                                << "malformed JSON";
        QTest::newRow("array") << QByteArray("[1, 2]") << "expected a JSON object";
        QTest::newRow("overflow") << QByteArray("{\"hidden_size\": 1e400}") << "malformed JSON";
        QTest::newRow("unsupported")
            << QByteArray(R"({"architectures": ["FalconForCausalLM"], "model_type": "falcon"})")
            << "unsupported architecture 'FalconForCausalLM' (model_type 'falcon'); supported: "
               "LlamaForCausalLM (llama), MistralForCausalLM (mistral)";
        QTest::newRow("no architecture") << QByteArray(R"({"hidden_size": 4096})")
                                         << "unsupported architecture (no architectures or "
                                            "model_type); supported: LlamaForCausalLM";
        QTest::newRow("architectures string")
            << QByteArray(R"({"architectures": "LlamaForCausalLM"})")
            << "architectures: expected an array of class names, got a string";
        QTest::newRow("duplicate key")
            << QByteArray(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 4096,)"
                          R"( "hidden_size": 8192})")
            << "duplicate key 'hidden_size'";
        QTest::newRow("nested 100000 deep")
            << QByteArray::fromStdString("{\"architectures\": " + std::string(100000, '[') +
                                         std::string(100000, ']') + "}")
            << "architectures: expected class names (strings), got an array";
        QTest::newRow("NUL byte") << QByteArray("{\"architectures\": [\"LlamaForCausalLM\"]\0}", 40)
                                  << "malformed JSON";
        QTest::newRow("numbers as strings everywhere")
            << QByteArray(R"({"architectures": ["LlamaForCausalLM"], "num_hidden_layers": [32]})")
            << "num_hidden_layers: expected an integer, got an array";
        auto row = [&](const char* name, const char* key, const nlohmann::json& v,
                       const char* expected, const char* file = "llama-3.1-8b.json") {
            QTest::newRow(name) << QByteArray::fromStdString(patched(file, key, v)) << expected;
        };
        row("layers string", "num_hidden_layers", "32",
            "cfg.json: num_hidden_layers: expected an integer, got a string");
        row("layers negative", "num_hidden_layers", -4,
            "num_hidden_layers: -4 is below the minimum 1");
        row("layers fraction", "num_hidden_layers", 3.5,
            "num_hidden_layers: expected an integer, got 3.5");
        row("hidden absurd", "hidden_size", 1e12, "hidden_size: 1000000000000 exceeds the bound");
        row("vocab absurd", "vocab_size", std::uint64_t(1) << 63, "vocab_size: ");
        row("vocab missing", "vocab_size", nullptr, "vocab_size: required key missing");
        row("kv not dividing", "num_key_value_heads", 5,
            "num_key_value_heads 5 must divide num_attention_heads 32");
        row("tied wrong type", "tie_word_embeddings", "yes",
            "tie_word_embeddings: expected a boolean");
        row("top-k above experts", "num_experts_per_tok", 9, "exceeds the number of experts 8",
            "mixtral-8x7b-v0.1.json");
        row("dense layers not leading", "mlp_only_layers", {5},
            "mlp_only_layers must be the leading layers", "qwen3-30b-a3b.json");
        row("mlp_only_layers type", "mlp_only_layers", "all", "mlp_only_layers: expected an array",
            "qwen3-30b-a3b.json");
        row("kv rank zero", "kv_lora_rank", 0, "kv_lora_rank: 0 is below the minimum 1",
            "deepseek-v3.json");
        row("dense block too long", "first_k_dense_replace", 61, "first_k_dense_replace: 61",
            "deepseek-v3.json");
        row("no text_config", "text_config", nullptr, "text_config: required key missing",
            "gemma-3-27b.json");
        row("text_config number", "text_config", 5, "text_config: expected a JSON object",
            "gemma-3-27b.json");
    }
    void hostileInput()
    {
        QFETCH(QByteArray, text);
        QFETCH(QString, expected);
        const QString e = importError(text.toStdString());
        QVERIFY2(e.startsWith("cfg.json"), qPrintable(e));
        QVERIFY2(e.contains(expected), qPrintable(e));
    }

    void hugeAndMissingFiles()
    {
        QTemporaryDir dir;
        const std::string big = (dir.path() + "/config.json").toStdString();
        {
            std::ofstream f(big);
            f << std::string(kMaxHfConfigFileBytes + 1, ' ');
        }
        for (const std::string& path : {big, dir.path().toStdString(), big + ".missing"}) {
            try {
                importHfConfigFile(path);
                QFAIL("no error");
            } catch (const InputError& e) {
                QVERIFY(QString(e.what()).startsWith(QString::fromStdString(path)));
            }
        }
    }

    void sniffing()
    {
        QVERIFY(looksLikeHfConfig(fixtureText("llama-3.1-8b.json")));
        QVERIFY(looksLikeHfConfig(fixtureText("gemma-3-27b.json")));
        QVERIFY(!looksLikeHfConfig(R"({"model": "llama3-8b", "hardware": "h100-sxm"})"));
        QVERIFY(!looksLikeHfConfig(R"({"id": "x", "kind": "model", "model_type": "llama"})"));
        QVERIFY(!looksLikeHfConfig("{\"architectures\": ["));
        QVERIFY(!looksLikeHfConfig(std::string("\0\1\2", 3)));
    }

    void presetIds()
    {
        QCOMPARE(presetIdFrom("meta-llama/Llama-3.1-8B"), std::string("llama-3.1-8b"));
        QCOMPARE(presetIdFrom("--My Model!! v2"), std::string("my-model-v2"));
        QCOMPARE(presetIdFrom(".hidden"), std::string("hidden"));
        QCOMPARE(presetIdFrom("///"), std::string());
        QVERIFY(presetIdFrom(std::string(200, 'a')).size() <= 64);
    }

    void supportedList()
    {
        const std::string s = supportedHfArchitectures();
        for (const char* a :
             {"LlamaForCausalLM", "MistralForCausalLM", "MixtralForCausalLM", "Qwen2ForCausalLM",
              "Qwen3ForCausalLM", "Qwen3MoeForCausalLM", "DeepseekV3ForCausalLM",
              "DeepseekV2ForCausalLM", "Gemma2ForCausalLM", "Gemma3ForCausalLM", "Phi3ForCausalLM",
              "Olmo2ForCausalLM", "GPTNeoXForCausalLM"})
            QVERIFY2(s.find(a) != std::string::npos, a);
    }
};

QTEST_APPLESS_MAIN(TestHfConfig)
#include "test_hf_config.moc"
