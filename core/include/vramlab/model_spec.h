// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/dtype.h"
#include "vramlab/units.h"

#include <optional>

#include <string>

namespace vramlab {

enum class MlpKind { SwiGlu, GeGlu, Gelu }; ///< gated (gate, up, down) or plain (up, down)
enum class NormKind { RmsNorm, LayerNorm }; ///< weight only, or weight and bias
enum class PositionKind {
    Rope,
    Learned,
    None
}; ///< rotary (no parameters), a max_position x hidden table, or none
   ///< (NoPE: Nemotron-H and Granite-4.0-H attention)
enum class AttentionType { Mha, Mla }; ///< MHA/GQA/MQA, or DeepSeek's multi-head latent attention

/// Mixture of experts. num_experts == 0 means a dense model.
struct MoeSpec {
    Count numExperts = 0; ///< routed experts per MoE layer
    Count topK = 0; ///< routed experts per token
    Count sharedExperts = 0; ///< always-active experts (DeepSeek)
    Count expertFfnHiddenSize = 0; ///< width of one expert's MLP; 0 = ffn_hidden_size
    Count firstDenseLayers = 0; ///< leading layers with a dense MLP of ffn_hidden_size
    bool routerBias = false; ///< per-expert bias of the router (DeepSeek-V3 e_score_correction_bias, the gpt-oss
                             ///< router Linear's bias): num_experts values per MoE layer
    bool expertBias = false; ///< biases on each routed expert's gate, up and down (gpt-oss gate_up_proj_bias of
                             ///< 2 x width and down_proj_bias of hidden, modeling_gpt_oss.py GptOssExperts)
    Count sharedExpertFfnHiddenSize = 0; ///< width of one shared expert's MLP; 0 = the routed expert width (DeepSeek).
                                         ///< Qwen2-MoE: shared_expert_intermediate_size (5632 vs 1408 routed)
    bool sharedExpertGate = false; ///< Qwen2-MoE: sigmoid gate Linear(hidden, 1, bias=False) scaling the shared
                                   ///< expert's output (modeling_qwen2_moe.py, shared_expert_gate)
    bool sparseMixer = false; ///< Phi-3.5-MoE: SparseMixer routing (Gumbel-sampled experts, Heun's midpoint) and a
                              ///< jittered MoE input in training (modeling_phimoe.py); the tensors its training
                              ///< keeps are not modelled (training is refused), inference routes top-k as usual
    /// After the leading dense layers, layer i (from 0) has experts when (i + 1) % layer_interval == 0 and a dense
    /// MLP of ffn_hidden_size otherwise: Llama 4 Maverick's interleave_moe_layer_step 2 (layers 1, 3, ...),
    /// Qwen2-MoE's decoder_sparse_step. 1 = every layer after the leading dense ones.
    Count layerInterval = 1;
    /// transformers' Llama4TextMoe (modeling_llama4.py@4.57.1): every expert runs on every token (the input repeated
    /// num_experts times, one bmm), the unrouted ones weighted by zero; training and hf-generate inference keep
    /// tensors num_experts times a routed MoE's, which is not modelled (refused). The engines route top-k.
    bool everyExpertEveryToken = false;
    bool enabled() const { return numExperts > 0; }
};

/// DeepSeek multi-head latent attention shapes.
struct MlaSpec {
    Count qLoraRank = 0; ///< 0 = plain q projection
    Count kvLoraRank = 0;
    Count qkNopeHeadDim = 0;
    Count qkRopeHeadDim = 0;
    Count vHeadDim = 0;
};

/// Which image encoder: SigLIP with Gemma 3's projector, or the Qwen3.5 vision transformer (models/qwen3_5/
/// modeling_qwen3_5.py Qwen3_5VisionModel: a Conv3d patch embedding over temporal_patch_size frames, learned
/// positions, pre-LayerNorm blocks with biases, and a patch merger of spatial_merge_size^2 patches into the
/// language model's width).
/// Or Llama 4's (modeling_llama4.py Llama4VisionModel: a linear patch embedding, a class token, pre- and
/// post-LayerNorms, a pixel-shuffle MLP adapter and a linear projector).
/// Or Qwen2.5-VL's (modeling_qwen2_5_vl.py@4.57.1 Qwen2_5_VisionTransformerPretrainedModel: a bias-free Conv3d patch
/// embedding, no learned positions (2D RoPE), RMSNorm blocks with a biased qkv/proj and a biased gated SiLU MLP, and
/// a patch merger whose norm is an RMSNorm).
enum class VisionKind { Siglip, QwenVit, Llama4, Qwen25Vit };

/// A vision-language model's image encoder and its projector into the language model: SigLIP
/// (modeling_siglip.py SiglipVisionTransformer without the pooling head) and Gemma 3's projector
/// (modeling_gemma3.py Gemma3MultiModalProjector), or Qwen3.5's, Llama 4's or Qwen2.5-VL's (VisionKind). hidden_size
/// 0 = a text-only model.
struct VisionSpec {
    Count hiddenSize = 0;
    Count intermediateSize = 0;
    Count numLayers = 0;
    Count numHeads = 0;
    Count imageSize = 0; ///< pixels per side (SigLIP, Llama 4)
    Count patchSize = 0; ///< pixels per side of one patch
    Count channels = 3;
    VisionKind kind = VisionKind::Siglip;
    Count temporalPatchSize = 0; ///< Qwen: frames one patch spans (the Conv3d's depth)
    Count spatialMergeSize = 0; ///< Qwen: patches per side the merger joins into one token
    Count outHiddenSize = 0; ///< Qwen: the merger's output width (the language model's hidden size); Llama 4:
                             ///< vision_output_dim, the adapter's output and the projector's input
    Count numPositionEmbeddings = 0; ///< Qwen: learned positions, interpolated to the image
    Count projectorInputDim = 0; ///< Llama 4: the adapter fc1's output width (projector_input_dim)
    bool enabled() const { return hiddenSize > 0; }
    bool qwen() const { return kind == VisionKind::QwenVit; }
    bool qwen25() const { return kind == VisionKind::Qwen25Vit; }
    /// A fixed image size and learned positions per patch (SigLIP, Llama 4), not Qwen's dynamic resolution.
    bool fixedImage() const { return kind == VisionKind::Siglip || kind == VisionKind::Llama4; }
    /// Learned positions, one per patch (throws SizeOverflow past 63 bits, as any size here).
    Count patches() const { return patchSize > 0 ? checkedMul(imageSize / patchSize, imageSize / patchSize) : 0; }
};

/// The recurrent token mixers of hybrid models. Mamba-2 (transformers models/mamba2/modeling_mamba2.py Mamba2Mixer;
/// Nemotron-H, Falcon-H1 and Granite-4.0-H build the same tensors): in_proj to [z, x, B, C, dt], a depthwise causal
/// conv over [x, B, C], the selective scan over `num_heads` heads of `head_dim` with a `state_size` state, a gated
/// RMSNorm and out_proj. Gated DeltaNet (Qwen3-Next, Qwen3.5: models/qwen3_next/modeling_qwen3_next.py
/// Qwen3NextGatedDeltaNet) maps onto the same shapes: value heads are `num_heads` of `head_dim`, key heads are
/// `groups` of `state_size` (q and k take B's and C's place in the conv), each value head keeps a head_dim x
/// state_size state; in_proj adds a second per-head value (b and a), there is no D, and the gated norm is one
/// RMSNorm over head_dim shared by the heads.
/// layers 0 = no state-space layers.
enum class SsmKind { Mamba2, GatedDeltaNet };

struct SsmSpec {
    Count layers = 0; ///< blocks with a Mamba-2 mixer
    Count numHeads = 0; ///< mamba_num_heads
    Count headDim = 0; ///< mamba_head_dim: heads x head_dim is the inner width
    Count stateSize = 0; ///< ssm_state_size (d_state)
    Count groups = 1; ///< n_groups: heads of a group share B and C
    Count convKernel = 4; ///< conv_kernel (d_conv)
    bool bias = false; ///< biases on in_proj and out_proj (use_bias)
    bool convBias = true; ///< the conv's bias (use_conv_bias)
    bool gatedNorm = true; ///< RMSNormGated(inner) before out_proj (Falcon-H1's mamba_rms_norm can leave it out)
    bool parallel = false; ///< runs beside attention in the same block and reads its norm (Falcon-H1)
    SsmKind kind = SsmKind::Mamba2;
    /// The scan state's dtype the checkpoint's config.json names (Qwen3.5's mamba_ssm_dtype), which the engines
    /// take when the user leaves theirs on auto; unset = the engine's own default.
    std::optional<DType> stateDtype = std::nullopt;
    bool enabled() const { return layers > 0; }
    bool deltaNet() const { return kind == SsmKind::GatedDeltaNet; }
    Count innerWidth() const { return checkedMul(numHeads, headDim); }
    Count convWidth() const { return checkedAdd(innerWidth(), checkedMul(2, groups, stateSize)); } ///< x, B and C
    /// z, xBC and one value per head (Mamba-2's dt; Gated DeltaNet's b and a, two per head).
    Count inProjWidth() const
    {
        return checkedAdd(innerWidth(), convWidth(), checkedMul(deltaNet() ? 2 : 1, numHeads));
    }
    Count normWidth() const { return deltaNet() ? headDim : innerWidth(); } ///< the gated RMSNorm's weight
    const char* label() const { return deltaNet() ? "Gated DeltaNet" : "Mamba-2"; }
};

/// The architecture of a decoder-only transformer, as in a scenario's `model` object.
struct ModelSpec {
    std::string preset; ///< preset it came from, if any
    std::string name; ///< display name
    Count vocabSize = 0;
    Count hiddenSize = 0;
    Count numLayers = 0;
    Count numHeads = 0;
    Count numKvHeads = 0; ///< 1 = MQA, between 1 and num_heads = GQA
    Count headDim = 0; ///< may differ from hidden / heads (Gemma)
    Count ffnHiddenSize = 0;
    MlpKind mlp = MlpKind::SwiGlu;
    NormKind norm = NormKind::RmsNorm;
    /// LayerNorm's bias; false: a weight only, computed in fp32 as Cohere's CohereLayerNorm does it
    /// (modeling_cohere.py: x.to(float32), mean subtracted, rsqrt of the variance, weight.to(float32) * x, cast back).
    bool normBias = true;
    PositionKind position = PositionKind::Rope;
    Count maxPositionEmbeddings = 0;
    Count rotaryDim = 0; ///< channels of a head that RoPE rotates (partial_rotary_factor x head_dim); 0 = all
    bool bias = false; ///< biases on every attention and MLP linear layer
    bool qkvBias = false; ///< biases on the q, k, v projections only (Qwen2)
    bool attentionBias = false; ///< biases on q, k, v and o but not the MLP (Phi-3.5-MoE; Llama, Qwen3, OLMo's
                                ///< attention_bias without mlp_bias: modeling_llama.py LlamaAttention)
    bool lmHeadBias = false; ///< a bias on the LM head, vocab values (Phi-3.5-MoE lm_head_bias)
    bool qkNorm = false; ///< RMSNorm over head_dim on q and k (Gemma 3, Qwen3)
    bool attentionOutputGate = false; ///< q_proj also yields a sigmoid gate per query channel that scales the
                                      ///< attention output (Qwen3-Next, Qwen3.5 attn_output_gate): q_proj 2 x wide
    bool qkNormFullWidth = false; ///< with qkNorm: one RMSNorm over all q heads (heads x head_dim) and one over
                                  ///< all k heads, not one per head (OLMo-2, modeling_olmo2.py Olmo2Attention)
    bool postNorms = false; ///< extra norms after the attention and MLP outputs (Gemma 2/3)
    bool normAfterSublayers = false; ///< OLMo-2: no norm before attention or the MLP; each output is normalized
                                     ///< before the residual add (x + norm(attn(x))). Same two norms per layer.
    bool normScaleFp32 = false; ///< RMSNorm multiplies its weight before casting back (Olmo2RMSNorm), so the
                                ///< fp32 normalized tensor is what the weight's gradient keeps
    bool parallelResidual = false; ///< x + attn(norm_1(x)) + mlp(norm_2(x)) (GPT-NeoX, Phi, StableLM-Alpha)
    bool sharedAttentionNorm = false; ///< with parallelResidual: the MLP reads norm_1's output (Phi-1.5)
    bool attentionSinks = false; ///< a learnable logit per query head and layer joins each softmax (gpt-oss sinks)
    bool clampedSwiGlu = false; ///< gpt-oss experts: min(gate, 7) * sigmoid(1.702 min(gate, 7)) * (clamp(up, -7, 7)
                                ///< + 1); the tensors its training keeps are not modelled (training is refused)
    bool tiedEmbeddings = false;
    double dropout = 0.0;
    Count slidingWindow = 0; ///< 0 = full attention in every layer
    Count globalLayerInterval = 0; ///< with a window: every Nth layer is global (Gemma 3: 6); 0 = all local
    /// The local layers attend within fixed chunks of sliding_window tokens (positions p // window equal), not a
    /// window sliding with each token: Llama 4's attention_chunk_size, its global layers NoPE.
    bool chunkedLocalAttention = false;
    AttentionType attentionType = AttentionType::Mha;
    MlaSpec mla;
    MoeSpec moe;
    VisionSpec vision; ///< loaded with the language model, frozen in training; images are not modelled
    SsmSpec ssm; ///< hybrid state-space models: Mamba-2 mixers in `ssm.layers` blocks
    Count attentionFreeLayers = 0; ///< blocks without attention (hybrid models: Mamba-2 or MLP only)
    Count mlpFreeLayers = 0; ///< blocks without an MLP (Nemotron-H's mixer-only blocks)
    /// Multimodal RoPE (rope_scaling / rope_parameters with mrope_section: Qwen2.5-VL, Qwen3.5): vLLM's
    /// MRotaryEmbedding sizes its cos/sin cache for 4 x max_position_embeddings positions (rotary_embedding/mrope.py).
    bool mrope = false;

    Count qWidth() const { return numHeads * headDim; } ///< a * d
    Count kvWidth() const { return numKvHeads * headDim; } ///< g * d
    bool gated() const { return mlp != MlpKind::Gelu; }
    Count expertWidth() const { return moe.expertFfnHiddenSize > 0 ? moe.expertFfnHiddenSize : ffnHiddenSize; }
    Count sharedExpertWidth() const
    {
        return moe.sharedExpertFfnHiddenSize > 0 ? moe.sharedExpertFfnHiddenSize : expertWidth();
    }
    Count attentionLayers() const { return numLayers - attentionFreeLayers; } ///< blocks that attend (keep KV)
    Count mlpLayers() const { return numLayers - mlpFreeLayers; } ///< blocks with an MLP, dense or MoE
    /// Blocks with a norm before their token mixer: attention, or a Mamba-2 mixer of its own.
    Count mixerNormLayers() const { return attentionLayers() + (ssm.parallel ? 0 : ssm.layers); }
    Count moeLayers() const { return moeLayersIn(0, mlpLayers()); }
    Count denseLayers() const { return mlpLayers() - moeLayers(); }
    /// MoE layers among the layers [lo, hi) (a pipeline stage; llama.cpp's per-layer placement).
    Count moeLayersIn(Count lo, Count hi) const;
    bool isMoeLayer(Count layer) const { return moeLayersIn(layer, layer + 1) == 1; }
    bool hybrid() const { return ssm.enabled() || attentionFreeLayers > 0 || mlpFreeLayers > 0; }
    /// Attention layers attending to the whole sequence (the rest use the sliding window).
    Count globalLayers() const;
    Count localLayers() const { return attentionLayers() - globalLayers(); }
};

} // namespace vramlab
