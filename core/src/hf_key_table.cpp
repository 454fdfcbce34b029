// SPDX-License-Identifier: MIT
// Which config.json keys the Hugging Face importer models, which provably change nothing,
// and which it accepts only at a neutral value. A key in none of these lists is refused:
// a calculator that silently drops a key it does not understand is confidently wrong
// (issue 19: Qwen1.5-MoE-A2.7B imported as 1.86B parameters instead of 14.3B).
// Rules read from transformers' src/transformers/models/<family>/modeling_<family>.py and
// configuration_<family>.py (v4.51 - v4.57).
#include "vramlab/hf_key_table.h"

namespace vramlab {

namespace {

using nlohmann::json;
constexpr HfKeyUse M = HfKeyUse::Modelled, X = HfKeyUse::NoEffect, N = HfKeyUse::NeutralOnly;

constexpr HfKeyRule rule(std::string_view key, HfKeyUse use, std::string_view why, HfNeutralTest neutral = nullptr,
    std::string_view neutralText = {})
{
    return { key, use, why, neutral, neutralText };
}

bool isFalse(const json& v, const json&)
{
    return v.is_boolean() && !v.get<bool>();
}
bool isNull(const json& v, const json&)
{
    return v.is_null();
}
bool isZero(const json& v, const json&)
{
    return v.is_number() && v.get<double>() == 0.0;
}
bool isOne(const json& v, const json&)
{
    return v.is_number() && v.get<double>() == 1.0;
}
bool sameAsResidDropout(const json& v, const json& c)
{
    return v.is_number() && c.contains("resid_pdrop") && c.at("resid_pdrop").is_number()
        && v.get<double>() == c.at("resid_pdrop").get<double>();
}
bool sameAsResidualDropout(const json& v, const json& c)
{
    const double resid = c.contains("residual_dropout") && c.at("residual_dropout").is_number()
        ? c.at("residual_dropout").get<double>()
        : 0.0;
    return v.is_number() && v.get<double>() == resid;
}
bool allFullAttention(const json& v, const json&)
{
    if (!v.is_array())
        return v.is_null();
    for (const json& t : v)
        if (t != "full_attention")
            return false;
    return true;
}

// ---- Shared by every family --------------------------------------------------------------
constexpr HfKeyRule kCommon[] = {
    rule("model_type", M, "picks the family (this table)"),
    rule("architectures", M,
        "must name a causal-LM class (…ForCausalLM, …LMHeadModel, …ForConditionalGeneration): "
        "a classification or reward head has no LM head, and different memory"),
    rule("vocab_size", M, "embedding rows, and LM-head rows when untied"),
    rule("tie_word_embeddings", M, "tied: the LM head is the embedding, no second vocab x hidden matrix"),
    rule("_name_or_path", X, "display name only"),
    rule("transformers_version", X, "the library version that wrote the file"),
    rule("torch_dtype", X,
        "the checkpoint's storage dtype; the scenario's run.precision says the dtype trained or served"),
    rule("dtype", X, "transformers 5 spelling of torch_dtype"),
    rule("bos_token_id", X, "tokenizer id"),
    rule("eos_token_id", X, "tokenizer id"),
    rule("pad_token_id", X, "tokenizer id"),
    rule("initializer_range", X, "standard deviation of the random init; no shape"),
    rule("use_cache", X, "a generation default; the scenario's mode decides whether a KV cache exists"),
    rule("auto_map", X,
        "names the repository's own Python classes (trust_remote_code); transformers loads its built-in class of "
        "the model_type unless trust_remote_code=True, and the same checkpoint tensors either way: the import "
        "warns that remote code may keep other activations"),
};

// ---- Llama-style decoders (RMSNorm, RoPE, gated MLP) ---------------------------------------
constexpr HfKeyRule kDecoder[] = {
    rule("hidden_size", M, "width of every projection and norm"),
    rule("num_hidden_layers", M, "number of decoder layers"),
    rule("num_attention_heads", M, "query heads (q and o width = heads x head_dim)"),
    rule("num_key_value_heads", M, "key/value heads (GQA): k and v width, KV cache"),
    rule("intermediate_size", M, "MLP width (dense layers)"),
    rule("max_position_embeddings", M, "the imported scenario's sequence length is min(4096, this)"),
    rule("rms_norm_eps", X, "epsilon inside RMSNorm"),
    rule("rope_theta", X, "RoPE base frequency: buffers only, same tensor shapes"),
    rule("rope_scaling", X,
        "RoPE frequency scaling (linear, dynamic, yarn, llama3, longrope): buffers only, same shapes"),
    rule("rope_parameters", X, "transformers 5 spelling of rope_theta and rope_scaling"),
    rule("hidden_act", X, "the element-wise activation inside the gated MLP: same saved tensor shapes"),
    rule("attention_dropout", N, "above 0, training keeps a dropout mask per attention score (not modelled)", isZero,
        "0"),
};

// Qwen2/Qwen3 (and their MoE) configs always carry the sliding-window knobs, switched off.
constexpr HfKeyRule kQwenWindow[] = {
    rule("use_sliding_window", N,
        "true turns on sliding-window attention in layers from max_window_layers on, "
        "a per-layer mix VRAM Lab does not model",
        isFalse, "false"),
    rule("sliding_window", X, "read only when use_sliding_window is true (refused above)"),
    rule("max_window_layers", X, "read only when use_sliding_window is true (refused above)"),
    rule("layer_types", N, "a sliding_attention layer is a window the importer does not model for Qwen",
        allFullAttention, "every entry \"full_attention\""),
    rule("use_mrope", N, "multimodal RoPE (Qwen2-VL); a text-only Qwen2 has it false", isFalse, "false"),
};

// Routed experts as in Qwen2-MoE and Qwen3-MoE (modeling_qwen2_moe.py, modeling_qwen3_moe.py:
// layer i is sparse when i is not in mlp_only_layers and (i + 1) % decoder_sparse_step == 0).
constexpr HfKeyRule kQwenExperts[] = {
    rule("num_experts", M, "routed experts per MoE layer (router output width)"),
    rule("num_experts_per_tok", M, "experts each token goes through (active parameters, activations)"),
    rule("moe_intermediate_size", M, "width of one routed expert's MLP"),
    rule("decoder_sparse_step", M,
        "every Nth layer is MoE; only a leading run of dense layers is expressible, else refused"),
    rule("mlp_only_layers", M, "layers with a dense MLP of intermediate_size; must be 0..k-1, else refused"),
    rule("norm_topk_prob", X, "renormalises the top-k weights: arithmetic on (tokens x k), no new tensor kept"),
    rule("router_aux_loss_coef", X, "weight of the load-balancing loss"),
    rule("output_router_logits", N, "true keeps every layer's router logits for the auxiliary loss (not modelled)",
        isFalse, "false"),
};

constexpr HfKeyRule kLlama[] = {
    rule("head_dim", M, "per-head width when not hidden / heads (Llama 3.2)"),
    rule("attention_bias", M, "bias on q, k, v and o (modeling_llama.py)"),
    rule("mlp_bias", M, "bias on gate, up and down; only together with attention_bias, else refused"),
    rule("pretraining_tp", X, "splits the same matmuls into slices in forward; same tensors"),
    // Written by nanotron's Llama export (SmolLM2); modeling_llama.py reads none of them.
    rule("is_llama_config", X, "a marker of nanotron's export; modeling_llama.py never reads it"),
    rule("rope_interleaved", X, "nanotron's RoPE layout flag; modeling_llama.py never reads it: same shapes"),
    rule("transformers.js_config", X, "ONNX settings for transformers.js (the browser runtime)"),
};

constexpr HfKeyRule kMistral[] = {
    rule("head_dim", M, "per-head width when not hidden / heads"),
    rule("sliding_window", M, "every layer attends to this many tokens (null: full attention)"),
};

constexpr HfKeyRule kMixtral[] = {
    rule("head_dim", M, "per-head width when not hidden / heads"),
    rule("sliding_window", M, "every layer attends to this many tokens (null: full attention)"),
    rule("num_local_experts", M, "experts per layer, each an MLP of intermediate_size"),
    rule("num_experts_per_tok", M, "experts each token goes through"),
    rule("router_aux_loss_coef", X, "weight of the load-balancing loss"),
    rule("output_router_logits", N, "true keeps every layer's router logits for the auxiliary loss (not modelled)",
        isFalse, "false"),
    rule("router_jitter_noise", N, "above 0, training draws a noise tensor per router input (not modelled)", isZero,
        "0"),
};

// Phi-3.5-MoE (modeling_phimoe.py, configuration_phimoe.py).
constexpr HfKeyRule kPhimoe[] = {
    rule("sliding_window", M,
        "the attention mask's window (MixtralModel's mask); as long as max_position_embeddings it masks nothing"),
    rule("num_local_experts", M, "experts per layer, each an MLP of intermediate_size"),
    rule("num_experts_per_tok", M, "experts each token goes through"),
    rule("router_aux_loss_coef", X, "weight of the load-balancing loss"),
    rule("output_router_logits", N, "true keeps every layer's router logits for the auxiliary loss (not modelled)",
        isFalse, "false"),
    rule("router_jitter_noise", X,
        "SparseMixer's jitter epsilon, read in training only, which is refused for phimoe (model.moe.sparse_mixer)"),
    rule("input_jitter_noise", X,
        "noise multiplied into the MoE input in training only, which is refused for phimoe (model.moe.sparse_mixer)"),
    rule("attention_bias", M, "bias on q, k, v and o (LlamaAttention)"),
    rule("lm_head_bias", M, "a bias of vocab values on the LM head"),
    rule("original_max_position_embeddings", X, "input to the longrope scaling: buffers only"),
};

constexpr HfKeyRule kQwen2Moe[] = {
    rule("shared_expert_intermediate_size", M, "width of the one shared expert, gated by sigmoid(Linear(hidden, 1))"),
};

constexpr HfKeyRule kQwen3[] = {
    rule("head_dim", M, "per-head width (128 in every Qwen3, not hidden / heads)"),
    rule("attention_bias", M, "bias on q, k, v and o (modeling_qwen3.py)"),
};

constexpr HfKeyRule kGemma[] = {
    rule("head_dim", M, "per-head width (256 in Gemma, not hidden / heads)"),
    rule("hidden_activation", X, "the element-wise activation inside the gated MLP: same saved tensor shapes"),
    rule("attention_bias", N, "bias on q, k, v and o, not modelled for Gemma", isFalse, "false"),
};

constexpr HfKeyRule kGemma2[] = {
    rule("sliding_window", M, "local layers attend to this many tokens"),
    rule("layer_types", M, "which layers are sliding and which global"),
    rule("query_pre_attn_scalar", X, "attention scale"),
    rule("cache_implementation", X, "generation cache class; the window is modelled from sliding_window"),
    rule("final_logit_softcapping", N,
        "tanh soft-capping keeps another vocab-wide logits tensor in training (not modelled)", isNull, "null"),
    rule("attn_logit_softcapping", N,
        "soft-capping the scores needs eager attention and keeps more score tensors (not modelled)", isNull, "null"),
};

constexpr HfKeyRule kGemma3Text[] = {
    rule("sliding_window_pattern", M, "every Nth layer is global (6: 5 local, 1 global)"),
    rule("rope_local_base_freq", X, "RoPE base frequency of the local layers: buffers only"),
};

// The multimodal wrapper (Gemma3ForConditionalGeneration): the language model is its text_config.
constexpr HfKeyRule kGemma3[] = {
    rule("text_config", M, "the language model, imported as gemma3_text"),
    rule("vision_config", M,
        "the SigLIP tower (model.vision), its keys checked as siglip_vision_model; the projector's shapes follow "
        "from the two widths (Gemma3MultiModalProjector)"),
    rule("mm_tokens_per_image", X, "image tokens count in the scenario's sequence length like any other token"),
    rule("boi_token_index", X, "tokenizer id"),
    rule("eoi_token_index", X, "tokenizer id"),
    rule("image_token_index", X, "tokenizer id"),
};

// Gemma 3's vision_config (modeling_siglip.py SiglipVisionTransformer, configuration_siglip.py).
constexpr HfKeyRule kSiglipVision[] = {
    rule("model_type", M, "siglip_vision_model: the tower this table describes"),
    rule("hidden_size", M, "width of the tower and of the projector's input"),
    rule("intermediate_size", M, "width of each encoder layer's fc1/fc2"),
    rule("num_hidden_layers", M, "encoder layers"),
    rule("num_attention_heads", M, "heads (must divide hidden_size)"),
    rule("image_size", M, "pixels per side: (image_size / patch_size)^2 learned positions"),
    rule("patch_size", M, "pixels per side of a patch: the Conv2d kernel"),
    rule("num_channels", M, "input channels of the Conv2d patch embedding (3)"),
    rule("vision_use_head", N, "true adds a pooling head Gemma 3 does not have", isFalse, "false"),
    rule("hidden_act", X, "the MLP's activation: same shapes"),
    rule("layer_norm_eps", X, "epsilon inside LayerNorm"),
    rule("attention_dropout", N, "above 0, training keeps a dropout mask per attention score (not modelled)", isZero,
        "0"),
    rule("torch_dtype", X, "the checkpoint's storage dtype"),
    rule("dtype", X, "transformers 5 spelling of torch_dtype"),
};

constexpr HfKeyRule kGpt2[] = {
    rule("n_embd", M, "hidden size"),
    rule("n_layer", M, "number of blocks"),
    rule("n_head", M, "attention heads"),
    rule("n_inner", M, "MLP width (null: 4 x n_embd)"),
    rule("n_positions", M, "rows of the learned position table"),
    rule("resid_pdrop", M, "dropout masks after attention and MLP in training"),
    rule("embd_pdrop", N, "VRAM Lab has one dropout rate for the model", sameAsResidDropout, "equal to resid_pdrop"),
    rule("attn_pdrop", N, "VRAM Lab has one dropout rate for the model", sameAsResidDropout, "equal to resid_pdrop"),
    rule("activation_function", X, "the element-wise GELU variant: same saved tensor shapes"),
    rule("layer_norm_epsilon", X, "epsilon inside LayerNorm"),
    rule("n_ctx", X, "legacy alias; modeling_gpt2.py never reads it"),
    rule("scale_attn_weights", X, "a scalar on the scores"),
    rule("scale_attn_by_inverse_layer_idx", X, "a scalar on the scores"),
    rule(
        "reorder_and_upcast_attn", N, "upcasts the scores to fp32 in eager attention (not modelled)", isFalse, "false"),
    rule("add_cross_attention", N, "adds encoder-decoder cross-attention blocks", isFalse, "false"),
    rule("summary_type", X, "only GPT2DoubleHeadsModel's classification head reads it"),
    rule("summary_use_proj", X, "only GPT2DoubleHeadsModel's classification head reads it"),
    rule("summary_activation", X, "only GPT2DoubleHeadsModel's classification head reads it"),
    rule("summary_proj_to_labels", X, "only GPT2DoubleHeadsModel's classification head reads it"),
    rule("summary_first_dropout", X, "only GPT2DoubleHeadsModel's classification head reads it"),
    rule("task_specific_params", X, "generation defaults"),
};

constexpr HfKeyRule kPhi3[] = {
    rule("sliding_window", M, "every layer attends to this many tokens (modeling_phi3.py passes it to every layer)"),
    rule("resid_pdrop", N, "dropout after attention and MLP; VRAM Lab imports Phi-3 without dropout", isZero, "0"),
    rule("embd_pdrop", N, "dropout after the embedding; VRAM Lab imports Phi-3 without dropout", isZero, "0"),
    rule("original_max_position_embeddings", X, "input to the longrope scaling: buffers only"),
    rule("partial_rotary_factor", X, "share of head_dim rotated by RoPE: no parameters"),
    rule("attention_bias", N, "Phi3's fused qkv_proj and o_proj have no bias", isFalse, "false"),
    // Written by Phi-4-mini's own configuration_phi3.py (auto_map); transformers' Phi3Config keeps them as
    // attributes and modeling_phi3.py never reads them.
    rule("full_attn_mod", X, "a key of the repository's remote code; transformers' Phi3 never reads it"),
    rule("interpolate_factor", X, "a key of the repository's remote code; transformers' Phi3 never reads it"),
    rule("lm_head_bias", N, "transformers' Phi3ForCausalLM has no LM-head bias", isFalse, "false"),
    rule("mlp_bias", N, "transformers' Phi3MLP has no bias", isFalse, "false"),
};

// Granite (modeling_granite.py): Llama's layers with four scalars. Each multiplies or divides a
// tensor by a constant, which autograd keeps nothing for; the lm_head output is freed once
// divided, so the two 16-bit logits copies for a moment stay below the 16-bit + fp32 pair of
// the loss that follows.
constexpr HfKeyRule kGranite[] = {
    rule("attention_bias", M, "bias on q, k, v and o (modeling_granite.py)"),
    rule("mlp_bias", M, "bias on gate, up and down; only together with attention_bias, else refused"),
};

// The four scalars Granite and Granite MoE share (modeling_granite.py, modeling_granitemoe.py).
constexpr HfKeyRule kGraniteScalars[] = {
    rule("embedding_multiplier", X, "scales the embedding output by a constant: no tensor kept"),
    rule("residual_multiplier", X, "scales each sublayer output before the residual add: no tensor kept"),
    rule("attention_multiplier", X, "the attention's softmax scale"),
    rule("logits_scaling", X,
        "divides the logits by a constant: nothing kept for backward, and the moment with both 16-bit copies is "
        "below the loss's 16-bit + fp32 pair"),
};

// Granite MoE (modeling_granitemoe.py): Granite's attention and scalars; every layer a GraniteMoeMoE:
// router GraniteMoeTopKGating Linear(hidden, num_local_experts, bias=False), input_linear
// [E, 2 x intermediate, hidden] (gate and up fused, no bias) and output_linear [E, hidden, intermediate].
constexpr HfKeyRule kGraniteMoe[] = {
    rule("attention_bias", M, "bias on q, k, v and o (the experts have none)"),
    rule("num_local_experts", M, "experts per layer, each a gated MLP of intermediate_size"),
    rule("num_experts_per_tok", M, "experts each token goes through (active parameters, activations)"),
    rule("router_aux_loss_coef", X, "weight of the load-balancing loss"),
    rule("output_router_logits", N, "true keeps every layer's router logits for the auxiliary loss (not modelled)",
        isFalse, "false"),
};

// OLMo-2 (modeling_olmo2.py): Llama's shapes, q/k norms over all heads, norms after the sublayers.
constexpr HfKeyRule kOlmo2[] = {
    rule("attention_bias", M, "bias on q, k, v and o (modeling_olmo2.py)"),
};

// StarCoder2 (modeling_starcoder2.py): LayerNorm, biases everywhere, c_fc -> GELU -> c_proj.
// The Hub files keep keys of the Megatron conversion that modeling_starcoder2.py never reads.
constexpr HfKeyRule kStarcoder2[] = {
    rule("use_bias", M, "bias on q, k, v, o, c_fc and c_proj; false is refused (LayerNorm keeps its bias)"),
    rule("sliding_window", M, "every layer attends to this many tokens (null: full attention)"),
    rule("residual_dropout", M, "dropout masks after attention and MLP in training"),
    rule("embedding_dropout", N, "VRAM Lab has one dropout rate for the model", sameAsResidualDropout,
        "equal to residual_dropout"),
    rule("attention_dropout", N, "VRAM Lab has one dropout rate for the model", sameAsResidualDropout,
        "equal to residual_dropout"),
    rule("norm_epsilon", X, "epsilon inside LayerNorm"),
    rule("layer_norm_epsilon", X, "a conversion leftover; modeling_starcoder2.py reads norm_epsilon"),
    rule("norm_type", X, "a conversion leftover; modeling_starcoder2.py always builds nn.LayerNorm"),
    rule("mlp_type", X, "a conversion leftover; modeling_starcoder2.py always builds c_fc -> act -> c_proj"),
    rule("activation_function", X, "a conversion leftover; the activation is hidden_act (element-wise)"),
    rule("attention_softmax_in_fp32", X, "a conversion leftover; modeling_starcoder2.py never reads it"),
    rule("scale_attention_softmax_in_fp32", X, "a conversion leftover; modeling_starcoder2.py never reads it"),
    rule("scale_attn_weights", X, "a conversion leftover; modeling_starcoder2.py never reads it"),
};

constexpr HfKeyRule kDeepseekV3[] = {
    rule("num_key_value_heads", X, "MLA shapes come from kv_lora_rank and the head dims; the attention never reads it"),
    rule("q_lora_rank", M,
        "low-rank query (null: a plain q projection); required, since transformers defaults it to 1536"),
    rule("kv_lora_rank", M, "the compressed KV latent (what the cache keeps)"),
    rule("qk_nope_head_dim", M, "per-head query/key width without RoPE"),
    rule("qk_rope_head_dim", M, "per-head query/key width with RoPE (shared by heads in the latent)"),
    rule("v_head_dim", M, "per-head value width"),
    rule("n_routed_experts", M, "routed experts per MoE layer"),
    rule("num_experts_per_tok", M, "experts each token goes through"),
    rule("n_shared_experts", M, "always-active experts of moe_intermediate_size"),
    rule("moe_intermediate_size", M, "width of one expert's MLP"),
    rule("first_k_dense_replace", M, "leading layers with a dense MLP of intermediate_size"),
    rule("topk_method", M,
        "noaux_tc: the router keeps a per-expert e_score_correction_bias; greedy and group_limited_greedy "
        "(DeepSeek-V2) do not; any other method is refused"),
    rule("moe_layer_freq", N, "1: every layer after first_k_dense_replace is MoE; other values are not modelled", isOne,
        "1"),
    rule("ep_size", X, "expert parallelism of the remote code's inference; the scenario sets parallelism"),
    rule("n_group", X, "group-limited routing: which experts, not how many"),
    rule("topk_group", X, "group-limited routing: which experts, not how many"),
    rule("norm_topk_prob", X, "renormalises the top-k weights"),
    rule("routed_scaling_factor", X, "a scalar on the routed output"),
    rule("scoring_func", X, "sigmoid or softmax over the same router logits"),
    rule("aux_loss_alpha", X, "weight of the load-balancing loss"),
    rule("seq_aux", X, "how the load-balancing loss is averaged"),
    rule("rope_interleave", X, "RoPE layout: same shapes"),
    rule("pretraining_tp", X, "tensor-parallel degree of the original training; the MLA and MLP shapes do not use it"),
    rule("num_nextn_predict_layers", X,
        "the multi-token-prediction module: DeepseekV3ForCausalLM does not build it "
        "(its checkpoint layer 61 is skipped on load); not trained or served by transformers"),
    rule("attention_bias", N, "biases on the MLA projections, not modelled", isFalse, "false"),
};

// OLMoE (modeling_olmoe.py): Llama's pre-norm layers, q_norm over the whole q projection (hidden) and
// k_norm over kv_heads x head_dim, head_dim always hidden / heads, every layer a MoE of num_experts
// OlmoeMLP(intermediate_size) behind a Linear(hidden, num_experts, bias=False) router, no shared expert.
constexpr HfKeyRule kOlmoe[] = {
    rule("attention_bias", M, "bias on q, k, v and o (modeling_olmoe.py)"),
    rule("clip_qkv", N, "clamps q, k and v in place; in training each clamp keeps a tensor for backward (not modelled)",
        isNull, "null"),
    rule("num_experts", M, "experts per layer, each an MLP of intermediate_size (router output width)"),
    rule("num_experts_per_tok", M, "experts each token goes through (active parameters, activations)"),
    rule("norm_topk_prob", X, "renormalises the top-k weights: arithmetic on (tokens x k), no new tensor kept"),
    rule("router_aux_loss_coef", X, "weight of the load-balancing loss"),
    rule("output_router_logits", N, "true keeps every layer's router logits for the auxiliary loss (not modelled)",
        isFalse, "false"),
};

bool gptOssMxfp4Experts(const json& v, const json&)
{
    // openai/gpt-oss-20b and -120b: MXFP4 experts; attention, router, embedding and head unquantized.
    if (!v.is_object() || !v.contains("quant_method") || v.at("quant_method") != "mxfp4")
        return false;
    for (auto it = v.begin(); it != v.end(); ++it)
        if (it.key() != "quant_method" && it.key() != "modules_to_not_convert")
            return false;
    if (!v.contains("modules_to_not_convert"))
        return false;
    const json want
        = json::array({ "model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head" });
    return v.at("modules_to_not_convert") == want;
}

// gpt-oss (modeling_gpt_oss.py): q, k, v, o with bias=attention_bias, a learnable sink logit per head,
// sliding_window / full layers as layer_types says, every layer a MoE: GptOssTopKRouter (weight and bias)
// and GptOssExperts (gate_up_proj [E, hidden, 2 x intermediate] + bias, down_proj + bias); its RMSNorm
// multiplies the weight in fp32 (as OLMo-2's).
constexpr HfKeyRule kGptOss[] = {
    rule("head_dim", M, "per-head width (64, not hidden / heads)"),
    rule("attention_bias", M, "bias on q, k, v and o (the experts' biases are always there)"),
    rule("sliding_window", M, "the sliding_attention layers attend to this many tokens (KV cache of those layers)"),
    rule("layer_types", M,
        "which layers slide and which attend fully; only \"every Nth layer full\" patterns are expressible"),
    rule("num_local_experts", M, "experts per layer (router width, expert weights and biases)"),
    rule("num_experts_per_tok", M, "experts each token goes through (active parameters, activations)"),
    rule("experts_per_token", X, "OpenAI's own name in the same file; modeling_gpt_oss.py reads num_experts_per_tok"),
    rule("initial_context_length", X, "OpenAI's YaRN base length; transformers reads rope_scaling: buffers only"),
    rule("swiglu_limit", X,
        "the clamp bound of the GLU (7.0): a value, not a shape; the clamped GLU itself is model.clamped_swiglu, "
        "whose training is refused"),
    rule("swiglu_alpha", X, "the sigmoid gain of the clamped GLU (1.702): a value, not a shape"),
    rule("router_aux_loss_coef", X, "weight of the load-balancing loss"),
    rule("output_router_logits", N, "true keeps every layer's router logits for the auxiliary loss (not modelled)",
        isFalse, "false"),
    rule("quantization_config", N,
        "the checkpoint stores the experts as MXFP4 (4-bit values + an 8-bit scale per 32); the import counts the "
        "parameters as the model defines them and holds every weight in the scenario's precision, as transformers "
        "does when it dequantizes (training, Mxfp4Config(dequantize=True), no MXFP4 kernels); MXFP4-resident "
        "serving is not modelled (the import says so in a warning)",
        gptOssMxfp4Experts,
        "{\"quant_method\": \"mxfp4\", \"modules_to_not_convert\": [self_attn, mlp.router, embed_tokens, lm_head]}"),
};

bool isRelu2(const json& v, const json&)
{
    return v == "relu2";
}

// Hybrid Mamba-2 models share the mixer's keys, each family under its own names (transformers
// models/mamba2/modeling_mamba2.py Mamba2Mixer; read per family below).
// Nemotron-H (models/nemotron_h/modeling_nemotron_h.py, configuration_nemotron_h.py): each block is a norm and ONE
// of a Mamba-2 mixer (M), attention (*), a relu^2 MLP of up and down (-) or a MoE (E), as hybrid_override_pattern
// says; embeddings, norm_f and an untied lm_head.
constexpr HfKeyRule kNemotronH[] = {
    rule("hybrid_override_pattern", M,
        "one character per block: M Mamba-2, * attention, - MLP (E, a MoE block, is refused: not modelled yet)"),
    rule("attention_head_dim", M, "per-head width of q, k and v (128, not hidden / heads in every model)"),
    rule("head_dim", M, "per-head width (the newer spelling of attention_head_dim)"),
    rule("attention_bias", M, "biases on q, k, v and o"),
    rule("mlp_bias", M, "biases on up_proj and down_proj: only together with attention_bias, else refused"),
    rule("mamba_num_heads", M, "Mamba-2 heads: dt_bias, A_log and D, the scan's state"),
    rule("mamba_head_dim", M, "width of one Mamba-2 head: heads x head_dim is the inner width"),
    rule("n_groups", M, "groups of heads sharing B and C (in_proj and conv width)"),
    rule("ssm_state_size", M, "the scan's state per channel (in_proj and conv width, the recurrent state)"),
    rule("conv_kernel", M, "the causal conv's width: weight size and the conv state each sequence keeps"),
    rule("use_conv_bias", M, "the conv's bias"),
    rule("use_bias", M, "biases on in_proj and out_proj"),
    rule("mamba_proj_bias", X,
        "stored but never read: modeling_nemotron_h.py builds in_proj and out_proj with use_bias"),
    rule("expand", X, "not read by the Mamba-2 mixer: its inner width is mamba_num_heads x mamba_head_dim"),
    rule("chunk_size", X, "the scan's chunk length inside the kernel: no parameter, no state kept between steps"),
    rule("mamba_hidden_act", X, "the gate's activation: element-wise"),
    rule("mlp_hidden_act", N, "the MLP is up -> relu^2 -> down; another activation is not modelled", isRelu2,
        "\"relu2\""),
    rule("time_step_limit", X, "a clamp on dt inside the scan: a value, not a shape"),
    rule("time_step_min", X, "initialisation range of dt_bias"),
    rule("time_step_max", X, "initialisation range of dt_bias"),
    rule("time_step_floor", X, "initialisation floor of dt_bias"),
    rule("rescale_prenorm_residual", X, "an initialisation rule"),
    rule("residual_in_fp32", X,
        "the residual stream's dtype in training, which is refused for hybrid models; the engines keep it in the "
        "model dtype"),
    rule("use_mamba_kernels", X, "whether transformers calls mamba_ssm's CUDA kernels: same tensors held"),
    rule("layer_norm_epsilon", X, "epsilon inside RMSNorm"),
    rule("num_logits_to_keep", X, "logits kept by generate(): the engines compute their own"),
    rule("hidden_dropout", N, "above 0, training keeps dropout masks (training is refused for hybrid models)", isZero,
        "0"),
    rule("sliding_window", N, "a window in the attention blocks is not modelled", isNull, "null"),
    rule("mamba_ssm_cache_dtype", X,
        "the dtype vLLM keeps the scan's state in: a serving setting, run.serving.mamba_ssm_cache_dtype (the import "
        "warns with the value)"),
};

// Granite-4.0 (models/granitemoehybrid/modeling_granitemoehybrid.py): each layer is input_layernorm, a Mamba-2 mixer
// or attention (layer_types), post_attention_layernorm, a shared gated MLP of shared_intermediate_size and, with
// experts, a MoE of num_local_experts gated experts of intermediate_size; head_dim is always hidden / heads.
constexpr HfKeyRule kGraniteHybrid[] = {
    rule("layer_types", M, "\"mamba\" or \"attention\" per layer (absent: every layer Mamba-2)"),
    rule("layers_block_type", M, "the older name of layer_types"),
    rule("attention_bias", M, "biases on q, k, v and o"),
    rule("shared_intermediate_size", M, "width of the shared gated MLP every layer has"),
    rule("intermediate_size", M, "width of one expert's gated MLP (with num_local_experts above 0)"),
    rule("num_local_experts", M, "experts per layer behind a Linear(hidden, experts) router; 0 = none"),
    rule("num_experts_per_tok", M, "experts each token goes through (active parameters)"),
    rule("mamba_n_heads", M, "Mamba-2 heads"),
    rule("mamba_d_head", M, "width of one Mamba-2 head: must make heads x d_head = mamba_expand x hidden"),
    rule("mamba_expand", M, "the inner width is mamba_expand x hidden_size"),
    rule("mamba_n_groups", M, "groups of heads sharing B and C"),
    rule("mamba_d_state", M, "the scan's state per channel"),
    rule("mamba_d_conv", M, "the causal conv's width"),
    rule("mamba_conv_bias", M, "the conv's bias"),
    rule("mamba_proj_bias", M, "biases on in_proj and out_proj"),
    rule("mamba_chunk_size", X, "the scan's chunk length inside the kernel: no parameter, no state"),
    rule("position_embedding_type", M,
        "rope or nope: no parameters either way; nope has no rotary cos/sin cache in the serving engines"),
    rule("normalization_function", X, "rmsnorm: one weight per norm"),
    rule("router_aux_loss_coef", X, "weight of the load-balancing loss"),
    rule("output_router_logits", N, "true keeps every layer's router logits for the auxiliary loss (not modelled)",
        isFalse, "false"),
    rule("init_method", X, "an initialisation rule"),
};

// Falcon-H1 (models/falcon_h1/modeling_falcon_h1.py, configuration_falcon_h1.py): every layer is input_layernorm,
// attention and a Mamba-2 mixer side by side on its output, pre_ff_layernorm and a gated MLP. FalconH1Config
// sets attention_bias and mlp_bias to False whatever the file says; the mup multipliers are non-persistent
// buffers and config scalars (FalconH1Model.__init__ register_buffer(..., persistent=False)): no parameters.
constexpr HfKeyRule kFalconH1[] = {
    rule("head_dim", M, "per-head width of q, k and v (else hidden / heads)"),
    rule("attention_bias", X, "FalconH1Config forces it to False"),
    rule("mlp_bias", X, "FalconH1Config forces it to False"),
    rule("mamba_d_ssm", M, "the Mamba-2 inner width (FalconH1Config defaults it to 1024; null: mamba_expand x hidden)"),
    rule("mamba_expand", M, "the inner width when mamba_d_ssm is null"),
    rule("mamba_n_heads", M, "Mamba-2 heads"),
    rule("mamba_d_head", M, "width of one Mamba-2 head: must make heads x d_head the inner width"),
    rule("mamba_n_groups", M, "groups of heads sharing B and C"),
    rule("mamba_d_state", M, "the scan's state per channel"),
    rule("mamba_d_conv", M, "the causal conv's width"),
    rule("mamba_conv_bias", M, "the conv's bias"),
    rule("mamba_proj_bias", M, "the bias of in_proj (must equal projectors_bias: one flag here)"),
    rule("projectors_bias", M, "the bias of the Mamba-2 out_proj"),
    rule("mamba_rms_norm", M, "the gated RMSNorm over the inner width before out_proj"),
    rule("mamba_norm_before_gate", X, "the order of gate and norm: same tensors"),
    rule("mamba_chunk_size", X, "the scan's chunk length inside the kernel"),
    rule("mamba_use_mlp", X, "not read by modeling_falcon_h1.py: every layer has its MLP"),
    rule("attn_layer_indices", X, "not read by modeling_falcon_h1.py: every layer has attention"),
    rule("embedding_multiplier", X, "a mup scalar"),
    rule("lm_head_multiplier", X, "a mup scalar"),
    rule("key_multiplier", X, "a mup scalar"),
    rule("attention_in_multiplier", X, "a mup scalar"),
    rule("attention_out_multiplier", X, "a mup scalar"),
    rule("ssm_in_multiplier", X, "a mup scalar"),
    rule("ssm_out_multiplier", X, "a mup scalar"),
    rule("ssm_multipliers", X, "mup scalars: the non-persistent mup_vector buffer, not a parameter"),
    rule("mlp_multipliers", X, "mup scalars"),
    rule("time_step_limit", X, "a clamp on dt inside the scan"),
    rule("time_step_min", X, "initialisation range of dt_bias"),
    rule("time_step_max", X, "initialisation range of dt_bias"),
    rule("time_step_floor", X, "initialisation floor of dt_bias"),
    rule("num_logits_to_keep", X, "logits kept by generate()"),
};

// Qwen3-Next (models/qwen3_next/modeling_qwen3_next.py, configuration_qwen3_next.py): layers of Gated DeltaNet linear
// attention and, every full_attention_interval-th, gated full attention (q_proj twice as wide for the output gate,
// q_norm and k_norm, partial RoPE); every layer's MLP is a Qwen2-MoE block (routed experts, a shared expert and its
// sigmoid gate). Its norms are zero-centred (weight + 1): one weight per channel all the same.
constexpr HfKeyRule kQwen3Next[] = {
    rule("head_dim", M, "per-head width of the full-attention layers (256, not hidden / heads)"),
    rule("attention_bias", M, "bias on q, k, v and o of the full-attention layers"),
    rule("layer_types", M, "\"linear_attention\" (Gated DeltaNet) or \"full_attention\" per layer"),
    rule("full_attention_interval", M, "every Nth layer is full attention when layer_types is absent (default 4)"),
    rule("linear_num_value_heads", M, "Gated DeltaNet value heads: the recurrent state and the output"),
    rule("linear_value_head_dim", M, "width of one value head: the state is head_v_dim x head_k_dim per head"),
    rule("linear_num_key_heads", M, "Gated DeltaNet key heads (q and k)"),
    rule("linear_key_head_dim", M, "width of one key head"),
    rule("linear_conv_kernel_dim", M, "the causal conv's width: weight size and the conv state each sequence keeps"),
    rule("partial_rotary_factor", M,
        "the share of each head RoPE turns: no parameter, the serving engines' cos/sin cache (model.rotary_dim)"),
    rule("shared_expert_intermediate_size", M, "width of the one shared expert, gated by sigmoid(Linear(hidden, 1))"),
    rule("use_sliding_window", N, "true turns on a window VRAM Lab does not model for Qwen3-Next", isFalse, "false"),
    rule("sliding_window", X, "read only when use_sliding_window is true (refused above)"),
    rule("max_window_layers", X, "read only when use_sliding_window is true (refused above)"),
    rule("mtp_num_hidden_layers", X,
        "the checkpoint's multi-token-prediction layer: transformers builds no module for it (its tensors are "
        "skipped at load) and vLLM loads it only for speculative decoding, which is not modelled"),
    rule("mtp_use_dedicated_embeddings", X, "the MTP layer's embedding choice (the MTP layer is not loaded)"),
};

// Qwen3.5 / Qwen3.6 (models/qwen3_5/modeling_qwen3_5.py, models/qwen3_5_moe/modeling_qwen3_5_moe.py): Qwen3-Next's
// layers (kQwen3Next) in a Qwen3_5ForConditionalGeneration beside a vision transformer; the language model's keys
// are its text_config's.
constexpr HfKeyRule kQwen35Wrapper[] = {
    rule("text_config", M, "the language model, imported as qwen3_5_text or qwen3_5_moe_text"),
    rule(
        "vision_config", M, "the vision transformer (model.vision, kind qwen-vit), its keys checked as qwen3_5_vision"),
    rule("image_token_id", X, "tokenizer id"),
    rule("video_token_id", X, "tokenizer id"),
    rule("vision_start_token_id", X, "tokenizer id"),
    rule("vision_end_token_id", X, "tokenizer id"),
};

bool isTrue(const json& v, const json&)
{
    return v.is_boolean() && v.get<bool>();
}
bool isEmptyList(const json& v, const json&)
{
    return v.is_array() && v.empty();
}

constexpr HfKeyRule kQwen35Text[] = {
    rule("attn_output_gate", N,
        "transformers' Qwen3_5Attention always gates its output (q_proj twice as wide); false would make vLLM and "
        "transformers build different models",
        isTrue, "true"),
    rule("mamba_ssm_dtype", M,
        "the dtype of the Gated DeltaNet recurrent state, which vLLM and SGLang take on auto (model.ssm.state_dtype)"),
    rule("rope_parameters", M,
        "RoPE's settings: partial_rotary_factor sets model.rotary_dim and mrope_section model.mrope (the engines' "
        "cos/sin cache); the rest (theta, interleaving) are buffers only"),
    rule("tie_word_embeddings", M, "must agree with the wrapper's, which transformers ties by"),
    rule("mlp_only_layers", X,
        "not read by modeling_qwen3_5.py and modeling_qwen3_5_moe.py: every layer's MLP is "
        "of its kind (dense, or the MoE block)"),
};

// Qwen3.5-MoE: every layer is a MoE block (modeling_qwen3_5_moe.py Qwen3_5MoeDecoderLayer).
constexpr HfKeyRule kQwen35Moe[] = {
    rule("decoder_sparse_step", X, "not read by modeling_qwen3_5_moe.py: every layer is MoE"),
    rule("norm_topk_prob", X, "the top-k weights are always renormalised: arithmetic on (tokens x k)"),
};

// Qwen3.5's vision_config (Qwen3_5VisionModel; configuration_qwen3_5.py Qwen3_5VisionConfig).
constexpr HfKeyRule kQwen35Vision[] = {
    rule("model_type", M, "qwen3_5, qwen3_5_moe or qwen3_5_vision: the tower this table describes"),
    rule("depth", M, "vision blocks"),
    rule("hidden_size", M, "width of the tower"),
    rule("intermediate_size", M, "width of each block's linear_fc1/linear_fc2"),
    rule("num_heads", M, "heads (must divide hidden_size)"),
    rule("in_channels", M, "input channels of the Conv3d patch embedding (3)"),
    rule("patch_size", M, "pixels per side of a patch: the Conv3d kernel"),
    rule("temporal_patch_size", M, "frames per patch: the Conv3d kernel's depth"),
    rule("spatial_merge_size", M, "patches per side the merger joins: its linear_fc1 is (hidden x merge^2)^2"),
    rule("out_hidden_size", M, "the merger's output width"),
    rule("num_position_embeddings", M, "learned positions (pos_embed rows)"),
    rule("deepstack_visual_indexes", N, "deepstack mergers (Qwen3-VL) are not modelled", isEmptyList, "[]"),
    rule("hidden_act", X, "the MLP's activation: same shapes"),
    rule("initializer_range", X, "standard deviation of the random init; no shape"),
    rule("torch_dtype", X, "the checkpoint's storage dtype"),
    rule("dtype", X, "transformers 5 spelling of torch_dtype"),
};

// Qwen2.5-VL (models/qwen2_5_vl/configuration_qwen2_5_vl.py and modeling_qwen2_5_vl.py, transformers 4.57.1). Its
// language model is Qwen2's decoder (Qwen2_5_VLAttention: q, k, v bias=True, o bias=False; Qwen2MLP without bias)
// with mRoPE. The Hub's config.json files come in two layouts, both read as Qwen2_5_VLConfig reads them: flat (the
// language model's keys at the top, beside vision_config: Qwen2_5_VLTextConfig(**kwargs)) or, as transformers 4.52+
// saves them, nested in text_config, the top-level copies then shadowed by text_config's (__getattribute__).
constexpr HfKeyRule kQwen25VlText[] = {
    rule("vision_config", M,
        "the vision transformer (model.vision, kind qwen2.5-vit), its keys checked as qwen2_5_vl_vision"),
    rule("image_token_id", X, "tokenizer id"),
    rule("video_token_id", X, "tokenizer id"),
    rule("vision_start_token_id", X, "tokenizer id"),
    rule("vision_end_token_id", X, "tokenizer id"),
    rule("vision_token_id", X, "tokenizer id"),
    rule("rope_scaling", M,
        "its mrope_section (multimodal RoPE) sets model.mrope, vLLM's 4x cos/sin cache; the rest is buffers only"),
    rule("rope_parameters", M, "transformers 5 spelling of rope_scaling: its mrope_section sets model.mrope"),
};

// The nested layout's top level: the wrapper's own keys, and copies of the language model's that transformers reads
// from text_config instead (Qwen2_5_VLConfig.__getattribute__; the model is built from config.text_config).
constexpr HfKeyRule kQwen25VlWrapper[] = {
    rule("text_config", M, "the language model, imported as qwen2_5_vl_text"),
    rule("vocab_size", X, "a copy shadowed by text_config's"),
    rule("tie_word_embeddings", M,
        "must agree with text_config's: transformers 4 ties by text_config's (get_text_config), transformers 5 by "
        "this one"),
    rule("hidden_size", X, "a copy shadowed by text_config's"),
    rule("intermediate_size", X, "a copy shadowed by text_config's"),
    rule("num_hidden_layers", X, "a copy shadowed by text_config's"),
    rule("num_attention_heads", X, "a copy shadowed by text_config's"),
    rule("num_key_value_heads", X, "a copy shadowed by text_config's"),
    rule("max_position_embeddings", X, "a copy shadowed by text_config's"),
    rule("rms_norm_eps", X, "a copy shadowed by text_config's"),
    rule("rope_theta", X, "a copy shadowed by text_config's"),
    rule("rope_scaling", X, "a copy shadowed by text_config's"),
    rule("rope_parameters", X, "a copy shadowed by text_config's"),
    rule("hidden_act", X, "a copy shadowed by text_config's"),
    rule("attention_dropout", X, "a copy shadowed by text_config's"),
    rule("use_sliding_window", X, "a copy shadowed by text_config's"),
    rule("sliding_window", X, "a copy shadowed by text_config's"),
    rule("max_window_layers", X, "a copy shadowed by text_config's"),
    rule("layer_types", X, "a copy shadowed by text_config's"),
};

// Qwen2.5-VL's vision_config (Qwen2_5_VisionTransformerPretrainedModel; Qwen2_5_VLVisionConfig).
constexpr HfKeyRule kQwen25VlVision[] = {
    rule("model_type", M, "qwen2_5_vl: the tower this table describes"),
    rule("depth", M, "vision blocks"),
    rule("hidden_size", M, "width of the tower"),
    rule("intermediate_size", M, "width of each block's gate_proj/up_proj/down_proj"),
    rule("num_heads", M, "heads (must divide hidden_size)"),
    rule("in_channels", M, "input channels of the Conv3d patch embedding (3)"),
    rule("patch_size", M, "pixels per side of a patch: the Conv3d kernel"),
    rule("temporal_patch_size", M, "frames per patch: the Conv3d kernel's depth"),
    rule("spatial_merge_size", M, "patches per side the merger joins: its first Linear is (hidden x merge^2)^2"),
    rule("out_hidden_size", M, "the merger's output width"),
    rule("in_chans", X, "an older spelling Qwen2_5_VLVisionConfig never reads (the Conv3d takes in_channels)"),
    rule("spatial_patch_size", X, "never read by modeling_qwen2_5_vl.py (patch_size is the kernel)"),
    rule("window_size", X,
        "the window attention's extent on an image: the tower's activations, which are not modelled (images are "
        "not; the report says so)"),
    rule("fullatt_block_indexes", X,
        "which blocks attend over the whole image: the tower's activations, which are not modelled (images are not)"),
    rule("tokens_per_second", X, "mRoPE's temporal position scale for video: position ids only"),
    rule("hidden_act", X, "the MLP's activation: same shapes"),
    rule("initializer_range", X, "standard deviation of the random init; no shape"),
    rule("torch_dtype", X, "the checkpoint's storage dtype"),
    rule("dtype", X, "transformers 5 spelling of torch_dtype"),
};

// GLM-4 (models/glm4/modeling_glm4.py and configuration_glm4.py; Glm4ForCausalLM, THUDM/GLM-4-*-0414).
constexpr HfKeyRule kGlm4[] = {
    rule("head_dim", M, "per-head width (Glm4Config's default 128, not hidden / heads)"),
    rule("attention_bias", M, "bias on q, k and v (default true); o_proj never has one"),
    rule("partial_rotary_factor", M,
        "RoPE turns this share of each head (0.5): model.rotary_dim, the engines' cos/sin cache"),
    rule("rope_parameters", M,
        "transformers 5 spelling of rope_theta and rope_scaling; its partial_rotary_factor sets model.rotary_dim"),
};

// Command-R and Aya (models/cohere/modeling_cohere.py and configuration_cohere.py; CohereForCausalLM): one weight-only
// LayerNorm per layer read by attention and the MLP in parallel, tied embeddings by default.
constexpr HfKeyRule kCohere[] = {
    rule("head_dim", M, "per-head width when not hidden / heads (getattr(config, \"head_dim\", ...))"),
    rule("attention_bias", M, "bias on q, k, v and o (CohereAttention)"),
    rule("use_qk_norm", N, "true adds per-head CohereLayerNorms on q and k (Command-R+), not modelled yet", isFalse,
        "false"),
    rule("layer_norm_eps", X, "epsilon inside CohereLayerNorm"),
    rule("logit_scale", X,
        "a Python float multiplying the logits (logits * logit_scale): the unscaled logits are freed before the loss "
        "upcasts the scaled ones, so the loss's peak is unchanged"),
    rule("model_max_length", X,
        "the tokenizer's length copied into some Cohere configs; modeling_cohere.py never reads it"),
};

// Llama 4 (models/llama4/configuration_llama4.py and modeling_llama4.py, transformers 4.57.1).
constexpr HfKeyRule kLlama4Text[] = {
    rule("head_dim", M, "per-head width (Llama4TextConfig default 128)"),
    rule("intermediate_size", M, "width of each routed expert and of the shared expert (Llama4TextMLP(config))"),
    rule("intermediate_size_mlp", M, "width of the dense layers' MLP"),
    rule("num_local_experts", M, "routed experts per MoE layer (router output width); 0 = a dense model"),
    rule("num_experts_per_tok", M, "experts each token is routed to in the engines (transformers runs them all)"),
    rule("moe_layers", M, "the layers with experts; must be every Nth after a leading dense run"),
    rule("interleave_moe_layer_step", M, "without moe_layers: layers step-1, 2 step-1, ... have experts"),
    rule("attention_chunk_size", M, "the chunk the chunked_attention layers attend within (model.sliding_window)"),
    rule("layer_types", M, "chunked_attention or full_attention per layer; every Nth global"),
    rule("no_rope_layers", M, "1 = RoPE and a chunked layer, 0 = NoPE and global (without layer_types)"),
    rule("no_rope_layer_interval", M, "without no_rope_layers: every Nth layer is NoPE and global"),
    rule("use_qk_norm", X,
        "Llama4TextL2Norm on q and k has no weight; its tensors matter only in training, which is refused for "
        "Llama 4 (model.moe.every_expert_every_token)"),
    rule("attention_bias", X, "Llama4TextConfig sets it to False after reading the file: never any bias"),
    rule("attn_temperature_tuning", X, "scales q on the NoPE layers: a scalar per position, same shapes"),
    rule("floor_scale", X, "a constant of the temperature tuning"),
    rule("attn_scale", X, "a constant of the temperature tuning"),
    rule("output_router_logits", X,
        "collects each layer's router logits for an auxiliary loss in training, which is refused for Llama 4"),
    rule("router_aux_loss_coef", X, "never read by modeling_llama4.py"),
    rule("router_jitter_noise", X, "never read by modeling_llama4.py"),
    rule("for_llm_compressor", X, "a flag of Meta's conversion; modeling_llama4.py never reads it"),
    rule("_attn_implementation_autoset", X, "a transformers bookkeeping flag saved with the config"),
    rule("cache_implementation", X, "generation cache class; the chunk is modelled from attention_chunk_size"),
};

// The multimodal wrapper (Llama4ForConditionalGeneration): the language model is its text_config.
constexpr HfKeyRule kLlama4[] = {
    rule("text_config", M, "the language model, imported as llama4_text"),
    rule("vision_config", M,
        "the vision tower and its adapter (model.vision, kind llama4), checked as llama4_vision_model"),
    rule("tie_word_embeddings", X,
        "the composite model ties by text_config.tie_word_embeddings (modeling_utils.py get_text_config), not this"),
    rule("boi_token_index", X, "tokenizer id"),
    rule("eoi_token_index", X, "tokenizer id"),
    rule("image_token_index", X, "tokenizer id"),
};

// Llama 4's vision_config (modeling_llama4.py Llama4VisionModel, configuration_llama4.py Llama4VisionConfig).
constexpr HfKeyRule kLlama4Vision[] = {
    rule("model_type", M, "llama4_vision_model: the tower this table describes"),
    rule("hidden_size", M, "width of the tower"),
    rule("intermediate_size", M, "width of each encoder layer's fc1/fc2, and the adapter fc1's input"),
    rule("num_hidden_layers", M, "encoder layers"),
    rule("num_attention_heads", M, "heads (must divide hidden_size)"),
    rule("image_size", M, "pixels per side: (image_size / patch_size)^2 + 1 learned positions"),
    rule("patch_size", M, "pixels per side of a patch: the linear patch embedding's input"),
    rule("num_channels", M, "input channels of the patch embedding (3)"),
    rule("projector_input_dim", M, "the pixel-shuffle adapter's fc1 output width"),
    rule("projector_output_dim", M, "the adapter fc2's width (square), equal to vision_output_dim"),
    rule("vision_output_dim", M, "the projector's input width"),
    rule("pixel_shuffle_ratio", M, "hidden_size / ratio^2 must equal intermediate_size, what the adapter reads"),
    rule("hidden_act", X, "modeling_llama4.py hard-codes nn.GELU(): same shapes"),
    rule("norm_eps", X, "never read: the LayerNorms use their default epsilon"),
    rule("multi_modal_projector_bias", X, "never read: the projector has bias=False hard-coded"),
    rule("vision_feature_select_strategy", X, "validated only"),
    rule("vision_feature_layer", X, "deprecated; modeling_llama4.py never reads it"),
    rule("rope_theta", X, "RoPE base frequency of the tower: buffers only"),
    rule("initializer_range", X, "standard deviation of the random init; no shape"),
    rule("projector_dropout", N, "above 0, training keeps a dropout mask (not modelled)", isZero, "0"),
    rule("attention_dropout", N, "above 0, training keeps a dropout mask per attention score (not modelled)", isZero,
        "0"),
    rule("torch_dtype", X, "the checkpoint's storage dtype"),
    rule("dtype", X, "transformers 5 spelling of torch_dtype"),
    rule("_attn_implementation_autoset", X, "a transformers bookkeeping flag saved with the config"),
};

constexpr HfFamily kFamilies[] = {
    { "llama", "models/llama/modeling_llama.py", { kLlama, kDecoder, kCommon } },
    { "mistral", "models/mistral/modeling_mistral.py", { kMistral, kDecoder, kCommon } },
    { "mixtral", "models/mixtral/modeling_mixtral.py", { kMixtral, kDecoder, kCommon } },
    // Qwen2Attention hard-codes q, k, v bias=True and o bias=False: no key for it.
    { "qwen2", "models/qwen2/modeling_qwen2.py", { kQwenWindow, kDecoder, kCommon } },
    { "qwen2_moe", "models/qwen2_moe/modeling_qwen2_moe.py",
        { kQwen2Moe, kQwenExperts, kQwenWindow, kDecoder, kCommon } },
    { "qwen3", "models/qwen3/modeling_qwen3.py", { kQwen3, kQwenWindow, kDecoder, kCommon } },
    { "qwen3_moe", "models/qwen3_moe/modeling_qwen3_moe.py", { kQwen3, kQwenExperts, kQwenWindow, kDecoder, kCommon } },
    // Qwen2.5-VL: the flat layout is read as qwen2_5_vl_text at the top level, the nested one through the wrapper.
    { "qwen2_5_vl_text", "models/qwen2_5_vl/modeling_qwen2_5_vl.py (Qwen2_5_VLTextModel)",
        { kQwen25VlText, kQwenWindow, kDecoder, kCommon } },
    { "qwen2_5_vl", "models/qwen2_5_vl/modeling_qwen2_5_vl.py (Qwen2_5_VLForConditionalGeneration)",
        { kQwen25VlWrapper, kQwen25VlText, kCommon } },
    // Only as the vision_config of a qwen2_5_vl model (refused as a top-level model_type).
    { "qwen2_5_vl_vision", "models/qwen2_5_vl/modeling_qwen2_5_vl.py (Qwen2_5_VisionTransformerPretrainedModel)",
        { kQwen25VlVision } },
    { "qwen3_next", "models/qwen3_next/modeling_qwen3_next.py", { kQwen3Next, kQwenExperts, kDecoder, kCommon } },
    { "qwen3_5", "models/qwen3_5/modeling_qwen3_5.py (Qwen3_5ForConditionalGeneration)", { kQwen35Wrapper, kCommon } },
    { "qwen3_5_moe", "models/qwen3_5_moe/modeling_qwen3_5_moe.py (Qwen3_5MoeForConditionalGeneration)",
        { kQwen35Wrapper, kCommon } },
    { "qwen3_5_text", "models/qwen3_5/modeling_qwen3_5.py", { kQwen35Text, kQwen3Next, kDecoder, kCommon } },
    { "qwen3_5_moe_text", "models/qwen3_5_moe/modeling_qwen3_5_moe.py",
        { kQwen35Text, kQwen35Moe, kQwen3Next, kQwenExperts, kDecoder, kCommon } },
    // Only as the vision_config of a qwen3_5 wrapper (refused as a top-level model_type).
    { "qwen3_5_vision", "models/qwen3_5/modeling_qwen3_5.py (Qwen3_5VisionModel)", { kQwen35Vision } },
    { "gemma", "models/gemma/modeling_gemma.py", { kGemma, kDecoder, kCommon } },
    { "gemma2", "models/gemma2/modeling_gemma2.py", { kGemma2, kGemma, kDecoder, kCommon } },
    { "gemma3_text", "models/gemma3/modeling_gemma3.py", { kGemma3Text, kGemma2, kGemma, kDecoder, kCommon } },
    { "gemma3", "models/gemma3/modeling_gemma3.py (Gemma3ForConditionalGeneration)", { kGemma3, kCommon } },
    // Only as the vision_config of a gemma3 wrapper (refused as a top-level model_type).
    { "siglip_vision_model", "models/siglip/modeling_siglip.py (SiglipVisionTransformer)", { kSiglipVision } },
    { "gpt2", "models/gpt2/modeling_gpt2.py", { kGpt2, kCommon } },
    { "phi3", "models/phi3/modeling_phi3.py", { kPhi3, kDecoder, kCommon } },
    { "phimoe", "models/phimoe/modeling_phimoe.py", { kPhimoe, kDecoder, kCommon } },
    // DeepSeek-V2 (and V2-Lite): the same MLA and routed + shared experts, keys and all.
    { "deepseek_v2", "models/deepseek_v2/modeling_deepseek_v2.py", { kDeepseekV3, kDecoder, kCommon } },
    { "deepseek_v3", "models/deepseek_v3/modeling_deepseek_v3.py", { kDeepseekV3, kDecoder, kCommon } },
    { "starcoder2", "models/starcoder2/modeling_starcoder2.py", { kStarcoder2, kDecoder, kCommon } },
    { "granite", "models/granite/modeling_granite.py", { kGranite, kGraniteScalars, kDecoder, kCommon } },
    { "granitemoe", "models/granitemoe/modeling_granitemoe.py", { kGraniteMoe, kGraniteScalars, kDecoder, kCommon } },
    { "olmo2", "models/olmo2/modeling_olmo2.py", { kOlmo2, kDecoder, kCommon } },
    { "glm4", "models/glm4/modeling_glm4.py", { kGlm4, kDecoder, kCommon } },
    { "cohere", "models/cohere/modeling_cohere.py", { kCohere, kDecoder, kCommon } },
    { "olmoe", "models/olmoe/modeling_olmoe.py", { kOlmoe, kDecoder, kCommon } },
    { "gpt_oss", "models/gpt_oss/modeling_gpt_oss.py", { kGptOss, kDecoder, kCommon } },
    { "nemotron_h", "models/nemotron_h/modeling_nemotron_h.py", { kNemotronH, kDecoder, kCommon } },
    { "granitemoehybrid", "models/granitemoehybrid/modeling_granitemoehybrid.py",
        { kGraniteHybrid, kGraniteScalars, kDecoder, kCommon } },
    { "falcon_h1", "models/falcon_h1/modeling_falcon_h1.py", { kFalconH1, kDecoder, kCommon } },
    { "llama4_text", "models/llama4/modeling_llama4.py", { kLlama4Text, kDecoder, kCommon } },
    { "llama4", "models/llama4/modeling_llama4.py (Llama4ForConditionalGeneration)", { kLlama4, kCommon } },
    // Only as the vision_config of a llama4 wrapper (refused as a top-level model_type).
    { "llama4_vision_model", "models/llama4/modeling_llama4.py (Llama4VisionModel)", { kLlama4Vision } },
};

} // namespace

std::span<const HfFamily> hfFamilies()
{
    return kFamilies;
}

const HfFamily* findHfFamily(std::string_view modelType)
{
    for (const HfFamily& f : kFamilies)
        if (f.modelType == modelType)
            return &f;
    return nullptr;
}

const HfKeyRule* findHfKeyRule(const HfFamily& family, std::string_view key)
{
    for (const auto& group : family.groups)
        for (const HfKeyRule& r : group)
            if (r.key == key)
                return &r;
    return nullptr;
}

std::string supportedHfModelTypes()
{
    std::string s;
    for (const HfFamily& f : kFamilies)
        s += (s.empty() ? "" : ", ") + std::string(f.modelType);
    return s;
}

} // namespace vramlab
