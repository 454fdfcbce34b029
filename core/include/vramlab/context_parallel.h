// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/model_spec.h"
#include "vramlab/run_spec.h"

namespace vramlab {

/// Refuses, naming the key, what run.parallelism.context_parallel > 1 is not modelled with
/// (frameworks other than torchtitan, eager attention, degrees that do not divide the
/// GPUs or 2 x the sequence). context_parallel 1 is no context parallelism and always passes; inference ignores the
/// key. What is modelled and its sources: core/src/activation_model.cpp, ringAttentionBuffers().
void validateContextParallel(const ModelSpec& m, const RunSpec& r);

} // namespace vramlab
