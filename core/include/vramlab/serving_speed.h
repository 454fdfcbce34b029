// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/model_spec.h"
#include "vramlab/run_spec.h"
#include "vramlab/serving_model.h"

#include <string>

namespace vramlab {

/// Prefill and decode of a serving setup as a roofline: each phase takes the longer of its
/// FLOPs at the GPU's peak and its bytes at the memory bandwidth (an upper bound on speed:
/// kernels reach neither peak). Per GPU of a tensor-parallel group, plus the group's all-reduces at the
/// interconnect's bandwidth (their latency left out: still an upper bound on speed).
struct ServingSpeed {
    bool available = false; ///< false without a GPU bandwidth and peak
    Count batch = 0; ///< concurrent sequences decoding together
    Count promptTokens = 0; ///< one request's prompt (prefill)
    Count contextTokens = 0; ///< tokens each sequence attends to while decoding
    double prefillFlops = 0; ///< one request, per GPU
    double prefillBytes = 0;
    double ttftS = 0;
    std::string prefillBound; ///< "compute-bound" or "bandwidth-bound"
    double decodeFlops = 0; ///< one step of the whole batch, per GPU
    double decodeBytes = 0; ///< weights read once for the batch + every sequence's KV
    double expectedExperts = 0; ///< MoE: distinct routed experts a step reads per layer
    double prefillAllReduceS = 0; ///< tensor parallel: the prefill's all-reduces, serial with its compute
    double decodeAllReduceS = 0; ///< tensor parallel: one decode step's all-reduces
    double tpotS = 0;
    double tokensPerSPerUser = 0;
    double tokensPerSTotal = 0;
    std::string decodeBound;
    std::string formula;
};

/// `batch` sequences decoding at `context` tokens each; the first of them prefills `prompt`
/// tokens alone. MoE decode reads only the experts the batch routes to: E x (1 - (1 - k/E)^batch)
/// expected distinct experts per layer, as if tokens chose experts uniformly and independently.
ServingSpeed servingSpeed(const ModelSpec& model, const RunSpec& run, const ServingEstimate& estimate, Count batch,
    Count prompt, Count context);

} // namespace vramlab
