// SPDX-License-Identifier: MIT
#include "vramlab/precision_regime.h"

namespace vramlab {

PrecisionRegime precisionRegime(const RunSpec& run)
{
    PrecisionRegime r {};
    switch (run.precision) {
    case Precision::Fp32:
        r = { DType::Fp32, std::nullopt, DType::Fp32, DType::Fp32, DType::Fp32, DType::Fp32 };
        break;
    case Precision::Bf16:
        r = { DType::Bf16, std::nullopt, DType::Bf16, DType::Bf16, DType::Bf16, DType::Bf16 };
        break;
    case Precision::Fp16:
        r = { DType::Fp16, std::nullopt, DType::Fp16, DType::Fp16, DType::Fp16, DType::Fp16 };
        break;
    case Precision::MixedBf16:
        r = { DType::Bf16, DType::Fp32, DType::Fp32, DType::Fp32, DType::Bf16, DType::Bf16 };
        break;
    case Precision::MixedFp16:
        r = { DType::Fp16, DType::Fp32, DType::Fp32, DType::Fp32, DType::Fp16, DType::Fp16 };
        break;
    }
    // DeepSpeed under ZeRO accumulates and partitions the gradients in the model's 16-bit type (engine.py@e2dc3eeb
    // _configure_zero...: grad_accum_dtype defaults to the model dtype when ZeRO is on); the fp32 gradient of the
    // partition exists only during the step. run.gradient_dtype is its data_types.grad_accum_dtype.
    if (run.framework == Framework::Deepspeed && run.mode == Mode::Training && run.parallelism.zeroStage >= 1
        && r.master)
        r.gradients = r.working;
    if (run.gradientDtype)
        r.gradients = *run.gradientDtype;
    if (run.masterWeights)
        r.master = *run.masterWeights ? std::optional<DType>(DType::Fp32) : std::nullopt;
    if (run.masterWeights && *run.masterWeights && r.working == DType::Fp32)
        r.master = std::nullopt; // an fp32 model is its own master copy
    if (run.optimizerStateDtype)
        r.optimizerStates = *run.optimizerStateDtype;
    if (run.fp8)
        r.compute = DType::Fp8;
    return r;
}

} // namespace vramlab
