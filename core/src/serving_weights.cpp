// SPDX-License-Identifier: MIT
#include "serving_detail.h"

#include "vramlab/errors.h"
#include "vramlab/parameter_tensors.h"

#include <algorithm>
#include <cstdio>

namespace vramlab::detail {

namespace {

/// vllm/model_executor/layers/vocab_parallel_embedding.py: DEFAULT_VOCAB_PADDING_SIZE = 64.
Count paddedVocab(Count vocab)
{
    return roundUp(vocab, 64);
}

/// Copies of a per-layer tensor that fall in the stage (dense MLPs where the model places them).
Count stageCopies(const ParamTensor& t, const ModelSpec& m, const Stage& st)
{
    if (t.group == ParamGroup::Embedding || t.group == ParamGroup::Position || t.group == ParamGroup::Head)
        return 1;
    if (t.group == ParamGroup::Vision) // the image encoder runs before the first layer
        return st.holdsEmbedding ? t.copies : 0;
    if (t.name.rfind("final_norm", 0) == 0)
        return st.holdsHead ? 1 : 0;
    if (st.first == 0 && st.last == m.numLayers) // every layer: hybrid models' kinds need no split
        return t.copies;
    const Count moeIn = m.moeLayersIn(st.first, st.last);
    const Count denseIn = st.layers() - moeIn;
    if (t.name.rfind("moe_layers.", 0) == 0)
        return m.moeLayers() == 0 ? 0 : t.copies / m.moeLayers() * moeIn;
    if (t.name.rfind("layers.mlp.", 0) == 0)
        return denseIn;
    return t.copies / m.numLayers * st.layers();
}

} // namespace

Stage pipelineStage(const ModelSpec& m, Count rank, Count pp)
{
    Stage s;
    const Count per = m.numLayers / pp;
    s.first = rank * per;
    s.last = rank == pp - 1 ? m.numLayers : s.first + per;
    s.holdsEmbedding = rank == 0;
    s.holdsHead = rank == pp - 1;
    return s;
}

Bytes rankWeightsBytes(const ModelSpec& m, const Serving& s, Count tp, const Stage& st, Bytes* expertBytes)
{
    Bytes total = 0, experts = 0;
    const DType dt = s.dtype;
    for (const ParamTensor& t : parameterTensors(m)) {
        const Count copies = stageCopies(t, m, st);
        if (copies == 0 || (t.group == ParamGroup::Vision && s.languageModelOnly))
            continue; // --language-model-only: vLLM builds the model without its vision tower
        Bytes each = 0;
        if (t.group == ParamGroup::Embedding) {
            if (!st.holdsEmbedding && !(st.holdsHead && m.tiedEmbeddings))
                continue;
            // A tied LM head on a later pipeline stage loads its own copy of the embedding.
            const Count stagesHolding
                = (st.holdsEmbedding ? 1 : 0) + (st.holdsHead && m.tiedEmbeddings && !st.holdsEmbedding ? 1 : 0);
            each = checkedMul(storageBytes(dt, checkedMul(ceilDiv(paddedVocab(t.rows), tp), t.cols)), stagesHolding);
        } else if (t.group == ParamGroup::Head) {
            if (!st.holdsHead)
                continue;
            each = storageBytes(dt, checkedMul(t.rows, ceilDiv(paddedVocab(t.cols), tp)));
        } else if (t.group == ParamGroup::Position) {
            if (!st.holdsEmbedding)
                continue;
            each = storageBytes(dt, t.elements());
        } else if (t.group == ParamGroup::Ssm) {
            // vllm/model_executor/layers/mamba/mamba_mixer2.py MambaMixer2: in_proj column-parallel over its
            // [z, x, B, C, dt] parts (B and C of the groups a rank holds), conv1d column-parallel, dt_bias, A_log,
            // D and the gated norm split by head, out_proj row-parallel.
            const SsmRankWidths w = ssmRankWidths(m.ssm, tp);
            if (t.module == "in_proj")
                each = quantizedLinearBytes(s.quantization, t.rows, w.inProj(), dt);
            else if (t.module == "out_proj")
                each = quantizedLinearBytes(s.quantization, w.inner, t.cols, dt);
            else if (t.name.find("conv1d") != std::string_view::npos)
                each = storageBytes(dt, checkedMul(w.conv(), m.ssm.convKernel));
            else if (m.ssm.deltaNet() && t.name.find(".norm.") != std::string_view::npos)
                each = storageBytes(dt, t.elements()); // RMSNormGated(head_v_dim): every rank holds it whole
            else
                each = storageBytes(dt, ceilDiv(t.elements(), tp));
        } else if (!t.linear || t.group == ParamGroup::Router) {
            each = storageBytes(dt, t.elements()); // norms, biases, routers: replicated, unquantized
        } else {
            Count in = t.rows, out = t.cols;
            if (t.module == "k" || t.module == "v")
                out = std::max<Count>(1, m.numKvHeads / tp) * m.headDim; // replicated KV heads (QKVParallelLinear)
            else if (t.module == "o" || t.module == "down")
                in = ceilDiv(in, tp);
            else
                out = ceilDiv(out, tp);
            each = quantizedLinearBytes(s.quantization, in, out, dt);
        }
        const Bytes bytes = checkedMul(each, copies);
        accumulate(total, bytes);
        if (t.group == ParamGroup::Expert)
            accumulate(experts, bytes);
    }
    // vllm/model_executor/layers/rotary_embedding.py: cos_sin_cache [max_position, rotary_dim]
    // converted to the model dtype, one instance shared by the layers (get_rope caches it). vLLM's
    // MRotaryEmbedding (mrope.py, since 0.7.2: "we enlarge max_position_embeddings to 4 times") holds 4x the
    // positions.
    if (m.position == PositionKind::Rope && st.layers() > 0 && m.maxPositionEmbeddings > 0) {
        const Count rotary = m.attentionType == AttentionType::Mla ? m.mla.qkRopeHeadDim
            : m.rotaryDim > 0                                      ? m.rotaryDim
                                                                   : m.headDim;
        const bool fourfold
            = m.mrope && s.engine == ServingEngine::Vllm && versionKey(s.engineVersion) >= versionKey("0.7.2");
        accumulate(total, storageBytes(dt, checkedMul(m.maxPositionEmbeddings, rotary, fourfold ? 4 : 1)));
    }
    if (expertBytes)
        *expertBytes = experts;
    return total;
}

SsmRankWidths ssmRankWidths(const SsmSpec& s, Count tp)
{
    if (s.numHeads % tp != 0)
        throw InputError("run.parallelism.tensor_parallel",
            "a divisor of model.ssm.num_heads (" + std::to_string(s.numHeads) + "), as the engines split the "
                + s.label() + " heads; got " + std::to_string(tp));
    // qwen3_next.py Qwen3NextGatedDeltaNet: num_k_heads // tp_size, no replication. Mamba-2's
    // extra_groups_for_head_shards: 0 when the groups divide over the ranks, else tp - groups (one group: tp).
    if (s.groups % tp != 0 && (s.deltaNet() || s.groups != 1))
        throw InputError("run.parallelism.tensor_parallel",
            "a divisor of model.ssm.groups (" + std::to_string(s.groups) + ")"
                + (s.deltaNet() ? ", as vLLM and SGLang split the Gated DeltaNet key heads"
                                : " or any size with one group, as vLLM and SGLang shard B and C")
                + "; got " + std::to_string(tp));
    const Count groups = s.groups % tp == 0 ? s.groups : tp;
    return { s.innerWidth() / tp, checkedMul(2, groups, s.stateSize) / tp, s.numHeads / tp, s.deltaNet() ? 2 : 1 };
}

SsmStateBytes ssmStateBytes(const ModelSpec& m, Count tp, DType conv, DType ssm)
{
    const SsmRankWidths w = ssmRankWidths(m.ssm, tp);
    return { storageBytes(conv, checkedMul(m.ssm.convKernel - 1, w.conv())),
        storageBytes(ssm, checkedMul(w.heads, m.ssm.headDim, m.ssm.stateSize)) };
}

Bytes kvBytesPerToken(const ModelSpec& m, Count tp, Count layers, DType kv)
{
    // vLLM CacheEngine.get_cache_block_size / SGLang get_cell_size_per_token: K and V of every
    // layer, KV heads per rank = max(1, kv_heads // tp); MLA: kv_lora_rank + qk_rope_head_dim, one copy.
    const Count width = m.attentionType == AttentionType::Mla ? m.mla.kvLoraRank + m.mla.qkRopeHeadDim
                                                              : 2 * std::max<Count>(1, m.numKvHeads / tp) * m.headDim;
    return storageBytes(kv, checkedMul(width, layers));
}

Bytes vllmActivationPeakBytes(
    const ModelSpec& m, const Serving& s, Count tp, const Stage& st, Count tokens, Count seqs, bool v1Sampler)
{
    const Count h = m.hiddenSize;
    const Bytes e = storageBytes(s.dtype, 1);
    Count perToken = 0;
    if (st.layers() > 0) {
        // Decoder layer (vllm/model_executor/models/llama.py, LlamaDecoderLayer and LlamaMLP.forward):
        // the layer input, the residual and the block output live beside the MLP's tensors;
        // LlamaMLP keeps `gate_up` [T, 2F/tp] referenced while act_fn's output [T, F/tp] feeds down_proj.
        const Count f = ceilDiv(m.ffnHiddenSize, tp);
        Count mlp = 0;
        if (m.denseLayers() > 0)
            mlp = m.gated() ? 3 * f + 3 * h : 2 * f + 2 * h; // non-gated: fc1 output and its activation (opt.py)
        if (m.moeLayers() > 0) {
            // vllm/model_executor/layers/fused_moe/fused_moe.py fused_experts: intermediate_cache1
            // [T, top_k, 2N], cache2 [T*top_k, N], cache3 [T, top_k, H], N = expert width / tp.
            const Count n = ceilDiv(m.expertWidth(), tp);
            mlp = std::max(mlp, m.moe.topK * (3 * n + h) + 3 * h);
        }
        // Attention block: the qkv output, the attention output and the residual stream.
        const Count q = ceilDiv(m.qWidth(), tp), kv = std::max<Count>(1, m.numKvHeads / tp) * m.headDim;
        // Qwen3-Next's gated attention: q_proj's output holds the query and its gate (qwen3_next.py).
        const Count qProj = m.attentionOutputGate ? 2 * q : q;
        const Count attn = m.attentionLayers() > 0 ? qProj + 2 * kv + q + 2 * h : 0;
        if (m.mlpLayers() == 0)
            mlp = 0;
        perToken = std::max(mlp, attn);
        if (m.ssm.enabled()) {
            // vllm/model_executor/layers/mamba/mamba_mixer2.py MambaMixer2.forward: projected_states [T, in_proj /
            // tp] stay referenced while the conv output over x, B, C [T, conv / tp], the scan's output [T, inner /
            // tp] and the gated norm's [T, inner / tp] are made, beside the layer input and the residual [T, H].
            // Gated DeltaNet (vllm/model_executor/layers/mamba/gdn/qwen_gdn_linear_attn.py) holds the same set for
            // Qwen3.5, whose split of the projections is views: projected qkvz and ba, the conv output over q, k, v,
            // core_attn_out and the gated norm's output. Qwen3-Next's interleaved layout also copies the projections
            // once (prepare_gdn_attention_core_inputs), which is not counted: in_proj x tokens x 2 B, about 0.2 % of
            // an 80 GB budget at 8192 tokens.
            const SsmRankWidths w = ssmRankWidths(m.ssm, tp);
            const Count mamba = w.inProj() + w.conv() + 2 * w.inner + 2 * h;
            // Falcon-H1 runs both mixers on one input: the attention block's tensors are alive beside it.
            perToken = std::max(perToken, m.ssm.parallel ? mamba + attn - 2 * h : mamba);
        }
    }
    Bytes layerPhase = checkedMul(checkedMul(perToken, tokens), e);
    Bytes samplerPhase = 0;
    if (st.holdsHead) {
        // vllm/worker/model_runner.py profile_run: SamplingParams(top_p=0.99, top_k=vocab-1), one
        // logit row per sequence. vllm/model_executor/layers/sampler.py (v0.4-v0.6) _apply_top_k_top_p
        // holds, per logit: the bf16 logits (2 B), their fp32 copy (4), logits_sort (4), logits_idx
        // int64 (8), top_k_mask bool (1), probs_sort (4), probs_sum (4), top_p_mask (1) and the
        // re-sorted logits (4) = 32 B. Its logits.sort() is larger while it runs: PyTorch's
        // aten/src/ATen/native/cuda/SortStable.cu launch_stable_sort_kernel sorts 128 rows or more
        // with segmented_sort_pairs (an int64 reverse_indices array, 8 B, and cub's
        // DeviceSegmentedRadixSort::SortPairs, whose temporary storage holds alternate key and value
        // buffers, 4 + 8 B): 2 + 4 + 4 + 8 + 8 + 12 = 38 B; fewer rows go through
        // segmented_sort_pairs_by_full_sort (two int2 index-and-segment arrays, 16 B, and the pair
        // sort's alternate fp32 key and int2 value buffers, 12 B): 2 + 4 + 4 + 8 + 16 + 12 = 46 B; a
        // single row sorts in place of its segment (below 32 B). The model's last hidden states
        // [T, H] are still referenced.
        const Count rows = std::min(seqs, tokens);
        // V1 (vllm/v1/worker/gpu_model_runner.py _dummy_sampler_run: "the sampler may skip top_k,
        // top_p, and logprobs"): vllm/v1/sample/sampler.py keeps the bf16 logits (2 B), their fp32
        // copy (4), the softmax probabilities (4) and the exponential noise q (4) = 14 B.
        const Count perLogit = v1Sampler ? 14 : rows >= 128 ? 38 : rows > 1 ? 46 : 32;
        samplerPhase = checkedAdd(
            checkedMul(checkedMul(rows, paddedVocab(m.vocabSize)), perLogit), checkedMul(checkedMul(tokens, h), e));
    }
    return std::max(layerPhase, samplerPhase);
}

DType kvDtype(const Serving& s)
{
    return s.kvCacheDtype.value_or(s.dtype);
}

long versionKey(const std::string& v)
{
    long parts[3] = { 0, 0, 0 };
    int i = 0;
    std::size_t p = 0;
    while (i < 3 && p < v.size() && std::isdigit(static_cast<unsigned char>(v[p]))) {
        long n = 0;
        while (p < v.size() && std::isdigit(static_cast<unsigned char>(v[p])) && n < 100000)
            n = n * 10 + (v[p++] - '0');
        parts[i++] = n;
        if (p < v.size() && v[p] == '.')
            ++p;
        else
            break;
    }
    return parts[0] * 1'000'000 + parts[1] * 1'000 + parts[2];
}

std::string gib(Bytes b, int decimals)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, static_cast<double>(b) / static_cast<double>(kGiB));
    return buf;
}

std::string mib(Bytes b)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(b) / static_cast<double>(kMiB));
    return buf;
}

} // namespace vramlab::detail
