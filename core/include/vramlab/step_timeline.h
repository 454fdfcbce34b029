// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/component_kind.h"
#include "vramlab/units.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vramlab {

/// What is alive on one GPU at a point of the step, by category (the bar chart's colours
/// plus the step's short-lived buffers).
enum class TimelineCategory : uint8_t {
    Weights,
    MasterWeights,
    Gradients,
    OptimizerStates,
    Activations, ///< saved for backward
    Temporaries, ///< loss buffers, backward working set, recomputed layer, gradient buckets, ZeRO-3 gathers, optimizer
                 ///< temporaries
    Overhead, ///< context, workspace, communication buffers, allocator rounding (constant over the step)
};
inline constexpr int kTimelineCategories = 7;
ComponentKind timelineComponent(TimelineCategory c);
std::string_view timelineCategoryKey(TimelineCategory c); ///< "weights", ..., "temporaries"
std::string_view timelineCategoryLabel(TimelineCategory c); ///< "Weights", ..., "Temporaries"

enum class StepPhase : uint8_t { Start, Forward, Loss, Backward, Optimizer };
std::string_view toString(StepPhase p);

/// Everything the simulation needs, taken from the estimate of the reported GPU (the
/// worst pipeline stage). The estimator fills it; no model or run is read again.
struct StepInputs {
    bool training = false;
    Bytes weights = 0, master = 0, gradients = 0, optimizer = 0; ///< resident states, this GPU
    Bytes baseOverhead = 0; ///< overhead parts that stay all step (all but ZeRO-3 gathers; allocator rounding included)
    Bytes embeddingActs = 0; ///< one micro-batch's saved tensors by part of the model
    Bytes layerActs = 0; ///<   (all layers of the stage together)
    Bytes headActs = 0;
    Bytes recompute = 0; ///< checkpointing: one layer (or segment) rebuilt in backward
    Bytes backwardWorkingSet = 0; ///< gradients of the layer's largest intermediates while its backward runs
    Bytes lossForward = 0; ///< logits + their fp32 copy before log-softmax keeps its output
    Bytes lossBackward = 0; ///< the two fp32 gradients of the logits in the loss's backward
    Bytes lossHeld = 0; ///< kept from the loss forward to the end of the micro-batch's backward (LitGPT's logits)
    Bytes lossGathered = 0; ///< FSDP2's last block kept gathered through the loss (torchtitan)
    /// PyTorch's pipelining keeps every stage's output of every micro-batch (output_chunks; the last stage's are
    /// the logits) until the next step begins: these bytes per micro-batch, from its forward on.
    Bytes stageOutputKept = 0;
    /// PyTorch's pipelining: the gradient of each micro-batch's received input, left in its receive buffer's .grad
    /// from its backward until the next step begins.
    Bytes stageInputGradKept = 0;
    std::string_view lossForwardWhat = "loss: logits and their fp32 copy beside the saved log-softmax";
    std::string_view lossBackwardWhat = "loss backward: two fp32 gradients of the logits";
    bool optimizerInBackward
        = false; ///< each layer's parameters stepped as their gradients arrive; gradients freed at once
    Bytes layerGradientBucket = 0; ///< ZeRO-2/3: one layer's unsharded gradients before reduce-scatter
    /// DeepSpeed ZeRO-2 (and ZeRO-1 with overlap_comm): its gradient bucket(s), allocated as backward starts (before
    /// the loss's backward) and freed when it ends (stage_1_and_2.py@e2dc3eeb backward / _release_ipg_buffers).
    Bytes backwardBucket = 0;
    Bytes zero3Gather = 0; ///< ZeRO-3: current + prefetched layer's gathered weights
    /// Context parallelism: ring attention's buffers at their widest while one layer's attention runs,
    /// in forward (and its recompute) and in backward (activation_model.cpp ringAttentionBuffers).
    Bytes ringForward = 0, ringBackward = 0;
    /// DoRA: the widest adapted linear's weight-norm transients, while a layer runs forward (and its recompute).
    Bytes doraForward = 0;
    Bytes optimizerTemporaries = 0; ///< foreach AdamW's sqrt(v) list, and the like
    Count trainableParamsLocal = 0; ///< on this GPU before ZeRO sharding (communication volumes)
    Count paramsLocal = 0;
    Count layers = 1; ///< layers of the stage
    Count segmentLayers = 1; ///< layers rebuilt at once under checkpointing (1 without)
    /// Checkpointing {"layers": n}: the first layers that keep only their input (checkpointInputBytes each) and are
    /// rebuilt one at a time in backward; the other layers share the rest of layerActs. 0: every layer alike.
    Count checkpointedLayers = 0;
    Bytes checkpointInputBytes = 0;
    bool firstStage = true, lastStage = true;
    Count microBatches = 1; ///< gradient accumulation steps
    Count inFlight = 1; ///< pipeline: micro-batches whose activations the stage holds at once (1F1B)
    bool gradientsResident
        = false; ///< a gradient buffer allocated at setup (DDP, Megatron, DeepSpeed); else set_to_none
};

/// One allocation or free; `bytes` is what is alive after it.
struct TimelineEvent {
    StepPhase phase = StepPhase::Start;
    Count microBatch = -1; ///< 0-based; -1 outside the micro-batches
    Count layer = -1; ///< 0-based layer of the stage; -1 for embedding/head/optimizer
    std::string_view what; ///< "forward: layer saves its tensors" (static text)
    std::array<Bytes, kTimelineCategories> bytes {};
    Bytes total() const;
};

struct StepTimeline {
    int step = 2; ///< 1: optimizer states appear at the end; 2: they are there from the start
    std::vector<TimelineEvent> events; ///< empty when not recorded
    Bytes peak = 0;
    TimelineEvent atPeak; ///< the event where the peak happens (first one)
    Count simulatedMicroBatches = 1; ///< later micro-batches repeat the last one's pattern exactly
    /// "backward, layer 32 of 32, micro-batch 1: ..." for the report.
    std::string peakWhere(const StepInputs& in) const;
};

/// The most events a recorded step may have: past it, drawing and writing the events costs
/// seconds per edit (a 100,000-layer model), so recording is refused; the peak is not.
inline constexpr Count kMaxTimelineEvents = 200'000;

/// Events a recorded step has at most (for the limit and to reserve them).
Count timelineEventCount(const StepInputs& in);

/// Simulates step 1 or step 2 of training on one GPU as allocations and frees. Micro-batches
/// beyond the first few repeat one pattern, so at most inFlight + 2 are simulated and the
/// peak is exact for any accumulation. `record` false computes only the peak (no events).
/// Recording throws InputError beyond kMaxTimelineEvents.
StepTimeline simulateStep(const StepInputs& in, int step, bool record = true);

} // namespace vramlab
