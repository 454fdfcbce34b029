// SPDX-License-Identifier: MIT
#include "vramlab/parameter_tensors.h"

#include <algorithm>

namespace vramlab {

namespace {

struct Builder {
    std::vector<ParamTensor>& out;
    bool layerNormBias = true; ///< model.norm_bias: LayerNorm's bias vectors

    // Names are static text (no allocation: this runs on every slider move).
    void linear(std::string_view weight, std::string_view bias, ParamGroup group, std::string_view module, Count in,
        Count outDim, bool withBias, Count copies, Count active)
    {
        out.push_back({ weight, group, in, outDim, copies, active, true, module });
        if (withBias)
            out.push_back({ bias, group, 1, outDim, copies, active, false, module });
    }
    void vector(std::string_view name, ParamGroup group, Count n, Count copies)
    {
        out.push_back({ name, group, 1, n, copies, copies, false, {} });
    }
    void norm(std::string_view weight, std::string_view bias, NormKind kind, Count n, Count copies)
    {
        vector(weight, ParamGroup::Norm, n, copies);
        if (kind == NormKind::LayerNorm && layerNormBias)
            vector(bias, ParamGroup::Norm, n, copies);
    }
    struct MlpNames {
        std::string_view gate, gateBias, up, upBias, down, downBias;
    };
    void mlp(
        const MlpNames& n, ParamGroup group, const ModelSpec& m, Count width, bool withBias, Count copies, Count active)
    {
        const Count h = m.hiddenSize;
        if (m.gated())
            linear(n.gate, n.gateBias, group, "gate", h, width, withBias, copies, active);
        linear(n.up, n.upBias, group, "up", h, width, withBias, copies, active);
        linear(n.down, n.downBias, group, "down", width, h, withBias, copies, active);
    }
};

void attention(Builder& b, const ModelSpec& m)
{
    const Count h = m.hiddenSize, L = m.attentionLayers();
    if (m.attentionType == AttentionType::Mla) {
        const MlaSpec& a = m.mla;
        const Count qHead = a.qkNopeHeadDim + a.qkRopeHeadDim;
        if (a.qLoraRank > 0) {
            b.linear("layers.attn.q_a.weight", {}, ParamGroup::Attention, "q_a", h, a.qLoraRank, false, L, L);
            b.norm("layers.attn.q_a_norm.weight", {}, NormKind::RmsNorm, a.qLoraRank, L);
            b.linear("layers.attn.q_b.weight", {}, ParamGroup::Attention, "q_b", a.qLoraRank, m.numHeads * qHead, false,
                L, L);
        } else {
            b.linear("layers.attn.q.weight", {}, ParamGroup::Attention, "q", h, m.numHeads * qHead, false, L, L);
        }
        b.linear("layers.attn.kv_a.weight", {}, ParamGroup::Attention, "kv_a", h, a.kvLoraRank + a.qkRopeHeadDim, false,
            L, L);
        b.norm("layers.attn.kv_a_norm.weight", {}, NormKind::RmsNorm, a.kvLoraRank, L);
        b.linear("layers.attn.kv_b.weight", {}, ParamGroup::Attention, "kv_b", a.kvLoraRank,
            m.numHeads * (a.qkNopeHeadDim + a.vHeadDim), false, L, L);
        b.linear("layers.attn.o.weight", "layers.attn.o.bias", ParamGroup::Attention, "o", m.numHeads * a.vHeadDim, h,
            m.bias || m.attentionBias, L, L);
        return;
    }
    const bool qkvBias = m.bias || m.qkvBias || m.attentionBias;
    // Qwen3-Next's and Qwen3.5's q_proj yields the query and its output gate: Linear(hidden, heads x head_dim x 2).
    b.linear("layers.attn.q.weight", "layers.attn.q.bias", ParamGroup::Attention, "q", h,
        m.qWidth() * (m.attentionOutputGate ? 2 : 1), qkvBias, L, L);
    b.linear("layers.attn.k.weight", "layers.attn.k.bias", ParamGroup::Attention, "k", h, m.kvWidth(), qkvBias, L, L);
    b.linear("layers.attn.v.weight", "layers.attn.v.bias", ParamGroup::Attention, "v", h, m.kvWidth(), qkvBias, L, L);
    b.linear("layers.attn.o.weight", "layers.attn.o.bias", ParamGroup::Attention, "o", m.qWidth(), h,
        m.bias || m.attentionBias, L, L);
    // gpt-oss: self_attn.sinks = nn.Parameter(torch.empty(num_attention_heads)) (modeling_gpt_oss.py GptOssAttention).
    if (m.attentionSinks)
        b.vector("layers.attn.sinks", ParamGroup::Attention, m.numHeads, L);
    if (m.qkNorm) {
        // OLMo-2 normalizes q and k before splitting them into heads: Olmo2RMSNorm(heads x head_dim).
        b.norm("layers.attn.q_norm.weight", {}, NormKind::RmsNorm, m.qkNormFullWidth ? m.qWidth() : m.headDim, L);
        b.norm("layers.attn.k_norm.weight", {}, NormKind::RmsNorm, m.qkNormFullWidth ? m.kvWidth() : m.headDim, L);
    }
}

/// transformers models/mamba2/modeling_mamba2.py Mamba2Mixer.__init__ (NemotronHMamba2Mixer, FalconH1Mixer and
/// GraniteMoeHybridMambaLayer build the same): in_proj Linear(hidden, inner + conv width + heads, bias=use_bias),
/// conv1d Conv1d(conv width, conv width, kernel, groups=conv width, bias=use_conv_bias) whose weight is
/// [conv width, 1, kernel], dt_bias, A_log and D of one value per head, MambaRMSNormGated(inner) and
/// out_proj Linear(inner, hidden, bias=use_bias). Gated DeltaNet (modeling_qwen3_next.py Qwen3NextGatedDeltaNet;
/// Qwen3.5 splits the same in_proj rows into in_proj_qkv, in_proj_z, in_proj_b and in_proj_a): in_proj_qkvz
/// Linear(hidden, 2 key_dim + 2 value_dim) and in_proj_ba Linear(hidden, 2 value heads), both bias-free; conv1d over
/// q, k and v without a bias; dt_bias and A_log per value head, no D; RMSNormGated(head_v_dim), one weight shared by
/// the heads; out_proj Linear(value_dim, hidden, bias=False).
void ssm(Builder& b, const ModelSpec& m)
{
    const SsmSpec& s = m.ssm;
    const Count h = m.hiddenSize, L = s.layers;
    b.linear("ssm_layers.in_proj.weight", "ssm_layers.in_proj.bias", ParamGroup::Ssm, "in_proj", h, s.inProjWidth(),
        s.bias, L, L);
    b.out.push_back({ "ssm_layers.conv1d.weight", ParamGroup::Ssm, s.convWidth(), s.convKernel, L, L, false, {} });
    if (s.convBias)
        b.vector("ssm_layers.conv1d.bias", ParamGroup::Ssm, s.convWidth(), L);
    b.vector("ssm_layers.dt_bias", ParamGroup::Ssm, s.numHeads, L);
    b.vector("ssm_layers.A_log", ParamGroup::Ssm, s.numHeads, L);
    if (!s.deltaNet())
        b.vector("ssm_layers.D", ParamGroup::Ssm, s.numHeads, L);
    if (s.gatedNorm)
        b.norm("ssm_layers.norm.weight", {}, NormKind::RmsNorm, s.normWidth(), L);
    b.linear("ssm_layers.out_proj.weight", "ssm_layers.out_proj.bias", ParamGroup::Ssm, "out_proj", s.innerWidth(), h,
        s.bias, L, L);
}

} // namespace

std::vector<ParamTensor> parameterTensors(const ModelSpec& m)
{
    std::vector<ParamTensor> out;
    out.reserve(48); // the most a model has: one allocation per estimate
    Builder b { out, m.normBias };
    const Count h = m.hiddenSize, L = m.numLayers;

    out.push_back({ "embed.weight", ParamGroup::Embedding, m.vocabSize, h, 1, 1, false, "embed" });
    if (m.position == PositionKind::Learned)
        out.push_back({ "position.weight", ParamGroup::Position, m.maxPositionEmbeddings, h, 1, 1, false, {} });

    if (m.normAfterSublayers) { // OLMo-2: post_attention_layernorm and post_feedforward_layernorm only
        attention(b, m);
        b.norm("layers.attn_output_norm.weight", "layers.attn_output_norm.bias", m.norm, h, L);
        b.norm("layers.mlp_output_norm.weight", "layers.mlp_output_norm.bias", m.norm, h, L);
    } else {
        // Hybrid models norm each mixer's input, attention or Mamba-2 (one block holds one mixer in Nemotron-H and
        // Granite-4.0-H; Falcon-H1's Mamba-2 reads attention's norm), and each MLP's input.
        if (m.attentionLayers() > 0)
            b.norm("layers.input_norm.weight", "layers.input_norm.bias", m.norm, h, m.mixerNormLayers());
        else if (m.mixerNormLayers() > 0) // attention-free: the norms before the Mamba-2 mixers
            b.norm("ssm_layers.input_norm.weight", "ssm_layers.input_norm.bias", m.norm, h, m.mixerNormLayers());
        if (m.attentionLayers() > 0)
            attention(b, m);
    }
    if (m.ssm.enabled())
        ssm(b, m);
    if (!m.sharedAttentionNorm && !m.normAfterSublayers && m.mlpLayers() > 0) // lit_gpt/model.py@8641822 Block:
        b.norm("layers.post_attention_norm.weight", "layers.post_attention_norm.bias", m.norm, h,
            m.mlpLayers()); // no norm_2 when shared
    if (m.postNorms) {
        b.norm("layers.post_attention_out_norm.weight", "layers.post_attention_out_norm.bias", m.norm, h, L);
        b.norm("layers.post_mlp_norm.weight", "layers.post_mlp_norm.bias", m.norm, h, L);
    }

    if (m.denseLayers() > 0)
        b.mlp({ "layers.mlp.gate.weight", "layers.mlp.gate.bias", "layers.mlp.up.weight", "layers.mlp.up.bias",
                  "layers.mlp.down.weight", "layers.mlp.down.bias" },
            ParamGroup::Mlp, m, m.ffnHiddenSize, m.bias, m.denseLayers(), m.denseLayers());
    if (m.moe.enabled()) {
        const Count ml = m.moeLayers();
        b.linear("moe_layers.router.weight", {}, ParamGroup::Router, "router", h, m.moe.numExperts, false, ml, ml);
        if (m.moe.routerBias)
            b.vector("moe_layers.router.expert_bias", ParamGroup::Router, m.moe.numExperts, ml);
        // gpt-oss fuses gate and up into gate_up_proj [E, hidden, 2 x width] with a [E, 2 x width] bias: the same
        // elements as separate gate and up projections with their biases.
        b.mlp({ "moe_layers.experts.gate.weight", "moe_layers.experts.gate.bias", "moe_layers.experts.up.weight",
                  "moe_layers.experts.up.bias", "moe_layers.experts.down.weight", "moe_layers.experts.down.bias" },
            ParamGroup::Expert, m, m.expertWidth(), m.moe.expertBias, checkedMul(ml, m.moe.numExperts),
            checkedMul(ml, m.moe.topK));
        if (m.moe.sharedExperts > 0)
            b.mlp({ "moe_layers.shared_experts.gate.weight", {}, "moe_layers.shared_experts.up.weight", {},
                      "moe_layers.shared_experts.down.weight", {} },
                ParamGroup::SharedExpert, m, m.sharedExpertWidth(), false, checkedMul(ml, m.moe.sharedExperts),
                checkedMul(ml, m.moe.sharedExperts));
        // Qwen2-MoE scales the shared expert by sigmoid(shared_expert_gate(x)), a Linear(hidden, 1, bias=False)
        // per MoE layer (transformers models/qwen2_moe/modeling_qwen2_moe.py, Qwen2MoeSparseMoeBlock).
        if (m.moe.sharedExpertGate)
            b.linear("moe_layers.shared_expert_gate.weight", {}, ParamGroup::Router, "shared_expert_gate", h, 1, false,
                ml, ml);
    }

    b.norm("final_norm.weight", "final_norm.bias", m.norm, h, 1);
    if (!m.tiedEmbeddings)
        out.push_back({ "lm_head.weight", ParamGroup::Head, h, m.vocabSize, 1, 1, true, "lm_head" });
    if (m.vision.enabled()) {
        // Two towers, the same pre-LayerNorm encoder blocks: two LayerNorms, attention of 4 x D x D weights with
        // biases (SigLIP's q, k, v, out; Qwen's qkv 3D and proj), fc1 D x I and fc2 I x D with biases. SigLIP
        // (Gemma 3, vision_use_head false): a Conv2d patch embedding with bias, learned positions, the post
        // LayerNorm; then Gemma 3's projector, mm_input_projection_weight [vision hidden, text hidden] and an RMSNorm
        // of the vision width. Qwen3_5VisionModel (modeling_qwen3_5.py): patch_embed.proj Conv3d(channels, D, [T, P,
        // P]) with a bias, pos_embed Embedding(num_position_embeddings, D), and the merger's LayerNorm(D),
        // linear_fc1 Linear(D m^2, D m^2) and linear_fc2 Linear(D m^2, out_hidden_size) with biases; no deepstack
        // mergers. Llama 4's tower (modeling_llama4.py@4.57.1 Llama4VisionModel): a bias-free linear patch
        // embedding, a class embedding, (image/patch)^2 + 1 positions, LayerNorms before and after the encoder;
        // then the pixel-shuffle adapter's fc1 [projector_input_dim, intermediate] and fc2 [projector_output_dim^2]
        // and multi_modal_projector.linear_1 [hidden, vision_output_dim], all without bias.
        // Qwen2.5-VL's (modeling_qwen2_5_vl.py@4.57.1): a bias-free Conv3d patch embedding, no learned positions
        // (2D RoPE: buffers only), two weight-only Qwen2RMSNorms per block, qkv and proj with biases, a gated MLP
        // (gate_proj, up_proj: D x I, down_proj: I x D, all with biases), and Qwen2_5_VLPatchMerger: ln_q (an
        // RMSNorm of D) and mlp Linear(D m^2, D m^2), Linear(D m^2, out_hidden_size) with biases.
        // Kept out of the linear set: not LoRA targets, not tensor-parallel sharded, not quantized, frozen.
        const VisionSpec& v = m.vision;
        const Count vh = v.hiddenSize, vi = v.intermediateSize, vl = v.numLayers;
        const auto add = [&](std::string_view name, Count rows, Count cols, Count copies) {
            out.push_back({ name, ParamGroup::Vision, rows, cols, copies, copies, false, {} });
        };
        const Count patch = checkedMul(v.channels, v.patchSize, v.patchSize);
        const bool llama4 = v.kind == VisionKind::Llama4;
        const bool qwen25 = v.qwen25();
        add("vision.patch_embedding.weight", v.qwen() || qwen25 ? checkedMul(patch, v.temporalPatchSize) : patch, vh,
            1);
        if (llama4)
            add("vision.class_embedding", 1, vh, 1);
        else if (!qwen25)
            add("vision.patch_embedding.bias", 1, vh, 1);
        if (!qwen25)
            add("vision.position_embedding.weight",
                v.qwen()     ? v.numPositionEmbeddings
                    : llama4 ? checkedAdd(v.patches(), 1)
                             : v.patches(),
                vh, 1);
        // Two norms per block: LayerNorms with weight and bias, or Qwen2.5's weight-only RMSNorms.
        add("vision.layers.layer_norms", 1, vh, checkedMul(qwen25 ? 2 : 4, vl));
        add("vision.layers.attn.qkvo.weight", vh, vh, checkedMul(4, vl));
        add("vision.layers.attn.qkvo.bias", 1, vh, checkedMul(4, vl));
        const Count fc1 = qwen25 ? checkedMul(2, vl) : vl; // Qwen2.5: gate_proj and up_proj
        add("vision.layers.mlp.fc1.weight", vh, vi, fc1);
        add("vision.layers.mlp.fc1.bias", 1, vi, fc1);
        add("vision.layers.mlp.fc2.weight", vi, vh, vl);
        add("vision.layers.mlp.fc2.bias", 1, vh, vl);
        if (v.qwen() || qwen25) {
            const Count merged = checkedMul(vh, v.spatialMergeSize, v.spatialMergeSize);
            add("vision.merger.norm", 1, vh, qwen25 ? 1 : 2);
            add("vision.merger.fc1.weight", merged, merged, 1);
            add("vision.merger.fc1.bias", 1, merged, 1);
            add("vision.merger.fc2.weight", merged, v.outHiddenSize, 1);
            add("vision.merger.fc2.bias", 1, v.outHiddenSize, 1);
        } else if (llama4) {
            add("vision.pre_and_post_layernorm", 1, vh, 4);
            add("vision.adapter.fc1.weight", vi, v.projectorInputDim, 1);
            add("vision.adapter.fc2.weight", v.outHiddenSize, v.outHiddenSize, 1);
            add("vision.projector.weight", v.outHiddenSize, h, 1);
        } else {
            add("vision.post_layernorm", 1, vh, 2);
            add("vision.projector.weight", vh, h, 1);
            add("vision.projector.norm.weight", 1, vh, 1);
        }
    }
    if (m.lmHeadBias) // nn.Linear(hidden, vocab, bias=True): its own tensor, tied weight or not
        out.push_back({ "lm_head.bias", ParamGroup::Head, 1, m.vocabSize, 1, 1, false, {} });
    return out;
}

ParameterCount countParameters(const ModelSpec& m)
{
    return countParameters(parameterTensors(m), m);
}

ParameterCount countParameters(const std::vector<ParamTensor>& tensors, const ModelSpec& m)
{
    ParameterCount c;
    struct LayerPart {
        Count all = 0, linear = 0; ///< elements of one layer, and of its matrix-multiply weights
    } dense, moe, common;
    for (const ParamTensor& t : tensors) {
        const Count total = t.total();
        c.total = checkedAdd(c.total, total);
        if (t.name.starts_with("layers.") || t.name.starts_with("moe_layers.") || t.name.starts_with("ssm_layers."))
            c.largestLayerTensor = std::max(c.largestLayerTensor, t.elements());
        c.active = checkedAdd(c.active, checkedMul(t.elements(), t.activeCopies));
        if (t.group == ParamGroup::Embedding || t.group == ParamGroup::Position)
            c.embedding += total;
        if (t.group == ParamGroup::Head)
            c.head += total;
        if (t.group == ParamGroup::Vision)
            c.vision += total;
        if (t.linear)
            c.matmulActive = checkedAdd(c.matmulActive, checkedMul(t.elements(), t.activeCopies));
        // Per-layer sizes, for the largest layer a ZeRO-3 rank gathers at once.
        const Count perLayer = t.name.starts_with("moe_layers.") ? t.total() / std::max<Count>(1, m.moeLayers())
            : t.name.starts_with("layers.") || t.name.starts_with("ssm_layers.") ? t.elements()
                                                                                 : 0;
        LayerPart& part = t.name.starts_with("layers.mlp") ? dense : t.name.starts_with("moe_layers.") ? moe : common;
        part.all += perLayer;
        if (t.linear)
            part.linear += perLayer;
    }
    if (m.tiedEmbeddings) // the tied head still multiplies every token
        c.matmulActive = checkedAdd(c.matmulActive, checkedMul(m.hiddenSize, m.vocabSize));
    const LayerPart none;
    const LayerPart& largest = moe.all > (m.denseLayers() > 0 ? dense.all : 0) ? moe
        : m.denseLayers() > 0                                                  ? dense
                                                                               : none;
    c.perLayerMax = common.all + largest.all;
    c.perLayerMaxLinear = common.linear + largest.linear;
    return c;
}

} // namespace vramlab
