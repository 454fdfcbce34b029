// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/model_spec.h"
#include "vramlab/run_spec.h"
#include "vramlab/serving_model.h"

#include <optional>
#include <string>

namespace vramlab {

/// The answer of a serving fit: the value found (none when nothing fits) and the estimate at it.
struct ServingFit {
    std::optional<Count> value;
    std::optional<ServingEstimate> estimate; ///< at `value`, or at the smallest value tried when nothing fits
    std::string explanation;
};

/// `run` with the engine's context flag (max_model_len, --context-length, n_ctx) at `context`.
RunSpec withContext(const RunSpec& run, Count context);

/// Requests of max_model_len tokens the cache holds (vLLM: whole blocks per request; 0 when
/// the engine does not start).
Count requestsHeld(const ServingEstimate& estimate, const Serving& serving);

/// Most concurrent requests of `context` tokens the engine's KV cache holds (vLLM: whole
/// blocks per request; SGLang: tokens), with max_model_len set to `context`.
ServingFit maxConcurrency(const ModelSpec& model, const RunSpec& run, Count context);

/// Longest max_model_len at which `concurrency` requests of that length fit the cache and the
/// engine starts (at most model.max_position_embeddings).
ServingFit longestContext(const ModelSpec& model, const RunSpec& run, Count concurrency);

/// Fewest GPUs (a tensor-parallel size: 1, 2, 4, 8, ... dividing the attention heads) at which
/// `concurrency` requests of max_model_len tokens fit.
ServingFit fewestGpus(const ModelSpec& model, const RunSpec& run, Count concurrency);

/// llama.cpp: most layers on the GPU (n_gpu_layers, the output layer counting as one) whose
/// weights, KV cache and compute buffer fit the GPU's memory.
ServingFit mostGpuLayers(const ModelSpec& model, const RunSpec& run);

} // namespace vramlab
