// SPDX-License-Identifier: GPL-3.0-or-later
// training.grad_reduce_dtype: what each framework keeps and moves in it (hand-counted bytes),
// what it does to memory and the DP reduction, and that every launch writer says it and every
// reader reads it back.
#include "core/error.h"
#include "core/evaluate.h"
#include "core/framework.h"
#include "core/launch_config.h"
#include "core/launch_import.h"
#include "core/scenario_io.h"

#include <nlohmann/json.hpp>

#include <QTest>

using namespace paralens;

namespace {

Scenario plan(Framework f, int zero)
{
    Scenario s = defaultScenario(); // Llama 3 70B on 64 H100
    s.training.framework = f;
    s.parallel.zero = zero;
    return s;
}

FrameworkConventions with(Framework f, GradReduceDtype d, int zero = 1)
{
    Scenario s = plan(f, zero);
    s.training.grad_reduce_dtype = d;
    return conventions(s.training, s.parallel);
}

} // namespace

class TestGradReduceDtype : public QObject
{
    Q_OBJECT
private slots:
    void bytesPerFramework()
    {
        // Megatron: fp32 main grads by default (--accumulate-allreduce-grads-in-fp32 for bf16),
        // bf16 with --grad-reduce-in-bf16: the buffer and the reduction.
        QCOMPARE(with(Framework::Megatron, GradReduceDtype::Default).grad_bytes, 4.0);
        const FrameworkConventions mb = with(Framework::Megatron, GradReduceDtype::Bf16);
        QCOMPARE(mb.grad_bytes, 2.0);
        QCOMPARE(mb.grad_reduce_bytes, 2.0);
        // DeepSpeed: the training dtype by default; fp32 accumulates and communicates in fp32.
        QCOMPARE(with(Framework::DeepSpeed, GradReduceDtype::Default).grad_reduce_bytes, 2.0);
        const FrameworkConventions df = with(Framework::DeepSpeed, GradReduceDtype::Fp32);
        QCOMPARE(df.grad_bytes, 4.0);
        QCOMPARE(df.grad_reduce_bytes, 4.0);
        // FSDP2: the sharded fp32 gradient stays; the reduce-scatter input is bf16 (copy-in
        // read 2 + write 2, one unit's gradients 2 + 2 while reduced).
        const FrameworkConventions fb = with(Framework::FSDP, GradReduceDtype::Bf16, 3);
        QCOMPARE(fb.grad_bytes, 4.0);
        QCOMPARE(fb.grad_reduce_bytes, 2.0);
        QCOMPARE(fb.zero3_reduce_copy_bytes, 4.0);
        QCOMPARE(fb.zero3_unit_grad_bytes, 4.0);
        // FSDP1 reducing in bf16 casts nothing: the cat (4) and the in-place pre-divide (4).
        Scenario v1 = plan(Framework::FSDP, 3);
        v1.training.fsdp_version = 1;
        v1.training.grad_reduce_dtype = GradReduceDtype::Bf16;
        QCOMPARE(conventions(v1.training, v1.parallel).zero3_reduce_copy_bytes, 8.0);
    }

    void memoryAndReduction()
    {
        // Megatron's gradient buffer halves; the distributed optimizer's states do not move.
        Scenario s = plan(Framework::Megatron, 1);
        const Estimate fp32 = evaluate(s);
        s.training.grad_reduce_dtype = GradReduceDtype::Bf16;
        const Estimate bf16 = evaluate(s);
        for (std::size_t i = 0; i < fp32.stages.size(); ++i) {
            QCOMPARE(bf16.stages[i].gradients, fp32.stages[i].gradients / 2);
            QCOMPARE(bf16.stages[i].optimizer_states, fp32.stages[i].optimizer_states);
        }
        // Half the bytes to reduce: never more DP time, exposed or hidden.
        QVERIFY(bf16.time.exposed.dp + bf16.time.overlapped.dp <
                fp32.time.exposed.dp + fp32.time.overlapped.dp);
    }

    void launchFilesSayItAndReadItBack()
    {
        for (LaunchFramework f : {LaunchFramework::Megatron, LaunchFramework::MegatronBridge,
                                  LaunchFramework::Torchtitan}) {
            Scenario s =
                plan(f == LaunchFramework::Torchtitan ? Framework::FSDP : Framework::Megatron,
                     f == LaunchFramework::Torchtitan ? 3 : 1);
            s.training.grad_reduce_dtype = GradReduceDtype::Bf16;
            const std::string text = launchConfig(s, f).files.front().text;
            const Scenario back = importLaunch(text, "launch").scenario;
            QVERIFY2(back.training.grad_reduce_dtype == GradReduceDtype::Bf16, text.c_str());
            s.training.grad_reduce_dtype = GradReduceDtype::Default;
            const Scenario plain =
                importLaunch(launchConfig(s, f).files.front().text, "l").scenario;
            QVERIFY(plain.training.grad_reduce_dtype == GradReduceDtype::Default);
        }
        // DeepSpeed: communication_data_type and data_types.grad_accum_dtype in the JSON.
        Scenario d = plan(Framework::DeepSpeed, 1);
        d.training.grad_reduce_dtype = GradReduceDtype::Fp32;
        for (const LaunchFile& file : launchConfig(d, LaunchFramework::DeepSpeed).files) {
            if (file.text.front() != '{')
                continue;
            QVERIFY(file.text.find("\"communication_data_type\": \"fp32\"") != std::string::npos);
            const LaunchImport in = importLaunch(file.text, "ds.json", {"llama3-70b", "h100-sxm"});
            QVERIFY(in.scenario.training.grad_reduce_dtype == GradReduceDtype::Fp32);
        }
        try {
            (void)importLaunch("{\"train_batch_size\": 8, \"train_micro_batch_size_per_gpu\": 1, "
                               "\"communication_data_type\": \"int8\"}",
                               "ds.json", {"llama3-70b", "h100-sxm"});
            QFAIL("an unknown communication dtype is accepted");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("communication_data_type") != std::string::npos,
                     e.what());
        }
    }

    void scenarioFileRoundTrip()
    {
        Scenario s = parseScenario(R"({"training": {"grad_reduce_dtype": "bf16"}})", "g.json");
        QVERIFY(s.training.grad_reduce_dtype == GradReduceDtype::Bf16);
        QVERIFY(parseScenario(scenarioToText(s), "g2.json") == s);
        QVERIFY(!scenarioToJson(defaultScenario())["training"].contains("grad_reduce_dtype"));
        try {
            (void)parseScenario(R"({"training": {"grad_reduce_dtype": "fp8"}})", "g3.json");
            QFAIL("fp8 accepted");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("default, fp32, bf16") != std::string::npos,
                     e.what());
        }
    }
};

QTEST_APPLESS_MAIN(TestGradReduceDtype)
#include "test_grad_reduce_dtype.moc"
