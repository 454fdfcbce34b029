// SPDX-License-Identifier: MIT
#include "vramlab/parameter_tensors.h"

#include <algorithm>

namespace vramlab {

namespace {

struct Builder {
    std::vector<ParamTensor>& out;

    void linear(const std::string& name, ParamGroup group, const std::string& module, Count in, Count outDim,
                bool withBias, Count copies, Count active)
    {
        out.push_back({name + ".weight", group, in, outDim, copies, active, true, module});
        if (withBias)
            out.push_back({name + ".bias", group, 1, outDim, copies, active, false, module});
    }
    void vector(const std::string& name, ParamGroup group, Count n, Count copies)
    {
        out.push_back({name, group, 1, n, copies, copies, false, {}});
    }
    void norm(const std::string& name, NormKind kind, Count n, Count copies)
    {
        vector(name + ".weight", ParamGroup::Norm, n, copies);
        if (kind == NormKind::LayerNorm)
            vector(name + ".bias", ParamGroup::Norm, n, copies);
    }
    void mlp(const std::string& prefix, ParamGroup group, const ModelSpec& m, Count width, bool withBias, Count copies,
             Count active)
    {
        const Count h = m.hiddenSize;
        if (m.gated())
            linear(prefix + ".gate", group, "gate", h, width, withBias, copies, active);
        linear(prefix + ".up", group, "up", h, width, withBias, copies, active);
        linear(prefix + ".down", group, "down", width, h, withBias, copies, active);
    }
};

void attention(Builder& b, const ModelSpec& m)
{
    const Count h = m.hiddenSize, L = m.numLayers;
    if (m.attentionType == AttentionType::Mla) {
        const MlaSpec& a = m.mla;
        const Count qHead = a.qkNopeHeadDim + a.qkRopeHeadDim;
        if (a.qLoraRank > 0) {
            b.linear("layers.attn.q_a", ParamGroup::Attention, "q_a", h, a.qLoraRank, false, L, L);
            b.norm("layers.attn.q_a_norm", NormKind::RmsNorm, a.qLoraRank, L);
            b.linear("layers.attn.q_b", ParamGroup::Attention, "q_b", a.qLoraRank, m.numHeads * qHead, false, L, L);
        } else {
            b.linear("layers.attn.q", ParamGroup::Attention, "q", h, m.numHeads * qHead, false, L, L);
        }
        b.linear("layers.attn.kv_a", ParamGroup::Attention, "kv_a", h, a.kvLoraRank + a.qkRopeHeadDim, false, L, L);
        b.norm("layers.attn.kv_a_norm", NormKind::RmsNorm, a.kvLoraRank, L);
        b.linear("layers.attn.kv_b", ParamGroup::Attention, "kv_b", a.kvLoraRank,
                 m.numHeads * (a.qkNopeHeadDim + a.vHeadDim), false, L, L);
        b.linear("layers.attn.o", ParamGroup::Attention, "o", m.numHeads * a.vHeadDim, h, m.bias, L, L);
        return;
    }
    const bool qkvBias = m.bias || m.qkvBias;
    b.linear("layers.attn.q", ParamGroup::Attention, "q", h, m.qWidth(), qkvBias, L, L);
    b.linear("layers.attn.k", ParamGroup::Attention, "k", h, m.kvWidth(), qkvBias, L, L);
    b.linear("layers.attn.v", ParamGroup::Attention, "v", h, m.kvWidth(), qkvBias, L, L);
    b.linear("layers.attn.o", ParamGroup::Attention, "o", m.qWidth(), h, m.bias, L, L);
    if (m.qkNorm) {
        b.norm("layers.attn.q_norm", NormKind::RmsNorm, m.headDim, L);
        b.norm("layers.attn.k_norm", NormKind::RmsNorm, m.headDim, L);
    }
}

} // namespace

std::vector<ParamTensor> parameterTensors(const ModelSpec& m)
{
    std::vector<ParamTensor> out;
    Builder b{out};
    const Count h = m.hiddenSize, L = m.numLayers;

    out.push_back({"embed.weight", ParamGroup::Embedding, m.vocabSize, h, 1, 1, false, "embed"});
    if (m.position == PositionKind::Learned)
        out.push_back({"position.weight", ParamGroup::Position, m.maxPositionEmbeddings, h, 1, 1, false, {}});

    b.norm("layers.input_norm", m.norm, h, L);
    attention(b, m);
    b.norm("layers.post_attention_norm", m.norm, h, L);
    if (m.postNorms) {
        b.norm("layers.post_attention_out_norm", m.norm, h, L);
        b.norm("layers.post_mlp_norm", m.norm, h, L);
    }

    if (m.denseLayers() > 0)
        b.mlp("layers.mlp", ParamGroup::Mlp, m, m.ffnHiddenSize, m.bias, m.denseLayers(), m.denseLayers());
    if (m.moe.enabled()) {
        const Count ml = m.moeLayers();
        b.linear("moe_layers.router", ParamGroup::Router, "router", h, m.moe.numExperts, false, ml, ml);
        if (m.moe.routerBias)
            b.vector("moe_layers.router.expert_bias", ParamGroup::Router, m.moe.numExperts, ml);
        b.mlp("moe_layers.experts", ParamGroup::Expert, m, m.expertWidth(), false, checkedMul(ml, m.moe.numExperts),
              checkedMul(ml, m.moe.topK));
        if (m.moe.sharedExperts > 0)
            b.mlp("moe_layers.shared_experts", ParamGroup::SharedExpert, m, m.expertWidth(), false,
                  checkedMul(ml, m.moe.sharedExperts), checkedMul(ml, m.moe.sharedExperts));
    }

    b.norm("final_norm", m.norm, h, 1);
    if (!m.tiedEmbeddings)
        out.push_back({"lm_head.weight", ParamGroup::Head, h, m.vocabSize, 1, 1, true, "lm_head"});
    return out;
}

ParameterCount countParameters(const ModelSpec& m)
{
    ParameterCount c;
    Count denseLayer = 0, moeLayer = 0, commonLayer = 0;
    for (const ParamTensor& t : parameterTensors(m)) {
        const Count total = t.total();
        c.total = checkedAdd(c.total, total);
        c.active = checkedAdd(c.active, checkedMul(t.elements(), t.activeCopies));
        if (t.group == ParamGroup::Embedding || t.group == ParamGroup::Position)
            c.embedding += total;
        if (t.group == ParamGroup::Head)
            c.head += total;
        if (t.linear)
            c.matmulActive = checkedAdd(c.matmulActive, checkedMul(t.elements(), t.activeCopies));
        // Per-layer sizes, for the largest layer a ZeRO-3 rank gathers at once.
        if (t.name.rfind("layers.mlp", 0) == 0)
            denseLayer += t.elements();
        else if (t.name.rfind("moe_layers.", 0) == 0)
            moeLayer += t.total() / std::max<Count>(1, m.moeLayers());
        else if (t.name.rfind("layers.", 0) == 0)
            commonLayer += t.elements();
    }
    if (m.tiedEmbeddings) // the tied head still multiplies every token
        c.matmulActive = checkedAdd(c.matmulActive, checkedMul(m.hiddenSize, m.vocabSize));
    c.perLayerMax = commonLayer + std::max(m.denseLayers() > 0 ? denseLayer : 0, moeLayer);
    return c;
}

} // namespace vramlab
