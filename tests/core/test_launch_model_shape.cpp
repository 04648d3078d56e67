// SPDX-License-Identifier: GPL-3.0-or-later
// A model's shape through the launch configurations: custom models, multi-head latent
// attention and QK-norm are written in each framework's terms and read back, or named where a
// framework cannot hold them.
#include "core/error.h"
#include "launch_test_support.h"

#include <QTest>

using namespace paralens;
using namespace paralens::testlaunch;

class TestLaunchModelShape : public QObject
{
    Q_OBJECT

private slots:
    // A custom model keeps its shape and name through the flag-carrying frameworks.
    void customModelRoundTrips()
    {
        Scenario s = base("llama3-8b", 8, Framework::Megatron);
        s.model_id.clear();
        s.model.name = "My 3B";
        s.model.layers = 28;
        s.model.hidden = 3072;
        s.model.heads = 24;
        s.model.kv_heads = 8;
        s.model.ffn_hidden = 8192;
        s.model.tied_embeddings = true;
        for (LaunchFramework f : {LaunchFramework::Megatron, LaunchFramework::MegatronBridge}) {
            const LaunchConfig c = launchConfig(s, f);
            const LaunchImport back = roundTrip(c);
            QVERIFY2(back.scenario == s, qPrintable(describe(s, back.scenario)));
        }
    }

    // QK-norm is Megatron-LM's --qk-layernorm and the Bridge provider's qk_layernorm (both in
    // the argument lists of tests/data/launch): written, and read back into the same scenario;
    // Megatron-DeepSpeed has no such argument, so its launcher names the loss.
    void qkNormTravelsWithTheShape()
    {
        Scenario s = base("llama3-8b", 8, Framework::Megatron);
        s.model_id.clear();
        s.model.name = "My QK-norm model";
        s.model.qk_norm = true;
        const LaunchConfig m = launchConfig(s, LaunchFramework::Megatron);
        QVERIFY(m.files.front().text.find("--qk-layernorm") != std::string::npos);
        QVERIFY(nameList("megatron-lm.txt").contains("--qk-layernorm"));
        const LaunchConfig b = launchConfig(s, LaunchFramework::MegatronBridge);
        bool written = false;
        for (const auto& f : b.files)
            written = written || f.text.find("model.qk_layernorm=true") != std::string::npos;
        QVERIFY(written);
        QVERIFY(nameList("megatron-bridge.txt").contains("model.qk_layernorm"));
        for (const LaunchConfig* c : {&m, &b}) {
            const LaunchImport back = roundTrip(*c);
            QVERIFY2(back.scenario == s, qPrintable(describe(s, back.scenario)));
        }
        Scenario d = s;
        d.training.framework = Framework::DeepSpeed;
        QVERIFY(hasWarning(deepspeedLaunch(d), "qk_norm_unsupported"));
        d.model.qk_norm = false;
        QVERIFY(!hasWarning(deepspeedLaunch(d), "qk_norm_unsupported"));
        s.model.qk_norm = false;
        QVERIFY(
            launchConfig(s, LaunchFramework::Megatron).files.front().text.find("--qk-layernorm") ==
            std::string::npos);
    }

    void latentAttentionTravelsWithTheShape()
    {
        // DeepSeek-V3's MLA (its config.json: q_lora_rank 1536, kv_lora_rank 512, qk_nope 128,
        // qk_rope 64, v 128) as a custom model, so no preset id can restore it: the Megatron
        // script must carry the widths, and reading it back must give them again.
        Scenario s = base("deepseek-v3", 256, Framework::Megatron);
        s.parallel = {.tp = 2, .pp = 8, .dp = 16, .ep = 16, .sequence_parallel = true, .zero = 1};
        s.model_id.clear();
        s.model.name = "My MLA model";
        const LaunchConfig c = launchConfig(s, LaunchFramework::Megatron);
        const std::string text = c.files.front().text;
        for (const char* want :
             {"--multi-latent-attention", "--q-lora-rank 1536", "--kv-lora-rank 512",
              "--qk-head-dim 128", "--qk-pos-emb-head-dim 64", "--v-head-dim 128"})
            QVERIFY2(text.find(want) != std::string::npos, want);
        const LaunchImport back = roundTrip(c);
        QCOMPARE(back.scenario.model.mla.kv_lora_rank, std::int64_t(512));
        QCOMPARE(back.scenario.model.mla.q_lora_rank, std::int64_t(1536));
        QCOMPARE(back.scenario.model.mla.qk_rope_head_dim, std::int64_t(64));
        QCOMPARE(back.scenario.model.mla.v_head_dim, std::int64_t(128));
    }

    // Megatron-Bridge: the MLA widths are MLATransformerConfig overrides (names in
    // megatron-bridge.txt), a custom MLA model is written on the DeepSeek-V3 recipe (the only
    // one whose provider has those fields), and the whole scenario comes back.
    void bridgeCarriesLatentAttention()
    {
        const QSet<QString> bridge = nameList("megatron-bridge.txt");
        Scenario s = base("deepseek-v3", 256, Framework::Megatron);
        s.parallel = {.tp = 2, .pp = 8, .dp = 16, .ep = 16, .sequence_parallel = true, .zero = 1};
        s.model_id.clear();
        s.model.name = "My MLA model";
        s.model.mla.q_lora_rank = 0; // DeepSeek-V2-Lite style: queries straight from h
        s.model.mla.kv_lora_rank = 256;
        const LaunchConfig c = bridgeLaunch(s);
        const std::string text = c.files.front().text;
        QVERIFY2(c.warnings.empty(), qPrintable(warningsOf(c)));
        for (const char* want :
             {"--recipe deepseek_v3_pretrain_config", "model.multi_latent_attention=true ",
              "model.q_lora_rank=null ", "model.kv_lora_rank=256 ", "model.qk_head_dim=128 ",
              "model.qk_pos_emb_head_dim=64 ", "model.v_head_dim=128 "})
            QVERIFY2(text.find(want) != std::string::npos, want);
        for (const char* key :
             {"model.multi_latent_attention", "model.q_lora_rank", "model.kv_lora_rank",
              "model.qk_head_dim", "model.qk_pos_emb_head_dim", "model.v_head_dim"})
            QVERIFY2(bridge.contains(QLatin1String(key)), key);
        const LaunchImport back = roundTrip(c);
        QVERIFY2(back.scenario == s, qPrintable(describe(s, back.scenario)));

        // The preset (DeepSeek-V3's config.json: 1536, 512, 128, 64, 128) through its recipe.
        Scenario v3 = base("deepseek-v3", 256, Framework::Megatron);
        v3.parallel = s.parallel;
        const std::string t3 = bridgeLaunch(v3).files.front().text;
        for (const char* want : {"model.q_lora_rank=1536 ", "model.kv_lora_rank=512 ",
                                 "model.qk_head_dim=128 ", "model.qk_pos_emb_head_dim=64 "})
            QVERIFY2(t3.find(want) != std::string::npos, want);
        const LaunchImport b3 = roundTrip(bridgeLaunch(v3));
        QCOMPARE(b3.scenario.model_id, std::string("deepseek-v3"));
        QVERIFY2(b3.scenario == v3, qPrintable(describe(v3, b3.scenario)));
    }

    // A Bridge script that turns MLA on without its widths, or gives one that is not a number,
    // is a named error, not a guessed width.
    void bridgeLatentAttentionNeedsItsWidths()
    {
        Scenario s = base("deepseek-v3", 256, Framework::Megatron);
        s.parallel = {.tp = 2, .pp = 8, .dp = 16, .ep = 16, .sequence_parallel = true, .zero = 1};
        s.model_id.clear();
        s.model.name = "My MLA model";
        const std::string text = bridgeLaunch(s).files.front().text;
        auto without = [&](const std::string& cut, const std::string& put) {
            std::string t = text;
            const auto at = t.find(cut);
            if (at == std::string::npos)
                qFatal("no %s", cut.c_str());
            return t.replace(at, cut.size(), put);
        };
        for (const auto& [cut, put, field] :
             std::vector<std::tuple<std::string, std::string, std::string>>{
                 {"model.kv_lora_rank=512 ", "", "model.kv_lora_rank"},
                 {"model.v_head_dim=128 ", "model.v_head_dim=null ", "model.v_head_dim"},
                 {"model.qk_head_dim=128 ", "model.qk_head_dim=wide ", "model.qk_head_dim"},
                 {"model.qk_pos_emb_head_dim=64 ", "model.qk_pos_emb_head_dim=99999999999 ",
                  "model.qk_pos_emb_head_dim"},
                 {"model.multi_latent_attention=true ", "model.multi_latent_attention=yes ",
                  "model.multi_latent_attention"}}) {
            try {
                (void)importLaunch(without(cut, put), "launch.sh");
                QFAIL(qPrintable(QString::fromStdString("accepted without " + cut)));
            } catch (const InputError& e) {
                QVERIFY2(std::string(e.what()).find(field) != std::string::npos, e.what());
            }
        }
    }

    // torchtitan chooses the model by name and flavor: DeepSeek-V3's MLA travels as the
    // deepseek_v3 671B flavor (torchtitan's DeepSeekV3ModelArgs for 671B: 1536, 512, 128, 64,
    // 128); a custom MLA model's widths have no TOML key, and that is a named warning.
    void torchtitanLatentAttentionIsTheFlavors()
    {
        Scenario s = base("deepseek-v3", 128, Framework::FSDP);
        s.parallel = {.tp = 2, .pp = 4, .dp = 16, .ep = 8, .sequence_parallel = true, .zero = 3};
        s.parallel.expert_tp = 1;
        const LaunchConfig c = torchtitanLaunch(s);
        // The flavor carries the MLA; the MTP module has no torchtitan setting.
        QVERIFY2(c.warnings.size() == 1 && hasWarning(c, "mtp_unsupported"),
                 qPrintable(warningsOf(c)));
        const std::string toml = c.files.front().text;
        QVERIFY(toml.find("name = \"deepseek_v3\"\nflavor = \"671B\"\n") != std::string::npos);
        const LaunchImport back = roundTrip(c);
        QCOMPARE(back.scenario.model.mla.q_lora_rank, std::int64_t(1536));
        QCOMPARE(back.scenario.model.mla.kv_lora_rank, std::int64_t(512));
        QCOMPARE(back.scenario.model.mla.qk_nope_head_dim, std::int64_t(128));
        QCOMPARE(back.scenario.model.mla.qk_rope_head_dim, std::int64_t(64));
        QCOMPARE(back.scenario.model.mla.v_head_dim, std::int64_t(128));
        QVERIFY2(back.scenario == s, qPrintable(describe(s, back.scenario)));

        Scenario custom = s;
        custom.model_id.clear();
        custom.model.name = "My MLA model";
        custom.model.moe = MoeSpec{}; // dense: still torchtitan's deepseek_v3 (its one MLA model)
        custom.model.mla.kv_lora_rank = 256;
        const LaunchConfig cc = torchtitanLaunch(custom);
        QVERIFY2(hasWarning(cc, "mla_in_flavor_only"), qPrintable(warningsOf(cc)));
        QVERIFY(hasWarning(cc, "no_torchtitan_flavor"));
        const std::string t = cc.files.front().text;
        QVERIFY(t.find("# WARNING mla_in_flavor_only: ") != std::string::npos);
        QVERIFY(t.find("kv_lora_rank 256") != std::string::npos);
        QVERIFY(t.find("name = \"deepseek_v3\"") != std::string::npos);
        QVERIFY(!hasWarning(torchtitanLaunch(base("llama3-8b", 8, Framework::FSDP)),
                            "mla_in_flavor_only"));
    }

    // Megatron-DeepSpeed has no latent attention (megatron/arguments.py, deepspeed.txt):
    // DeepSeek-V3 is written as MHA with a named warning, and a model without MLA gets none.
    void deepspeedNamesDroppedLatentAttention()
    {
        Scenario s = base("deepseek-v3", 256, Framework::DeepSpeed);
        s.parallel = {.tp = 2, .dp = 128, .ep = 8, .sequence_parallel = true, .zero = 1};
        const LaunchConfig c = deepspeedLaunch(s);
        QVERIFY2(hasWarning(c, "mla_unsupported"), qPrintable(warningsOf(c)));
        const std::string script = fileText(c, "launch.sh");
        QVERIFY(script.find("# WARNING mla_unsupported: ") != std::string::npos);
        QVERIFY(script.find("--kv-lora-rank 512") == std::string::npos); // no such argument
        QVERIFY(!hasWarning(deepspeedLaunch(base("llama3-8b", 8, Framework::DeepSpeed)),
                            "mla_unsupported"));
        // Read back, the shape has no MLA, so it is no longer DeepSeek-V3's (sameShape).
        const LaunchImport back = roundTrip(c);
        QVERIFY(!back.scenario.model.isMla());
        QVERIFY(back.scenario.model_id != "deepseek-v3");
    }
};

QTEST_GUILESS_MAIN(TestLaunchModelShape)
#include "test_launch_model_shape.moc"
