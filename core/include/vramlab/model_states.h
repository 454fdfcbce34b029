// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/activation_model.h"
#include "vramlab/dtype.h"
#include "vramlab/model_spec.h"
#include "vramlab/parameter_tensors.h"
#include "vramlab/run_spec.h"

#include <string>
#include <vector>

namespace vramlab {

/// A parameter tensor's share on one GPU after tensor, pipeline and expert parallelism
/// (ZeRO sharding is applied later, by modelStates()).
struct LocalParam {
    std::string_view name; ///< static text (the ParamTensor's name)
    Count rows = 1; ///< local shape of one copy
    Count cols = 0;
    Count copies = 1; ///< copies on this GPU (layers x experts)
    bool trainable = true;
    bool expert = false; ///< ZeRO group is data-parallel / expert-parallel
    bool linear = false;
    DType frozenStorage = DType::Bf16; ///< storage of a frozen tensor (NF4 under QLoRA)
    char loraPart = 0; ///< 'A' or 'B' for a LoRA adapter of tensor `name`, 'M' for its DoRA magnitude
    Count elements() const { return checkedMul(rows, cols, copies); }
};

/// Per-GPU bytes of the training (or serving) state, each with the formula it used.
struct ModelStateBytes {
    Bytes weights = 0, master = 0, gradients = 0, optimizer = 0;
    Bytes hostBytes = 0; ///< offloaded to host memory, per GPU process
    /// The part of `optimizer` that bitsandbytes' paged optimizers keep in CUDA unified memory (cudaMallocManaged):
    /// outside PyTorch's allocator, resident on the GPU after each step's prefetch, evicted to the host under pressure.
    Bytes pagedOptimizer = 0;
    Count trainableLocal = 0, frozenLocal = 0; ///< parameters on this GPU before ZeRO sharding
    /// Frozen parameters whose gradients are computed anyway (FSDP1 flat parameters holding adapters).
    Count frozenWithGradients = 0;
    std::string weightsFormula, masterFormula, gradientsFormula, optimizerFormula, hostFormula;
    /// Weights + master copy + gradients + optimizer states on this GPU.
    Bytes total() const { return checkedAdd(checkedAdd(weights, master), checkedAdd(gradients, optimizer)); }
};

/// Tensors held by one GPU of the pipeline stage `slice`, LoRA adapters included.
std::vector<LocalParam> localParameters(const ModelSpec& model, const RunSpec& run, const StageSlice& slice);
/// Same, from an already built parameterTensors(model) list.
std::vector<LocalParam> localParameters(
    const std::vector<ParamTensor>& tensors, const ModelSpec& model, const RunSpec& run, const StageSlice& slice);

/// Parameters of the LoRA adapters added to `model` (rank x (in + out) per targeted linear).
Count loraParameters(const ModelSpec& model, const Finetune& finetune);
/// Whether run.finetune.targets adapts the linear `module` ("q", "down", ...; "all-linear" every one but lm_head).
bool isTarget(const Finetune& finetune, std::string_view module);

/// Weights, master copy, gradients and optimizer states of one GPU.
/// Works on any parameter list, so a textbook "P parameters" case is a single tensor.
/// `explain` false skips the formula texts (sweeps and fits need only the bytes).
ModelStateBytes modelStates(const std::vector<LocalParam>& params, const RunSpec& run, bool explain = true);

} // namespace vramlab
