// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/activation_model.h"
#include "vramlab/component_kind.h"
#include "vramlab/gpu_catalog.h"
#include "vramlab/parameter_tensors.h"
#include "vramlab/step_timeline.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vramlab {

/// One bar segment: its bytes on one GPU and how they were computed.
struct Component {
    std::string_view key; ///< report key: weights, master_weights, gradients, ... (static text)
    std::string_view label; ///< "Optimizer states"
    Bytes bytes = 0;
    std::string formula; ///< with the numbers plugged in (empty when not explained)
    std::string_view explanation; ///< one sentence a workshop audience follows
};

/// Seconds of one optimizer step on one GPU, by cause: the one step time every view shows
/// (header, Explain, reports, CLI, Plan). Communication is not assumed to overlap with
/// compute (an upper bound; frameworks hide part of it).
struct StepTimeParts {
    double computeS = 0; ///< model FLOPs at the GPU's peak x run.mfu (compute efficiency)
    double recomputeS = 0; ///< FLOPs redone by checkpointing and flash backward, at the same rate
    double dataParallelS = 0; ///< gradient reduction, ZeRO gathers, over the interconnect
    double tensorParallelS = 0; ///< 4 all-reduces of the layer output per layer and micro-batch
    double pipelineS = 0; ///< bubble (pp - 1) / (micro-batches x virtual stages) of the busy time + sends
    double offloadS = 0; ///< host transfers of offloaded state and the CPU optimizer
    double total() const { return computeS + recomputeS + dataParallelS + tensorParallelS + pipelineS + offloadS; }
};

struct FlopsEstimate {
    double perToken = 0; ///< model FLOPs per trained (or generated) token
    double perStep = 0; ///< model FLOPs of one optimizer step, all GPUs
    double hardwarePerStep = 0; ///< + recomputation (checkpointing, flash backward) + frozenGradientsPerStep
    /// Gradients of frozen weights computed anyway (FSDP1 flat parameters holding adapters): compute time, not
    /// recomputation, and not model FLOPs.
    double frozenGradientsPerStep = 0;
    double forwardPerToken = 0; ///< 2 x matmul params + attention
    double attentionPerToken = 0; ///< forward attention term (QK^T and PV)
    Count tokensPerStep = 0; ///< micro-batch x sequence x accumulation x data-parallel
    double peakTflops = 0; ///< per GPU, in the compute dtype
    double efficiency = 0; ///< run.mfu: share of peak the hardware FLOPs run at
    /// Model FLOPs utilization the step time implies: model FLOPs / (GPUs x peak x step
    /// time). Training: below `efficiency` by recomputation, communication and bubbles.
    double mfu = 0;
    StepTimeParts time; ///< training with a GPU: the step time by cause
    double stepTimeS = 0; ///< training: time.total(); inference: one decode step
    double tokensPerS = 0; ///< all GPUs
    std::string formula;
};

/// The answer for one scenario (report version 1, with extensions).
struct Report {
    std::string scenarioName;
    ParameterCount params;
    Count trainableParams = 0;
    Count loraParams = 0;

    /// weights, master_weights, gradients, optimizer_states, activations, kv_cache, overhead: per GPU.
    std::vector<Component> components;
    std::vector<Component> overheadParts;
    ActivationSet activations; ///< one micro-batch's saved tensors on the reported stage
    Count microBatchesInFlight = 1; ///< pipeline: 1F1B keeps min(pp, accumulation) on the first stage
    std::string stage; ///< which pipeline stage is reported ("all layers" without PP)
    Count stageIndex = 0; ///< that stage, 0-based
    Bytes total = 0; ///< sum of the components
    Bytes peak = 0; ///< highest point of the simulated step (training), else total
    /// The counters users compare with, from the caching-allocator replay (training with
    /// EstimateOptions::replayAllocator; all 0 without it). They change neither peak nor verdict.
    Bytes peakAllocatedBytes = 0; ///< torch.cuda.max_memory_allocated(): live tensor blocks
    Bytes peakReservedBytes = 0; ///< torch.cuda.max_memory_reserved(): the allocator's segments
    Bytes peakDeviceBytes = 0; ///< nvidia-smi: reserved + what the allocator never sees (CUDA context, NCCL)
    /// Optimizer states in CUDA unified memory (bitsandbytes' paged optimizers): in the optimizer bar, not in the
    /// peak (the driver evicts them to the host when the GPU runs out), in the device figure.
    Bytes pagedOptimizerBytes = 0;
    bool allocatorReplayed = false; ///< the replay ran and the three counters above are its
    bool allocatorOutOfMemory = false; ///< the replay found no block even after releasing the cache
    bool allocatorExtrapolated = false; ///< layers past the replayed ones added by their steady increment
    std::string allocatorNote; ///< why the replay was not run (context parallelism, ...) or what it assumed
    std::string peakWhere;
    TimelineEvent peakEvent; ///< phase, micro-batch and layer of the peak (training)
    StepInputs stepInputs; ///< what simulateStep() replays for the timeline (training)
    /// Training step 2 as simulated for the peak, its events recorded when explained (and
    /// within kMaxTimelineEvents): the Timeline chart draws it without simulating again.
    StepTimeline timeline;
    Bytes hostBytes = 0; ///< offloaded state in host memory, per GPU process
    std::string hostFormula;

    FlopsEstimate flops;
    std::optional<GpuSpec> gpu;
    Bytes usableBytes = 0; ///< the GPU's memory (0 when no GPU is named)
    bool fits = true; ///< meaningful only with hasVerdict
    bool hasVerdict = false; ///< a GPU was named: without one there is no fits/does-not-fit
    /// Non-empty when the peak is only a lower bound of what the GPU will show (a framework behaviour
    /// measured above the model): why, in a few words. A lower bound that fits may still not fit;
    /// one that does not fit certainly does not.
    std::string lowerBound;
    /// The verdict as a CSV cell: "true", "false", or empty without a GPU.
    const char* fitsCsv() const { return !hasVerdict ? "" : fits ? "true" : "false"; }
    /// "FITS", "MAY NOT FIT" (a lower bound that fits) or "DOES NOT FIT"; empty without a GPU.
    std::string_view verdictWord() const
    {
        return !hasVerdict ? "" : !fits ? "DOES NOT FIT" : lowerBound.empty() ? "FITS" : "MAY NOT FIT";
    }
    std::vector<std::string> warnings;

    Bytes bytesOf(std::string_view key) const;
    Bytes bytes(ComponentKind kind) const { return bytesOf(componentKey(kind)); }
    const Component* component(std::string_view key) const;
};

} // namespace vramlab
