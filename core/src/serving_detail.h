// SPDX-License-Identifier: MIT
// Shared pieces of the serving model (serving_*.cpp): what one rank holds and computes.
#pragma once

#include "vramlab/model_spec.h"
#include "vramlab/run_spec.h"
#include "vramlab/serving_model.h"

#include <string>

namespace vramlab::detail {

/// The layers [first, last) of one pipeline stage and whether it holds the ends of the model.
struct Stage {
    Count first = 0, last = 0;
    bool holdsEmbedding = true, holdsHead = true;
    Count layers() const { return last - first; }
};

/// vllm/distributed/utils.py get_pp_indices (v0.4-v0.8): num_layers // pp per stage, the
/// remainder on the last stage.
Stage pipelineStage(const ModelSpec& m, Count rank, Count pp);

/// Weights one tensor-parallel rank of `stage` holds once loaded, as vLLM/SGLang shard them:
/// column-parallel q/k/v/gate/up (KV heads replicated when fewer than the ranks), row-parallel
/// o/down, vocabulary-parallel embedding and LM head (vocabulary padded to 64), norms and
/// routers replicated; plus the rotary cos/sin cache (vLLM RotaryEmbedding: [max_position,
/// rotary_dim] in the model dtype). `expertBytes`: the routed experts' share (MoE decode speed).
Bytes rankWeightsBytes(
    const ModelSpec& m, const Serving& s, Count tp, const Stage& stage, Bytes* expertBytes = nullptr);

/// Llama 4 as its import marks it: chunked local layers, or transformers' every-expert MoE (either alone where a
/// config turns the other off). The engines gate it by the version that first served it.
inline bool isLlama4(const ModelSpec& m)
{
    return m.chunkedLocalAttention || m.moe.everyExpertEveryToken;
}

/// KV bytes one token takes on one rank for `layers` layers (MLA: the latent and rope key).
Bytes kvBytesPerToken(const ModelSpec& m, Count tp, Count layers, DType kvDtype);

/// Peak of vLLM's profiling forward above the weights, per rank. `v1Sampler`: the V1 engine's
/// dummy sampler run, which skips top-k/top-p (no sort).
Bytes vllmActivationPeakBytes(const ModelSpec& m, const Serving& s, Count tp, const Stage& stage, Count tokens,
    Count seqs, bool v1Sampler = false);

/// One tensor-parallel rank's share of a Mamba-2 mixer (vLLM's MambaMixer2, SGLang's): the inner width and the
/// heads split over the ranks, and B and C of the groups a rank holds, where extra_groups_for_head_shards
/// (vllm/model_executor/layers/mamba/mamba_utils.py) replicates a group count that does not divide by tp up to tp.
/// Throws InputError naming run.parallelism.tensor_parallel when the heads or groups do not split.
/// Gated DeltaNet (vllm/model_executor/models/qwen3_next.py Qwen3NextGatedDeltaNet) splits its value heads and its
/// key heads over the ranks, which must divide both; its in_proj holds two values per head (b and a).
struct SsmRankWidths {
    Count inner = 0, bc = 0, heads = 0, perHeadValues = 1;
    Count conv() const { return inner + bc; } ///< x, B and C (q, k and v): the conv's channels
    Count inProj() const { return 2 * inner + bc + perHeadValues * heads; } ///< z, x, B, C and dt (b and a)
};
SsmRankWidths ssmRankWidths(const SsmSpec& s, Count tp);

/// One sequence's recurrent state in one layer on one rank (MambaStateShapeCalculator.mamba2_state_shape and
/// gated_delta_net_state_shape): conv (d_conv - 1) x conv_dim / tp and the scan's heads / tp x head_dim x d_state
/// (Gated DeltaNet: value heads / tp x head_v_dim x head_k_dim).
struct SsmStateBytes {
    Bytes conv = 0, ssm = 0;
    Bytes total() const { return checkedAdd(conv, ssm); }
};
SsmStateBytes ssmStateBytes(const ModelSpec& m, Count tp, DType conv, DType ssm);

/// KV cache element type: kv_cache_dtype, else "auto" = the model dtype.
DType kvDtype(const Serving& s);

/// Major.minor.patch of an engine version ("0.6.4.post1" -> 0.6.4) as one comparable number.
long versionKey(const std::string& version);

std::string gib(Bytes b, int decimals = 2); ///< "3.81GiB" without the unit: "3.81"
std::string mib(Bytes b); ///< "2788.00"

void vllmEstimate(const ModelSpec& m, const RunSpec& r, ServingEstimate& out);
void sglangEstimate(const ModelSpec& m, const RunSpec& r, ServingEstimate& out);
void llamaCppEstimate(const ModelSpec& m, const RunSpec& r, ServingEstimate& out);

} // namespace vramlab::detail
