// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/model_spec.h"
#include "vramlab/run_spec.h"
#include "vramlab/serving_model.h"
#include "vramlab/serving_speed.h"

#include <optional>
#include <string>
#include <vector>

namespace vramlab {

/// A serving target on `gpus` GPUs of run.gpu's kind: `concurrency` requests of `context`
/// tokens each (the engine's max_model_len), `promptTokens` of them prefilled for TTFT, and
/// optional speed limits a setup must meet to count as fitting.
struct ServingPlanRequest {
    Count gpus = 1;
    Count concurrency = 1;
    Count context = 4096;
    Count promptTokens = 1024;
    std::optional<double> maxTpotS; ///< a decode-speed limit per user (seconds per output token)
    std::optional<double> maxTtftS; ///< a limit on the time to the first token of a promptTokens prompt
    std::optional<double> minTokensPerS; ///< output tokens per second of all replicas together, at least
    int topK = 10;
};

/// One way to deploy: dp replicas of tensor x pipeline parallel, with a KV-cache dtype.
struct ServingPlanCandidate {
    Count tensorParallel = 1, pipelineParallel = 1, dataParallel = 1;
    std::optional<DType> kvCacheDtype; ///< unset: the scenario's (auto = the model dtype)
    ServingEngine engine = ServingEngine::Vllm;
    Count context = 0; ///< the engine's context flag applyServingCandidate() sets (the request's context)
    Count requestsHeld = 0; ///< all replicas, at `context` tokens each
    Count batchPerReplica = 0; ///< requests one replica decodes together for the target
    ServingEstimate estimate; ///< one replica's engine accounting
    ServingSpeed speed; ///< one replica at batchPerReplica
    bool fits = false; ///< starts, holds the target, and meets every speed limit of the request
    /// Output tokens per second of every replica together (one replica's batch x replicas / TPOT).
    double tokensPerSAll() const { return speed.tokensPerSTotal * static_cast<double>(dataParallel); }
    std::string why; ///< why it wins, what it loses to #1, or why it does not fit
    /// "TP 2 x PP 1 x DP 4, kv_cache_dtype fp8, max_model_len 4,096": every setting
    /// applyServingCandidate() changes (SGLang: context_length).
    std::string summary() const;
};

struct ServingPlanResult {
    std::vector<ServingPlanCandidate> top; ///< fitting, lowest TPOT first (then TTFT, then fewer GPUs a replica)
    std::vector<ServingPlanCandidate> unfit; ///< those that do not fit, each with why
    Count evaluated = 0;
};

/// Ranks vLLM/SGLang deployments of the scenario's model on req.gpus GPUs: tensor-parallel
/// sizes dividing the heads (within one 8-GPU node), pipeline stages (vLLM), data-parallel
/// replicas for the rest, and the KV cache in the scenario's dtype or fp8. Each one is the
/// engine's own accounting (servingEstimate) and the roofline speed (servingSpeed).
ServingPlanResult servingPlan(const ModelSpec& model, const RunSpec& run, const ServingPlanRequest& request);

/// The scenario's run with the candidate's settings: tensor/pipeline parallel, every GPU
/// (tensor x pipeline x data-parallel replicas), max_model_len = the request's context,
/// kv_cache_dtype.
RunSpec applyServingCandidate(const RunSpec& run, const ServingPlanCandidate& candidate, Count context);

} // namespace vramlab
