// SPDX-License-Identifier: MIT
#include "vramlab/presets.h"

namespace vramlab {

namespace {

ModelSpec gpt2Style(const char* name, Count hidden, Count layers, Count heads, Count ffn, Count ctx)
{
    ModelSpec m;
    m.name = name;
    m.vocabSize = 50257;
    m.hiddenSize = hidden;
    m.numLayers = layers;
    m.numHeads = m.numKvHeads = heads;
    m.headDim = hidden / heads;
    m.ffnHiddenSize = ffn;
    m.mlp = MlpKind::Gelu;
    m.norm = NormKind::LayerNorm;
    m.position = PositionKind::Learned;
    m.maxPositionEmbeddings = ctx;
    m.bias = true;
    m.tiedEmbeddings = true;
    m.dropout = 0.1;
    return m;
}

ModelSpec llamaStyle(
    const char* name, Count vocab, Count hidden, Count layers, Count heads, Count kvHeads, Count ffn, Count ctx)
{
    ModelSpec m;
    m.name = name;
    m.vocabSize = vocab;
    m.hiddenSize = hidden;
    m.numLayers = layers;
    m.numHeads = heads;
    m.numKvHeads = kvHeads;
    m.headDim = hidden / heads;
    m.ffnHiddenSize = ffn;
    m.maxPositionEmbeddings = ctx;
    return m;
}

std::vector<Preset> build()
{
    std::vector<Preset> p;
    auto add = [&](const char* key, ModelSpec m, Count published, bool exact, const char* source) {
        m.preset = key;
        p.push_back({ key, std::move(m), published, exact, source });
    };

    add("gpt2", gpt2Style("GPT-2 small (124M)", 768, 12, 12, 3072, 1024), 124439808, true,
        "openai-community/gpt2 config.json; 124,439,808 parameters (HF num_parameters)");
    add("gpt2-xl", gpt2Style("GPT-2 XL (1.5B)", 1600, 48, 25, 6400, 1024), 1557611200, true,
        "openai-community/gpt2-xl config.json; 1,557,611,200 parameters (HF num_parameters)");
    add("gpt3-175b", gpt2Style("GPT-3 175B", 12288, 96, 96, 49152, 2048), 175000000000, false,
        "Brown et al. 2020, Table 2.1: n_layers 96, d_model 12288, n_heads 96, context 2048; \"175.0B\"");

    add("llama-2-7b", llamaStyle("Llama 2 7B", 32000, 4096, 32, 32, 32, 11008, 4096), 6738415616, true,
        "meta-llama/Llama-2-7b-hf config.json; 6,738,415,616 parameters");
    add("llama-2-13b", llamaStyle("Llama 2 13B", 32000, 5120, 40, 40, 40, 13824, 4096), 13015864320, true,
        "meta-llama/Llama-2-13b-hf config.json; 13,015,864,320 parameters");
    add("llama-2-70b", llamaStyle("Llama 2 70B", 32000, 8192, 80, 64, 8, 28672, 4096), 68976648192, true,
        "meta-llama/Llama-2-70b-hf config.json; 68,976,648,192 parameters");
    add("llama-3-8b", llamaStyle("Llama 3 8B", 128256, 4096, 32, 32, 8, 14336, 8192), 8030261248, true,
        "meta-llama/Meta-Llama-3-8B config.json; 8,030,261,248 parameters");
    add("llama-3-70b", llamaStyle("Llama 3 70B", 128256, 8192, 80, 64, 8, 28672, 8192), 70553706496, true,
        "meta-llama/Meta-Llama-3-70B config.json; 70,553,706,496 parameters");
    add("llama-3.1-405b", llamaStyle("Llama 3.1 405B", 128256, 16384, 126, 128, 8, 53248, 131072), 405853388800, true,
        "meta-llama/Llama-3.1-405B config.json; 405,853,388,800 parameters");

    ModelSpec mistral = llamaStyle("Mistral 7B v0.1", 32000, 4096, 32, 32, 8, 14336, 32768);
    mistral.slidingWindow = 4096;
    add("mistral-7b", mistral, 7241732096, true, "mistralai/Mistral-7B-v0.1 config.json; 7,241,732,096 parameters");

    ModelSpec mixtral = llamaStyle("Mixtral 8x7B", 32000, 4096, 32, 32, 8, 14336, 32768);
    mixtral.moe = { 8, 2, 0, 14336, 0, false };
    add("mixtral-8x7b", mixtral, 46702792704, true,
        "mistralai/Mixtral-8x7B-v0.1 config.json; 46,702,792,704 parameters (12.9B active)");

    ModelSpec gemma = llamaStyle("Gemma 3 12B (text)", 262208, 3840, 48, 16, 8, 15360, 131072);
    gemma.headDim = 256;
    gemma.mlp = MlpKind::GeGlu;
    gemma.qkNorm = true;
    gemma.postNorms = true;
    gemma.tiedEmbeddings = true;
    gemma.slidingWindow = 1024;
    gemma.globalLayerInterval = 6; // 5 local : 1 global -> 40 local + 8 global
    add("gemma-3-12b", gemma, 11766034176, true,
        "google/gemma-3-12b-pt text_config (Gemma3ForCausalLM): 11,766,034,176 parameters; the 12.2B "
        "checkpoint adds the SigLIP vision tower. The seed article calls these shapes \"Gemma 4 12B\", ~11.6B");

    ModelSpec qwen = llamaStyle("Qwen2.5 7B", 152064, 3584, 28, 28, 4, 18944, 131072);
    qwen.qkvBias = true;
    add("qwen2.5-7b", qwen, 7615616512, true, "Qwen/Qwen2.5-7B config.json; 7,615,616,512 parameters");

    add("phi-3-mini", llamaStyle("Phi-3 mini 4k (3.8B)", 32064, 3072, 32, 32, 32, 8192, 4096), 3821079552, true,
        "microsoft/Phi-3-mini-4k-instruct config.json; 3,821,079,552 parameters");

    ModelSpec ds = llamaStyle("DeepSeek-V3 (671B MoE)", 129280, 7168, 61, 128, 128, 18432, 163840);
    ds.attentionType = AttentionType::Mla;
    ds.mla = { 1536, 512, 128, 64, 128 };
    ds.headDim = 192; // qk_nope + qk_rope
    ds.moe = { 256, 8, 1, 2048, 3, true };
    add("deepseek-v3", ds, 671026419200, true,
        "deepseek-ai/DeepSeek-V3 config.json, main model without the 14B MTP module: 671,026,419,200 parameters (37B "
        "active)");
    return p;
}

} // namespace

const std::vector<Preset>& presets()
{
    static const std::vector<Preset> all = build();
    return all;
}

std::optional<Preset> findPreset(std::string_view key)
{
    for (const Preset& p : presets())
        if (p.key == key)
            return p;
    return std::nullopt;
}

} // namespace vramlab
