// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/model_spec.h"
#include "vramlab/run_spec.h"

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace vramlab {

/// Which part of the model keeps a saved tensor.
enum class ActivationScope { Layer, Embedding, Head };

/// One tensor that autograd keeps for backward, `count` times per micro-batch
/// (count = layers of that kind, or checkpoint segments).
struct ActivationTensor {
    std::string name; ///< "softmax probabilities (fp32)"
    std::string_view module; ///< "attention", "mlp", "norm", "embedding", "loss", ... (static text)
    ActivationScope scope = ActivationScope::Layer;
    Bytes bytesEach = 0; ///< one copy, one micro-batch, one GPU
    Count count = 1;
    std::array<Count, 4> dims {}; ///< shape, `rank` entries used
    int rank = 0;
    double bytesPerElement = 0;
    Bytes total() const { return checkedMul(bytesEach, count); }
    /// "2 x 8 x 128 x 128 x 4 B": the shape with the element size (made on demand).
    std::string shapeText() const;
};

/// One saved tensor's size and place for the caching-allocator replay (allocation_trace.h),
/// collected only when trainingActivations() is asked for them (never on the lean path).
struct SavedTensorSize {
    Bytes bytesEach = 0;
    Count count = 1;
    Count firstLayer = 0; ///< scope Layer: the first layer of the stage that keeps it
    Count strideLayers = 1; ///< then every k-th layer (checkpointed segments)
    ActivationScope scope = ActivationScope::Layer;
};
/// Every saved tensor's size and place, for the caching-allocator replay: filled only when
/// trainingActivations() is handed one (the lean path never is).
struct SavedTensorSizes {
    std::vector<SavedTensorSize> saved; ///< what ActivationSet::bytes adds up (embedding, layers, head)
    std::vector<SavedTensorSize> recompute; ///< checkpointing: one rebuilt layer's tensors
    /// Context parallelism: ring attention's transients of one layer, in allocation order (forward, backward).
    std::vector<Bytes> ringForward, ringBackward;
    std::vector<Bytes> doraForward; ///< DoRA: the widest adapted linear's weight-norm transients, in allocation order
};

/// Saved tensors of one micro-batch on one GPU of a pipeline stage.
struct ActivationSet {
    std::vector<ActivationTensor> tensors;
    Bytes bytes = 0; ///< sum over tensors (one micro-batch)
    std::array<Bytes, 2> lossForwardParts {}; ///< lossForwardBytes as its tensors (logits, fp32 copy or chunk)
    Bytes recomputeBytes = 0; ///< transient: activations rebuilt at once in backward (checkpointing)
    Bytes checkpointInputBytes = 0; ///< checkpointing {"layers": n}: what one checkpointed layer keeps (its input)
    Bytes roundingBytes = 0; ///< what the caching allocator adds by rounding each tensor up to 512 B
    Bytes embeddingBytes = 0; ///< part of `bytes` kept by the embedding (scope Embedding)
    Bytes headBytes = 0; ///< part of `bytes` kept by the final norm, LM head and loss (scope Head)
    Bytes largestLayerTensorBytes
        = 0; ///< the largest single tensor one full layer saves (backward's working set scales with it)
    // The loss (last stage only), beside the saved tensors above (see lossSetup()):
    Bytes lossForwardBytes = 0; ///< transient while the loss's forward runs (logits, fp32 copies)
    Bytes lossBackwardBytes = 0; ///< transient while the loss's backward runs (gradients of the logits)
    Bytes lossHeldBytes
        = 0; ///< kept by the training loop from the loss forward to the end of backward (LitGPT's logits)
    std::string_view lossForwardWhat = "loss: logits and their fp32 copy beside the saved log-softmax";
    std::string_view lossBackwardWhat = "loss backward: two fp32 gradients of the logits";
    std::string_view lossSource
        = "logits.float() + cross_entropy (plain PyTorch)"; ///< which framework behaviour made the loss tensors
    std::string_view lossFramework; ///< the framework profile and version that chose it
    // torch.compile (run.compile): what the eager code would keep and the compiled graph does not.
    Bytes compileRemovedBytes = 0; ///< one micro-batch: eager bytes the partitioner recomputes instead
    std::vector<ActivationTensor> compileRemoved; ///< those tensors (when explained)
    std::string_view compileScope; ///< what the framework compiles (empty without run.compile)
    /// run.parallelism.context_parallel > 1 (torchtitan): ring attention's buffers, not saved for
    /// backward but alive while one layer's attention runs (see ringAttentionBuffers()).
    Bytes ringForwardBytes = 0; ///< the widest point of one ring attention forward (also its recompute)
    Bytes ringBackwardBytes = 0; ///< the widest point of one ring attention backward
    /// run.finetune.dora: the widest adapted linear's weight-norm transients (x_eye, B A, W + s B A), alive while
    /// it runs forward (and again in a recompute); see doraTransients().
    Bytes doraForwardBytes = 0;
    std::vector<ActivationTensor> doraTransients; ///< those tensors (when explained)
    std::vector<ActivationTensor> ringBuffers; ///< those buffers by name (when explained); module says which pass
    /// run.activation_offloading: bytes of one micro-batch's saved tensors held in pinned host
    /// memory instead (already left out of `bytes`).
    Bytes offloadedBytes = 0;
};

/// Which layers and ends of the model a GPU holds.
struct StageSlice {
    Count denseLayers = 0;
    Count moeLayers = 0;
    bool first = true; ///< holds the embedding
    bool last = true; ///< holds the final norm, LM head and loss
    /// Micro-batches whose embedding tensors are alive at once (interleaved 1F1B keeps several in one pass).
    Count embeddingMicroBatches = 1;
    Count firstLayer = 0; ///< the model's index of the slice's first layer (where its MoE layers fall)
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
/// `explain` false sums the bytes without listing the tensors (sweeps and fits).
/// `sizes`, given with `explain`, also receives every saved tensor's size and place (the
/// caching-allocator replay; they ride on the listing, so the lean path pays nothing for them).
ActivationSet trainingActivations(const ModelSpec& model, const RunSpec& run, const StageSlice& slice,
    bool explain = true, SavedTensorSizes* sizes = nullptr);

/// Bytes of the tensors alive at once while one layer runs forward at inference
/// (prefill of the whole context), plus the last position's fp32 logits.
ActivationSet inferenceActivations(const ModelSpec& model, const RunSpec& run, bool explain = true);

} // namespace vramlab
