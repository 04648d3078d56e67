// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/comm_cost.h"
#include "core/constants.h"
#include "core/dims.h"
#include "core/kernel_time.h"
#include "core/scenario.h"
#include "core/topology.h"

#include <cstdint>

namespace paralens {

/// One dimension's communication for one micro-batch: what lengthens the forward and the
/// backward, and what runs hidden under compute. Per layer for TP, CP and EP; per stage
/// boundary (one hop) for PP.
struct CommTimes
{
    double forward = 0;
    double backward = 0;
    double hidden = 0;
};

/// What every communication helper reads.
struct CommContext
{
    const Scenario* scenario = nullptr;
    const Dims* dims = nullptr;
    const Topology* topology = nullptr;
    const ModelConstants* constants = nullptr;
    const MeasuredPerformance* measured = nullptr; ///< may be null

    /// The link model of one of the topology's groups.
    LinkModel link(const GroupPlacement& g) const
    {
        return linkFor(g, scenario->cluster, *constants);
    }
    /// collectiveSeconds() on `link` with the measured profile.
    double seconds(Collective c, const LinkModel& l, double bytes) const
    {
        return collectiveSeconds(c, l, bytes, measured);
    }
};

/// TP per layer (Narayanan et al. 2021 §3.2): two all-reduces of one b·s·h/cp activation in
/// forward and two in backward; with SP each becomes an all-gather plus a reduce-scatter of
/// the same tensor (Korthikanti et al. 2022 §4.2.2), and the backward's two re-gathers of the
/// sequence-sharded norm output run hidden under the input-gradient GEMM. Full recompute
/// repeats the forward's collectives in the backward. Zero when t = 1.
/// With `tp_comm_overlap` (and SP) each collective runs beside the GEMM it feeds or drains
/// (`dense.tp_gemm`: AsyncTP under FSDP, TransformerEngine's userbuffers otherwise, as their
/// default configurations split them): what its GEMM cannot cover stays exposed.
CommTimes tpComm(const CommContext& c, const LayerTimes& dense = LayerTimes{});

/// CP per layer and micro-batch (docs/formulas.md §4, CP), by the resolved `a.comm`. K and V
/// chunks hold 2·(s/cp)·b·kv/t bf16 elements (q/t wide when the framework repeats GQA heads).
/// - p2p: cp − 1 send/recv steps forward, each under one attention block of `core` (the local
///   block first); the backward sends K/V and dK/dV in one message per step (Transformer
///   Engine), or dK/dV after each block with the last hop exposed (PyTorch).
/// - all-gather: K/V gathered before the attention and exposed, gathered again for the
///   backward and dK/dV reduce-scattered (Llama 3 §3.3.2, Transformer Engine); or gathered
///   under the local block with dK/dV on a ring (PyTorch's pass-KV).
/// - a2a (Ulysses): Q, K, V and the output all-to-all forward, their gradients backward, all
///   exposed.
/// When the backward recomputes the attention forward (`a.recomputed`), its exchange runs again.
/// Zero when cp = 1.
CommTimes cpComm(const CommContext& c, const AttentionSetup& a, const AttentionTimes& core);

/// EP per MoE layer: one dispatch and one combine in forward, the mirror pair in backward
/// (twice more with full recompute), with the volumes of the plan's dispatcher
/// (moeDispatcher(); Megatron-Core token_dispatcher.py), N/t tokens per rank with SP:
///  - allgather: all-gather of the tokens over expert TP × EP, reduce-scatter back;
///  - alltoall: all-to-all of N/t·k·h·2 bytes over EP (one copy per routed expert), then
///    all-gather / reduce-scatter over expert TP;
///  - deepep / hybridep: one copy per remote scale-up domain over the NIC and one per further
///    destination GPU over NVLink, the slower of the two (DeepEP README).
/// The all-to-alls carry the load imbalance (moeLoadImbalance()). With SP these replace the
/// MLP's TP collectives (moeLayerKeepsMlpTpComm()). When a forward and a backward chunk run
/// side by side (DualPipeV, DeepSeek-V3 §3.2.1; parallel.moe_overlap, Megatron-Core's EP
/// overlap) the communication hides under `moe`'s compute, which loses
/// ModelConstants::ep_comm_sm_share of the GPU meanwhile. Zero for dense models.
CommTimes epComm(const CommContext& c, const LayerTimes& moe);

/// Whether an MoE layer still runs the MLP's TP collectives (tpComm() counts an attention and
/// an MLP half): without SP, or for its shared experts. Otherwise the layer's TP share is the
/// attention half and epComm() carries the rest.
bool moeLayerKeepsMlpTpComm(const Scenario& s);

/// PP per stage boundary and micro-batch: one send/recv of the b·s·h/(t·cp) boundary tensor
/// each way (Narayanan et al. 2021 §4.1, scatter/gather). The schedule decides what of it
/// hides (pipelineCost()), so `hidden` is 0. Zero when p = 1.
CommTimes ppComm(const CommContext& c);

/// Tied embeddings (or MTP modules, which hold a copy of the word embedding on the head's stage)
/// on p > 1: the first and last stage all-reduce the V_pad·h/t embedding
/// gradient once per step (Megatron finalize_model_grads.py), `grad_reduce_bytes` per element.
/// Zero under a V schedule (ZB-V, DualPipeV): device 0 holds the embedding and the LM head, one
/// tied matrix whose gradient both ends add to locally.
double tiedEmbeddingSeconds(const CommContext& c, std::int64_t vocab_pad, double grad_reduce_bytes);

} // namespace paralens
