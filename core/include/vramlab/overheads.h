// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/activation_model.h"
#include "vramlab/model_spec.h"
#include "vramlab/parameter_tensors.h"
#include "vramlab/report.h"
#include "vramlab/run_spec.h"

#include <vector>

namespace vramlab {

/// The memory that is not a model tensor, each part a stated, user-changeable default:
/// CUDA context, cuBLAS workspace, the caching allocator's 512-byte rounding of every
/// saved tensor plus an optional fragmentation share, communication buffers (NCCL and
/// gradient buckets) with more than one GPU, ZeRO-3's gathered and prefetched layer, and
/// QLoRA's dequantized weight of the largest layer.
/// PyTorch DDP's two 25 MiB gradient buckets in the communication buffers, where data parallelism reduces through
/// them (DeepSpeed's ZeRO reduces through its own bucket instead: deepSpeedBucketBytes).
/// Whether the data parallelism is torch's DistributedDataParallel (no ZeRO, no FSDP; Megatron and DeepSpeed bring
/// their own): its Reducer allocates flat buckets covering every trainable parameter at construction.
bool torchDdp(const RunSpec& run);
/// Gradient buckets data parallelism holds besides the gradients: torch DDP's reducer buckets, every gradient
/// again (`gradientBytes`) unless gradient_as_bucket_view, else two 25 MiB buckets in flight.
Bytes ddpBucketBytes(const RunSpec& run, Bytes gradientBytes);

/// DeepSpeed ZeRO's 16-bit gradient bucket (zero_optimization.reduce_bucket_size elements, default 5e8:
/// runtime/zero/config.py@e2dc3eeb); 0 outside DeepSpeed's ZeRO training.
Bytes deepSpeedBucketBytes(const RunSpec& run);

/// What DeepSpeed ZeRO-3 keeps gathered (runtime/zero/partitioned_param_coordinator.py and
/// partition_parameters.py@e2dc3eeb); all zero outside DeepSpeed's ZeRO-3 training. Arithmetic only: the step
/// inputs ask for it too (its persistent small tensors are the overhead part's own walk over the tensors).
struct DeepSpeedZero3 {
    Bytes gatherBytes = 0; ///< while a layer runs: the current module, the prefetch and its coalesced buffer
    Count keptLayers = 0; ///< trailing layers whose reuse in backward is nearer than stage3_max_reuse_distance
    Bytes keptAtLossBytes = 0; ///< those layers and the LM head, gathered from their forward through the loss
};
DeepSpeedZero3 deepSpeedZero3(const ModelSpec& model, const RunSpec& run, const ParameterCount& params);

std::vector<Component> overheadParts(const ModelSpec& model, const RunSpec& run, const ParameterCount& params,
    const ActivationSet& activations, Count microBatchesInFlight, Bytes gradientBytes, bool explain = true);

} // namespace vramlab
