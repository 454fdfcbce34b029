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
std::vector<Component> overheadParts(const ModelSpec& model, const RunSpec& run, const ParameterCount& params,
    const ActivationSet& activations, Count microBatchesInFlight, bool explain = true);

} // namespace vramlab
