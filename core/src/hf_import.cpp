// SPDX-License-Identifier: MIT
#include "vramlab/hf_import.h"

#include "json_reader.h"
#include "vramlab/errors.h"

#include <algorithm>
#include <set>

namespace vramlab {

using detail::JsonObjectReader;
using nlohmann::json;

namespace {

/// Keys that change nothing VRAM Lab computes (numerics, tokens, training flags): read silently.
const std::set<std::string> kIrrelevant = {
    "architectures", "model_type", "torch_dtype", "dtype", "transformers_version", "bos_token_id", "eos_token_id",
    "pad_token_id", "rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon", "rope_theta", "rope_scaling",
    "initializer_range", "use_cache", "attention_dropout", "hidden_act", "hidden_activation", "pretraining_tp",
    "_name_or_path", "auto_map", "quantization_config", "final_logit_softcapping", "attn_logit_softcapping",
    "query_pre_attn_scalar", "rope_local_base_freq", "cache_implementation", "output_router_logits",
    "router_aux_loss_coef", "router_jitter_noise", "use_sliding_window", "max_window_layers", "embd_pdrop",
    "original_max_position_embeddings", "partial_rotary_factor", "resid_pdrop", "attn_pdrop", "summary_activation",
    "summary_first_dropout", "summary_proj_to_labels", "summary_type", "summary_use_proj", "task_specific_params",
    "scale_attn_weights", "scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn", "n_ctx", "activation_function",
    "aux_loss_alpha", "ep_size", "moe_layer_freq", "n_group", "norm_topk_prob", "num_nextn_predict_layers",
    "routed_scaling_factor", "scoring_func", "seq_aux", "topk_group", "topk_method", "rope_interleave", "sliding_window_pattern",
    "layer_types", "attn_implementation", "tie_word_embeddings", "head_dim", "attention_bias", "mlp_bias",
    "num_key_value_heads", "sliding_window", "max_position_embeddings", "vocab_size", "hidden_size",
    "num_hidden_layers", "num_attention_heads", "intermediate_size", "num_local_experts", "num_experts_per_tok",
    "n_embd", "n_layer", "n_head", "n_inner", "n_positions", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
    "qk_rope_head_dim", "v_head_dim", "n_routed_experts", "n_shared_experts", "moe_intermediate_size",
    "first_k_dense_replace", "num_experts", "shared_expert_intermediate_size", "decoder_sparse_step",
    "text_config", "vision_config", "mm_tokens_per_image", "boi_token_index", "eoi_token_index", "image_token_index",
    "bos_token_index", "eos_token_index", "image_token_id", "vision_feature_layer", "projector_hidden_act",
};

Count req(JsonObjectReader& r, const std::string& key, const std::string& family)
{
    if (!r.has(key))
        throw InputError(key, "missing: a " + family + " config.json names it");
    return *r.integer(key, 1, 1'000'000'000);
}

} // namespace

HfImport importHfConfig(const json& root)
{
    const json* cfgp = &root;
    if (!root.is_object())
        throw InputError("(document)", "expected a JSON object (a Hugging Face config.json)");
    if (root.contains("text_config") && root.at("text_config").is_object())
        cfgp = &root.at("text_config"); // multimodal (Gemma 3): the language model's config
    const json& cfg = *cfgp;
    JsonObjectReader r(cfg, "");
    HfImport out;
    // Read through the checked reader: a wrong type is an InputError, not nlohmann's type_error
    // (the fuzzer found `"_name_or_path": [...]` crashing json::value()).
    JsonObjectReader top(root, "");
    std::string type = r.string("model_type").value_or(cfgp == &root ? "" : top.string("model_type").value_or(""));
    if (type.empty())
        throw InputError("model_type", "missing: expected llama, mistral, mixtral, qwen2, gemma, gemma2, gemma3, gpt2, phi3 or deepseek_v3");
    out.modelType = type;
    ModelSpec& m = out.model;
    m.name = top.string("_name_or_path").value_or(type);

    static const std::set<std::string> llamaLike = {"llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "gemma", "gemma2",
                                                   "gemma3", "gemma3_text", "phi3", "deepseek_v3", "qwen3"};
    if (type == "gpt2") {
        m.vocabSize = req(r, "vocab_size", type);
        m.hiddenSize = req(r, "n_embd", type);
        m.numLayers = req(r, "n_layer", type);
        m.numHeads = m.numKvHeads = req(r, "n_head", type);
        m.headDim = m.hiddenSize / m.numHeads;
        m.ffnHiddenSize = r.has("n_inner") ? *r.integer("n_inner", 1, 1'000'000'000) : 4 * m.hiddenSize;
        m.maxPositionEmbeddings = req(r, "n_positions", type);
        m.mlp = MlpKind::Gelu;
        m.norm = NormKind::LayerNorm;
        m.position = PositionKind::Learned;
        m.bias = true;
        m.tiedEmbeddings = r.boolean("tie_word_embeddings").value_or(true);
        m.dropout = r.number("resid_pdrop", 0, 1, true).value_or(0.1);
    } else if (llamaLike.count(type)) {
        m.vocabSize = req(r, "vocab_size", type);
        m.hiddenSize = req(r, "hidden_size", type);
        m.numLayers = req(r, "num_hidden_layers", type);
        m.numHeads = req(r, "num_attention_heads", type);
        m.numKvHeads = r.integer("num_key_value_heads", 1, 1'000'000).value_or(m.numHeads);
        m.headDim = r.integer("head_dim", 1, 100'000).value_or(m.hiddenSize / m.numHeads);
        m.ffnHiddenSize = req(r, "intermediate_size", type);
        m.maxPositionEmbeddings = r.integer("max_position_embeddings", 1, 1'000'000'000).value_or(0);
        const bool gemma = type.rfind("gemma", 0) == 0;
        m.tiedEmbeddings = r.boolean("tie_word_embeddings").value_or(gemma);
        m.bias = r.boolean("attention_bias").value_or(false) && r.boolean("mlp_bias").value_or(false);
        m.qkvBias = type == "qwen2" || type == "qwen2_moe" || (!m.bias && r.boolean("attention_bias").value_or(false));
        if (gemma)
            m.mlp = MlpKind::GeGlu;
        if (type == "gemma2" || type == "gemma3" || type == "gemma3_text")
            m.postNorms = true;
        if (type == "gemma3" || type == "gemma3_text" || type == "qwen3")
            m.qkNorm = true;
        const bool slidingUsed = type == "mistral" || type == "gemma2" || type == "gemma3" || type == "gemma3_text" ||
                                 r.boolean("use_sliding_window").value_or(false);
        if (slidingUsed && r.has("sliding_window") && cfg.at("sliding_window").is_number())
            m.slidingWindow = *r.integer("sliding_window", 0, 1'000'000'000);
        if (m.slidingWindow > 0) {
            if (type == "gemma2")
                m.globalLayerInterval = 2; // alternating local and global
            if (type == "gemma3" || type == "gemma3_text")
                m.globalLayerInterval = r.integer("sliding_window_pattern", 1, 1'000).value_or(6);
            if (r.has("layer_types") && cfg.at("layer_types").is_array()) {
                // Explicit per-layer kinds: take the period of the first full_attention layer.
                const json& lt = cfg.at("layer_types");
                for (size_t i = 0; i < lt.size(); ++i)
                    if (lt[i] == "full_attention") {
                        m.globalLayerInterval = static_cast<Count>(i + 1);
                        break;
                    }
            }
        }
        if (type == "mixtral") {
            m.moe.numExperts = req(r, "num_local_experts", type);
            m.moe.topK = req(r, "num_experts_per_tok", type);
            m.moe.expertFfnHiddenSize = m.ffnHiddenSize;
        }
        if (type == "deepseek_v3") {
            m.attentionType = AttentionType::Mla;
            m.mla.qLoraRank = r.integer("q_lora_rank", 0, 1'000'000).value_or(0);
            m.mla.kvLoraRank = req(r, "kv_lora_rank", type);
            m.mla.qkNopeHeadDim = req(r, "qk_nope_head_dim", type);
            m.mla.qkRopeHeadDim = req(r, "qk_rope_head_dim", type);
            m.mla.vHeadDim = req(r, "v_head_dim", type);
            m.headDim = m.mla.qkNopeHeadDim + m.mla.qkRopeHeadDim;
            m.moe.numExperts = req(r, "n_routed_experts", type);
            m.moe.topK = req(r, "num_experts_per_tok", type);
            m.moe.sharedExperts = r.integer("n_shared_experts", 0, 1'000).value_or(0);
            m.moe.expertFfnHiddenSize = req(r, "moe_intermediate_size", type);
            m.moe.firstDenseLayers = r.integer("first_k_dense_replace", 0, 1'000'000).value_or(0);
            m.moe.routerBias = r.string("topk_method").value_or("") == "noaux_tc";
        }
    } else {
        throw InputError("model_type", "expected llama, mistral, mixtral, qwen2, gemma, gemma2, gemma3, gpt2, phi3 or deepseek_v3, got \"" + type + "\"");
    }
    for (auto it = cfg.begin(); it != cfg.end(); ++it)
        if (!kIrrelevant.count(it.key()) && it.key().rfind("use_", 0) != 0 && it.key().rfind("output_", 0) != 0)
            out.warnings.push_back(it.key() + ": unknown key, ignored");
    if (m.numHeads > 0 && m.numKvHeads > 0 && m.numHeads % m.numKvHeads != 0)
        throw InputError("num_key_value_heads", "expected a divisor of num_attention_heads (" + std::to_string(m.numHeads) + ")");
    return out;
}

Scenario scenarioFromHf(const HfImport& imported, const std::string& name)
{
    Scenario sc;
    sc.model = imported.model;
    sc.name = name;
    const Count maxPos = imported.model.maxPositionEmbeddings;
    sc.run.sequenceLength = maxPos > 0 ? std::min<Count>(4096, maxPos) : 4096;
    sc.run.inference.contextLength = sc.run.sequenceLength;
    sc.warnings = imported.warnings;
    return sc;
}

} // namespace vramlab
