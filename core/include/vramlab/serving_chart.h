// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/component_kind.h"
#include "vramlab/model_spec.h"
#include "vramlab/run_spec.h"
#include "vramlab/serving_model.h"
#include "vramlab/serving_speed.h"

#include <optional>
#include <string>
#include <vector>

namespace vramlab {

/// The Serving page's charts, computed here (as chart_data.h does for the other charts) so
/// that the window only draws them.

/// One segment of a serving bar, bottom to top.
struct ServingSegment {
    std::string
        key; ///< "weights", "activation_peak", "non_torch", "cuda_graphs", "kv_cache", "compute_buffer", "unused"
    std::string label; ///< "Activation peak"
    Bytes bytes = 0;
    ColourRole colour = ColourRole::Grey; ///< the matching report component's colour
};

/// One bar: a GPU rank of vLLM/SGLang, or a device of llama.cpp.
struct ServingBar {
    std::string label; ///< "pp rank 0 (layers 0-31)", "CUDA0"
    std::vector<ServingSegment> segments;
    std::optional<Bytes> capacityBytes; ///< the GPU's memory (none for llama.cpp's CPU)
    /// Every segment but the unused margin: what the engine takes.
    Bytes usedBytes() const;
    Bytes bytesOf(const std::string& key) const;
};

/// The memory budget of every rank (or device) against the GPU, with the engine's budget line.
struct ServingBudgetChart {
    std::vector<ServingBar> bars;
    Bytes gpuBytes = 0; ///< per GPU, as the engine reads it
    std::optional<Bytes> budgetBytes; ///< vLLM: gpu_memory_utilization x memory; SGLang: non-torch + its static share
    std::string budgetLabel; ///< "gpu_memory_utilization 0.90: 21.22 GiB" (SGLang's line includes non-torch)
};

/// Bars of `e`: weights, activation peak, non-torch, CUDA graphs and KV cache (none when negative:
/// startup fails), then the unused margin up to the GPU's memory; llama.cpp: weights, KV buffer
/// and compute buffer per device.
ServingBudgetChart servingBudgetChart(const RunSpec& run, const ServingEstimate& e);

/// Max concurrency (kv_cache_tokens / context, as vLLM prints it) at one context length.
struct ConcurrencyPoint {
    Count context = 0;
    double concurrency = 0;
    bool startupFails = false;
};

struct ConcurrencyCurve {
    std::vector<ConcurrencyPoint> points; ///< ascending contexts, the current one included
    ConcurrencyPoint current; ///< the scenario's own max_model_len (SGLang: context_length; llama.cpp: n_ctx)
};

/// The serving model run again at max_model_len (SGLang context_length) from 256 tokens, doubling,
/// up to the model's max_position_embeddings (131072 when unknown), plus the current length:
/// vLLM's profiling batch follows max_model_len, so the curve is not simply tokens / context.
/// llama.cpp: its n_ctx cells shared by parallel slots of `context` tokens (n_ctx / context).
/// A length the engine refuses (InputError) is left out.
ConcurrencyCurve concurrencyCurve(const ModelSpec& model, const RunSpec& run, const ServingEstimate& current);

/// Speed as serve-estimate reports it by default: the batch the cache holds (at most
/// max_num_seqs), every request prefilling and attending to max_model_len tokens.
ServingSpeed defaultServingSpeed(const ModelSpec& model, const RunSpec& run, const ServingEstimate& e);

/// The window's one-line answer: "STARTS: 31,312 KV tokens, 1.57x at 20,000 tokens", or
/// "DOES NOT START: " with the same figures.
std::string servingVerdict(const ServingEstimate& e);

} // namespace vramlab
