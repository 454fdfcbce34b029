// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/model_spec.h"

#include <string_view>
#include <vector>

namespace vramlab {

/// Where a parameter tensor sits; drives TP sharding, LoRA targets and MoE activity.
enum class ParamGroup { Embedding, Position, Attention, Mlp, Expert, SharedExpert, Router, Norm, Head, Vision, Ssm };

/// One parameter tensor of the model, repeated `copies` times (layers x experts).
/// Matrices are rows x cols (in x out for linear layers); vectors have rows == 1.
struct ParamTensor {
    std::string_view name; ///< "layers.attn.q.weight", "embed.weight", ... (static text)
    ParamGroup group;
    Count rows = 1;
    Count cols = 0;
    Count copies = 1; ///< identical tensors in the model (layers, experts)
    Count activeCopies = 1; ///< copies a token goes through (MoE: top-k of the experts)
    bool linear = false; ///< a linear layer's weight (quantizable, LoRA-targetable)
    std::string_view module; ///< LoRA target name for linears: q k v o gate up down ...
    Count elements() const { return rows * cols; }
    Count total() const { return checkedMul(elements(), copies); }
};

/// Every parameter tensor of the model, a tied LM head left out (it is the embedding).
std::vector<ParamTensor> parameterTensors(const ModelSpec& model);

/// Parameter counts derived from parameterTensors().
struct ParameterCount {
    Count total = 0; ///< every parameter once
    Count active = 0; ///< parameters one token goes through (MoE), embedding table included
    Count embedding = 0; ///< input embedding + learned positions
    Count head = 0; ///< untied LM head
    Count vision = 0; ///< a vision tower and its projector (model.vision): frozen in training
    Count perLayerMax = 0; ///< the largest transformer layer (ZeRO-3 gathers one at a time)
    Count perLayerMaxLinear = 0; ///< of which matrix-multiply weights (gathered in fp8 with fp8_all_gather)
    Count largestLayerTensor = 0; ///< the largest tensor of a layer, one copy (DeepSpeed ZeRO-3 fetches by module)
    Count matmulActive = 0; ///< active parameters used in matrix multiplies (FLOPs): no embedding lookups, norms or
                            ///< biases; LM head included even when tied
};

ParameterCount countParameters(const ModelSpec& model);
/// Same, from an already built parameterTensors(model) list.
ParameterCount countParameters(const std::vector<ParamTensor>& tensors, const ModelSpec& model);

} // namespace vramlab
