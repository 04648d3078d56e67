// SPDX-License-Identifier: GPL-3.0-or-later
// training.adam_moments_dtype: Megatron-Core's precision-aware optimizer keeps Adam's m and v in
// bf16. Checked by hand on the optimizer states (master 4 + moments 2 + 2 bytes per parameter,
// sharded) and the step's bytes (30 → 22 per parameter); the file, validation and launch-config
// round trips; other dtypes named.
#include "core/error.h"
#include "core/framework.h"
#include "core/framework_options.h"
#include "core/launch_config.h"
#include "core/launch_import.h"
#include "core/memory.h"
#include "core/optimizer_time.h"
#include "core/scenario_io.h"
#include "core/validate.h"
#include "launch_test_support.h"
#include "rule_checks.h"
#include "test_scenarios.h"

#include <QTest>

#include <nlohmann/json.hpp>

#include <cmath>

using namespace paralens;
using namespace paralens::testmodels;
using paralens::testrules::breaks;

namespace {

Scenario megatron(AdamMomentsDtype moments)
{
    Scenario s = scenario(llama3_8b(), h100_sxm(), 1, 1, 8, 64);
    s.parallel.zero = 1;
    s.training.adam_moments_dtype = moments;
    return s;
}

} // namespace

class TestAdamMoments : public QObject
{
    Q_OBJECT

private slots:
    void statesShrinkByAThird()
    {
        // 1e9 parameters sharded over 8 ranks by the distributed optimizer: fp32 master 4 and
        // moments 8 bytes = 1.5 GB each; with bf16 moments 4 + 4 = 1.0 GB.
        for (auto [moments, perParam] :
             {std::pair{AdamMomentsDtype::Fp32, 12.0}, std::pair{AdamMomentsDtype::Bf16, 8.0}}) {
            const Scenario s = megatron(moments);
            const FrameworkConventions fw = conventions(s.training, s.parallel);
            const ModelStateBytes b = modelStateBytes(1e9, fw, 1, 8, false);
            QCOMPARE(b.optimizer_states, 1e9 * perParam / 8);
        }
        // SGD keeps one fp32 momentum whatever the setting (validation refuses the pair).
        Scenario sgd = megatron(AdamMomentsDtype::Bf16);
        sgd.training.optimizer = Optimizer::SGD;
        QCOMPARE(conventions(sgd.training, sgd.parallel).optimizerBytes(), 4.0 + 4.0);
    }

    void stepStreamsLess()
    {
        // The fused step reads and writes m and v once: 30 bytes per parameter with fp32
        // moments (ModelConstants::adam_bytes_per_param), 30 − 2 · 4 = 22 with bf16.
        StageParams sp;
        sp.dense = 8e9;
        const ModelConstants k;
        const double hbm = 3e12;
        const auto hbmSeconds = [&](AdamMomentsDtype moments) {
            const Scenario s = megatron(moments);
            const FrameworkConventions fw = conventions(s.training, s.parallel);
            return optimizerTimes(s, fw, k, sp, 0, hbm).hbm;
        };
        QVERIFY(std::abs(hbmSeconds(AdamMomentsDtype::Fp32) - 1e9 * 30 / hbm) < 1e-12);
        QVERIFY(std::abs(hbmSeconds(AdamMomentsDtype::Bf16) - 1e9 * 22 / hbm) < 1e-12);
    }

    void megatronAdamOnly()
    {
        Scenario s = megatron(AdamMomentsDtype::Bf16);
        QVERIFY(!breaks(s, "adam_moments_dtype_megatron"));
        QVERIFY(frameworkOptions(s).adam_moments);
        for (Framework f : {Framework::FSDP, Framework::DeepSpeed}) {
            Scenario o = s;
            o.training.framework = f;
            QVERIFY(breaks(o, "adam_moments_dtype_megatron"));
            QVERIFY(!frameworkOptions(o).adam_moments);
        }
        Scenario sgd = s;
        sgd.training.optimizer = Optimizer::SGD;
        QVERIFY(breaks(sgd, "adam_moments_dtype_megatron"));
        Scenario offload = s;
        offload.parallel.offload_optimizer = true;
        QVERIFY(breaks(offload, "adam_moments_dtype_megatron"));
        QVERIFY(!isRunnable(offload));
        // fp32, the default, is fine anywhere.
        offload.training.adam_moments_dtype = AdamMomentsDtype::Fp32;
        QVERIFY(!breaks(offload, "adam_moments_dtype_megatron"));
    }

    void scenarioFileRoundTrips()
    {
        const Scenario s =
            parseScenario(R"({"training": {"adam_moments_dtype": "bf16"}})", "s.json");
        QVERIFY(s.training.adam_moments_dtype == AdamMomentsDtype::Bf16);
        QCOMPARE(scenarioToJson(s)["training"]["adam_moments_dtype"].get<std::string>(),
                 std::string("bf16"));
        QVERIFY(parseScenario(scenarioToText(s), "back.json") == s);
        Scenario fp32 = s;
        fp32.training.adam_moments_dtype = AdamMomentsDtype::Fp32;
        QVERIFY(!(fp32 == s));
        QVERIFY(!scenarioToJson(fp32)["training"].contains("adam_moments_dtype"));
        try {
            parseScenario(R"({"training": {"adam_moments_dtype": "fp8"}})", "s.json");
            QFAIL("fp8 moments were read");
        } catch (const InputError& e) {
            const QString what = QString::fromStdString(e.what());
            QVERIFY(what.contains("training.adam_moments_dtype") && what.contains("'fp8'"));
        }
    }

    void launchConfigsCarryIt()
    {
        using namespace testlaunch;
        Scenario s = base("llama3-8b", 8, Framework::Megatron);
        s.training.adam_moments_dtype = AdamMomentsDtype::Bf16;
        const LaunchConfig mlm = megatronLaunch(s);
        const std::string& script = fileText(mlm, "launch.sh");
        for (const char* flag :
             {"--use-precision-aware-optimizer", "--exp-avg-dtype bf16", "--exp-avg-sq-dtype bf16"})
            QVERIFY2(script.find(flag) != std::string::npos, flag);
        QVERIFY(roundTrip(mlm).scenario.training.adam_moments_dtype == AdamMomentsDtype::Bf16);
        const LaunchConfig bridge = bridgeLaunch(s);
        const std::string& run = bridge.files.front().text;
        QVERIFY(run.find("optimizer.exp_avg_sq_dtype=bf16") != std::string::npos);
        QVERIFY(roundTrip(bridge).scenario.training.adam_moments_dtype == AdamMomentsDtype::Bf16);
        // torch's spelling reads the same; one moment in bf16 alone is read as fp32, noted.
        std::string t = run;
        t.replace(t.find("optimizer.exp_avg_dtype=bf16"), 28,
                  "optimizer.exp_avg_dtype=torch.bfloat16");
        QVERIFY(importLaunch(t, "run.sh").scenario.training.adam_moments_dtype ==
                AdamMomentsDtype::Bf16);
        t.replace(t.find("optimizer.exp_avg_sq_dtype=bf16"), 31, "optimizer.exp_avg_sq_dtype=fp32");
        const LaunchImport mixed = importLaunch(t, "run.sh");
        QVERIFY(mixed.scenario.training.adam_moments_dtype == AdamMomentsDtype::Fp32);
        bool noted = false;
        for (const std::string& n : mixed.notes)
            noted = noted || n.find("precision-aware optimizer") != std::string::npos;
        QVERIFY(noted);
        // fp32 writes nothing.
        s.training.adam_moments_dtype = AdamMomentsDtype::Fp32;
        QVERIFY(fileText(megatronLaunch(s), "launch.sh").find("--exp-avg-dtype") ==
                std::string::npos);
    }
};

QTEST_APPLESS_MAIN(TestAdamMoments)
#include "test_adam_moments.moc"
