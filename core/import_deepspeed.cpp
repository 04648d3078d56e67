// SPDX-License-Identifier: GPL-3.0-or-later
// A DeepSpeed JSON config read into a scenario: alone (the model from --model), or as the
// file a Megatron-DeepSpeed launch script names (import_megatron.cpp).
#include "core/error.h"
#include "core/json_reader.h"
#include "core/launch_import_detail.h"
#include "core/spec_io.h"

#include <nlohmann/json.hpp>

namespace paralens::launch {
namespace {

using nlohmann::json;

void readZero(const json& j, Scenario& s, std::vector<std::string>& notes)
{
    jsonio::ObjectReader z(j, "zero_optimization");
    ParallelPlan& p = s.parallel;
    p.zero = 0;
    z.readInt("stage", p.zero, 0, 3);
    // DeepSpeed's default: overlap at stage 3 only (zero/config.py overlap_comm_valid).
    bool overlap = p.zero == 3;
    z.readBool("overlap_comm", overlap);
    s.training.overlap_grad_reduce = overlap;
    p.offload_optimizer = false;
    if (const json* off = z.child("offload_optimizer"); off && !off->is_null()) {
        jsonio::ObjectReader o(*off, "zero_optimization.offload_optimizer");
        std::string device = "none";
        o.readString("device", device);
        if (device != "none" && device != "cpu" && device != "nvme")
            o.badValue("device", "'" + device + "' is not none, cpu or nvme");
        p.offload_optimizer = device != "none";
        if (device == "nvme")
            notes.push_back("optimizer offloaded to NVMe: modelled as host memory");
    }
    std::int64_t mics = -1;
    z.readInt64("mics_shard_size", mics, -1, bounds::kMaxGpus);
    p.shard_group = mics > 0 ? int(mics) : 0;
}

} // namespace

DeepSpeedJson readDeepSpeedJson(std::string_view text, const std::string& source, Scenario& s,
                                std::vector<std::string>& notes)
{
    const json j = jsonio::parseText(text, source);
    DeepSpeedJson out;
    try {
        jsonio::ObjectReader r(j, "");
        r.readInt64("train_batch_size", out.train_batch, 1, bounds::kMaxBatch);
        r.readInt64("train_micro_batch_size_per_gpu", out.micro_batch, 1, bounds::kMaxBatch);
        r.readInt64("gradient_accumulation_steps", out.accumulation, 1, bounds::kMaxBatch);
        if (out.train_batch > 0)
            s.training.global_batch = int(out.train_batch);
        if (out.micro_batch > 0)
            s.training.micro_batch = int(out.micro_batch);
        s.training.precision = Precision::BF16;
        if (const json* fp16 = r.child("fp16"); fp16 && fp16->is_object()) {
            const auto en = fp16->find("enabled");
            if (en != fp16->end() && en->is_boolean() && en->get<bool>())
                s.training.precision = Precision::FP16;
        }
        if (const json* b = r.child("bf16"); b && !b->is_null())
            jsonio::ObjectReader(*b, "bf16").allow({"enabled"});
        std::string comm;
        if (r.readString("communication_data_type", comm)) {
            if (comm == "bf16")
                s.training.grad_reduce_dtype = GradReduceDtype::Bf16;
            else if (comm == "fp32")
                s.training.grad_reduce_dtype = GradReduceDtype::Fp32;
            else if (comm != "fp16")
                throw InputError("communication_data_type", "communication_data_type '" + comm +
                                                                "' is not fp16, bf16 or fp32");
        }
        if (const json* dt = r.child("data_types"); dt && !dt->is_null())
            jsonio::ObjectReader(*dt, "data_types").allow({"grad_accum_dtype"});
        if (const json* z = r.child("zero_optimization"); z && !z->is_null())
            readZero(*z, s, notes);
        else
            s.parallel.zero = 0;
        if (const json* pipe = r.child("pipeline"); pipe && !pipe->is_null()) {
            jsonio::ObjectReader pr(*pipe, "pipeline");
            if (const json* st = pr.child("stages"); st && !st->is_string())
                pr.readInt64("stages", out.stages, 1, bounds::kMaxGpus);
        }
    } catch (const InputError& e) {
        throw InputError(e.field(),
                         source + ":" + jsonio::locate(text, e.field()) + ": " + e.what());
    }
    return out;
}

LaunchImport importDeepSpeedJson(std::string_view text, ImportContext& ctx)
{
    LaunchImport out;
    out.framework = LaunchFramework::DeepSpeed;
    Scenario& s = out.scenario;
    resolveModel(ctx, std::nullopt, s);
    resolveHardware(ctx, s);
    s.training.framework = Framework::DeepSpeed;
    const DeepSpeedJson ds = readDeepSpeedJson(text, ctx.source, s, ctx.notes);
    s.parallel.pp = ds.stages > 0 ? int(ds.stages) : 1;
    ctx.notes.push_back("a DeepSpeed config holds no TP degree, sequence length or recompute: "
                        "tp 1 and the defaults assumed (import the launch script for them)");
    if (ds.train_batch == 0 || ds.micro_batch == 0)
        ctx.fail("train_batch_size", "train_batch_size and train_micro_batch_size_per_gpu are "
                                     "needed to derive the data-parallel degree");
    const std::int64_t accumulation = ds.accumulation > 0 ? ds.accumulation : 1;
    const std::int64_t per_replica = ds.micro_batch * accumulation;
    if (ds.train_batch % per_replica != 0)
        ctx.fail("train_batch_size", "is not a multiple of train_micro_batch_size_per_gpu × "
                                     "gradient_accumulation_steps = " +
                                         std::to_string(per_replica));
    setWorld(ctx, s, (ds.train_batch / per_replica) * s.parallel.pp, "train_batch_size");
    return out;
}

} // namespace paralens::launch
