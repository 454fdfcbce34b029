// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/run_spec.h"

#include <optional>

namespace vramlab {

/// The storage type of each kind of training state under a run's precision setting.
struct PrecisionRegime {
    DType working; ///< weights used by forward and backward
    std::optional<DType> master; ///< fp32 master copy for the update, if any
    DType gradients;
    DType optimizerStates;
    DType activations;
    DType compute; ///< GEMM input type (FLOP rate)
};

/// fp32: all fp32. bf16/fp16 (pure): everything in that type, no master copy.
/// mixed-bf16/-fp16: 16-bit working weights and activations, fp32 master weights,
/// gradients and optimizer states; `gradient_dtype` and `master_weights` override.
PrecisionRegime precisionRegime(const RunSpec& run);

} // namespace vramlab
