// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/model_spec.h"
#include "vramlab/run_spec.h"

#include <string>
#include <vector>

namespace vramlab {

/// Which part of the model keeps a saved tensor.
enum class ActivationScope { Layer, Embedding, Head };

/// One tensor that autograd keeps for backward, `count` times per micro-batch
/// (count = layers of that kind, or checkpoint segments).
struct ActivationTensor {
    std::string name;    ///< "softmax probabilities (fp32)"
    std::string module;  ///< "attention", "mlp", "norm", "embedding", "loss", ...
    ActivationScope scope = ActivationScope::Layer;
    Bytes bytesEach = 0; ///< one copy, one micro-batch, one GPU
    Count count = 1;
    std::string formula; ///< shape x bytes with the numbers plugged in
    Bytes total() const { return checkedMul(bytesEach, count); }
};

/// Saved tensors of one micro-batch on one GPU of a pipeline stage.
struct ActivationSet {
    std::vector<ActivationTensor> tensors;
    Bytes bytes = 0;          ///< sum over tensors (one micro-batch)
    Bytes recomputeBytes = 0; ///< transient: activations rebuilt at once in backward (checkpointing)
};

/// Which layers and ends of the model a GPU holds.
struct StageSlice {
    Count denseLayers = 0;
    Count moeLayers = 0;
    Count globalLayers = 0; ///< of those layers, attending to the whole sequence
    bool first = true;      ///< holds the embedding
    bool last = true;       ///< holds the final norm, LM head and loss
    Count layers() const { return denseLayers + moeLayers; }
};

/// The tensors autograd keeps for backward during one micro-batch's forward pass.
///
/// `eager` follows what plain PyTorch modeling code keeps, tensor by tensor, exactly as
/// shared/reference/torch_reference.py measures it (fp32 RMSNorm copies, the fp32 softmax
/// and its 16-bit copy, repeated K/V for GQA, bool dropout masks, autograd's 8-byte
/// wrapped scalars, the fp32 log-softmax of the loss). `flash` is the same model on a GPU
/// with FlashAttention/SDPA: Q, K, V, the output and the fp32 log-sum-exp instead of the
/// s^2 terms, K/V not repeated, dropout masks of attention regenerated from the RNG.
ActivationSet trainingActivations(const ModelSpec& model, const RunSpec& run, const StageSlice& slice);

/// Bytes of the tensors alive at once while one layer runs forward at inference
/// (prefill of the whole context), plus the last position's fp32 logits.
ActivationSet inferenceActivations(const ModelSpec& model, const RunSpec& run);

} // namespace vramlab
