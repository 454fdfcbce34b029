// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/model_spec.h"
#include "vramlab/run_spec.h"
#include "vramlab/serving_spec.h"

#include <string>
#include <vector>

namespace vramlab {

/// Keeps a run on a new model (an imported config.json): every setting that still applies
/// stays; each one the model rules out (tensor parallelism that does not divide its heads,
/// more pipeline stages than layers, a sequence beyond its positions, LoRA targets it does
/// not have, expert parallelism without experts) goes back to its default. Returns one
/// sentence per change ("run.parallelism.tensor_parallel: 3 -> 1 (expected a divisor of
/// model.num_heads (32), got 3)"); throws the model's own InputError when the model itself
/// is invalid.
std::vector<std::string> adaptRunToModel(const ModelSpec& model, RunSpec& run);

/// The vLLM serving a model starts from when only the engines' budgets are modelled for it (hybrid state-space
/// models, gated attention): the default version, or the first that serves a Gated DeltaNet model (0.10.2).
Serving vllmServingFor(const ModelSpec& model);

} // namespace vramlab
