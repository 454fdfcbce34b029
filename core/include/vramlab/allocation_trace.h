// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/activation_model.h"
#include "vramlab/caching_allocator.h"
#include "vramlab/step_timeline.h"

#include <array>
#include <vector>

namespace vramlab {

/// A parameter tensor of this GPU as the allocator replay sees it (LocalParam's shape).
struct ParamShape {
    Count elements = 0; ///< one copy
    Count copies = 1; ///< copies on this GPU (layers x experts for layer tensors)
    bool layer = false; ///< one of the transformer layers' tensors (placed layer by layer)
    bool trainable = false;
    Bytes weightsEach = -1; ///< one copy's working weight (modelStates of the tensor alone); -1: spread by elements
};

/// What the replay needs beyond simulateStep()'s byte totals: the same step, tensor by tensor.
/// Made only when EstimateOptions::replayAllocator asks for it (never on the lean path).
struct ReplayInputs : StepInputs {
    std::vector<ParamShape> params; ///< the resident states spread over these shapes
    int optimizerStateTensors = 2; ///< state tensors per trainable parameter (Adam: exp_avg, exp_avg_sq)
    std::vector<SavedTensorSize> savedSizes; ///< ActivationSet::sizes (embedding, layers, head)
    std::vector<SavedTensorSize> recomputeSizes; ///< one rebuilt layer's tensors (empty: one block)
    std::array<Bytes, 2> lossForwardParts {};
    Bytes largestLayerTensor = 0; ///< backwardWorkingSet is two of these
    /// Context parallelism: ring attention's transients while a layer's attention runs, forward (and its
    /// recompute) and backward, in allocation order (SavedTensorSizes::ringForward, ringBackward).
    std::vector<Bytes> ringForwardSizes, ringBackwardSizes;
    std::vector<Bytes> doraForwardSizes; ///< DoRA's weight-norm transients of a layer's widest adapted linear
    std::vector<Bytes> residentExtras; ///< allocator tensors that stay all step: cuBLAS workspace, buckets, ...
    Bytes outsideAllocator = 0; ///< what the caching allocator never sees (CUDA context, NCCL's own buffers)
};

/// What PyTorch's allocator counters would show for the simulated training.
struct AllocatorPeaks {
    Bytes peakAllocatedBytes = 0; ///< torch.cuda.max_memory_allocated(): live blocks
    Bytes peakReservedBytes = 0; ///< torch.cuda.max_memory_reserved(): cudaMalloc'd segments
    bool outOfMemory = false; ///< an allocation failed even after the cache was released
    bool extrapolated = false; ///< layers beyond the simulated ones added by their steady increment
    Count simulatedLayers = 0;
    Count operations = 0; ///< allocations and frees replayed
    Count cachedBlocks = 0; ///< free blocks the allocator holds at the end
};

/// Layers x micro-batches replayed one by one before the replay extrapolates.
inline constexpr Count kFullReplayLayers = 256;

/// Replays steps 1 and 2 of training tensor by tensor through CachingAllocator, in the order
/// simulateStep() walks them: the resident states as one tensor per parameter tensor (and per
/// optimizer state), each layer's saved tensors, the loss's logits and gradients, backward's
/// working set and rebuilt layers, gradients as set_to_none makes them reappear, ZeRO gathers
/// and buckets, the optimizer's temporaries. Beyond kFullReplayLayers two runs (a and
/// a + period layers) give the per-layer increment of both peaks, which is added for the rest
/// unless the result passes `config.capacityBytes`, where the whole stage is replayed so that
/// the release-and-retry path decides.
AllocatorPeaks replayTrainingStep(const ReplayInputs& in, const CachingAllocatorConfig& config);

/// The first `layers` layers of the stage only (the rest left out): one run of the extrapolation.
AllocatorPeaks replayLayers(const ReplayInputs& in, const CachingAllocatorConfig& config, Count layers);

/// The same with every layer replayed (tests compare it with the extrapolation).
AllocatorPeaks replayTrainingStepFully(const ReplayInputs& in, const CachingAllocatorConfig& config);

} // namespace vramlab
