// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/flops_model.h"
#include "vramlab/report.h"
#include "vramlab/scenario.h"

#include <optional>
#include <string>
#include <vector>

namespace vramlab {

struct PlanRequest {
    Count gpus = 8;
    std::optional<Count> globalBatch; ///< sequences per optimizer step; default: the scenario's
    int topK = 10;
    Count maxTensorParallel = 8; ///< tensor parallelism stays inside one NVLink domain
    Count maxPipelineParallel = 0; ///< 0: up to the layer count
    bool allowOffload = true;
};

/// One way to run the scenario on the GPUs, with its peak and step time.
struct PlanCandidate {
    int zeroStage = 0;
    /// ZeRO-3 as the base scenario shards (DeepSpeed's, FSDP2 or FSDP1); the other stages are ZeRO's.
    Sharding sharding = Sharding::Zero;
    Count tensorParallel = 1, pipelineParallel = 1, expertParallel = 1;
    Count microBatch = 1, accumulation = 1;
    /// Megatron-style sequence parallelism, on with every TP > 1 (it only saves memory); the
    /// summary and the JSON say so, so the row entered by hand gives the same peak.
    bool sequenceParallel = false;
    Checkpointing checkpointing;
    bool offloadOptimizer = false, offloadParams = false;
    Bytes peak = 0;
    bool fits = false;
    bool lowerBound = false; ///< the peak is only a lower bound (Report::lowerBound): "at least" wherever shown
    StepTimeParts time;
    double tokensPerS = 0;
    std::string why; ///< why it wins, or what it loses to the winner
    /// "ZeRO-2, TP 2 + sequence parallel, PP 1, micro-batch 4 x 8, checkpointing full, no offload":
    /// every setting applyCandidate() changes, named.
    std::string summary() const;
};

struct PlanResult {
    std::vector<PlanCandidate> top; ///< fitting, fastest first
    std::optional<PlanCandidate> fastestUnfit; ///< faster than the winner but over the memory
    Count evaluated = 0; ///< configurations estimated
    Count fitting = 0;
    Count globalBatch = 0;
    Count gpus = 0;
    std::vector<std::string> notes; ///< options left out and why ("no offload: the GPU has no host link speed")
};

/// Enumerates ZeRO stage x tensor parallel x pipeline parallel x micro-batch x
/// checkpointing x offload for the scenario's model, run and GPU type, keeps those whose
/// peak fits and ranks them by step time. Throws InputError without run.gpu, for
/// inference, or when the global batch cannot be split over any data-parallel size.
PlanResult plan(const Scenario& base, const PlanRequest& request);

/// The scenario's run with a candidate's choices applied (what "apply" in the window does).
RunSpec applyCandidate(const RunSpec& base, const PlanCandidate& candidate, Count gpus);

} // namespace vramlab
