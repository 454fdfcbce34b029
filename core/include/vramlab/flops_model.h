// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/model_spec.h"
#include "vramlab/report.h"
#include "vramlab/run_spec.h"

namespace vramlab {

/// FLOPs of one step and the step time they imply.
///
/// Forward per token: 2 x matmul parameters a token goes through (LM head included,
/// embedding lookups not) + attention 2 x 2 x (q width) x attended tokens per layer
/// (QK^T and PV, counted over the full sequence as Megatron and PaLM do, no causal
/// half; sliding-window layers attend to the window). Training = 3 x forward (the "6PT"
/// rule plus the attention term); LoRA skips the frozen weights' gradients (2 x forward
/// + 2 x adapter params). Hardware FLOPs add recomputation: one more forward for full
/// or every-k checkpointing, the attention core for selective, and the QK^T rebuilt by
/// FlashAttention's backward. Training step time: applyStepTime().
/// Inference: one decode step of the batch at the full context, the slower of compute
/// and reading the weights and KV cache from memory.
FlopsEstimate estimateFlops(const ModelSpec& model, const RunSpec& run, const ParameterCount& params, Count loraParams,
    Bytes weightBytesPerGpu, Bytes kvBytesPerGpu, bool explain = true);

/// Training step time by cause: hardware FLOPs (recomputation included) at the GPU's peak x
/// run.mfu (the compute efficiency), plus data/tensor-parallel communication, the pipeline
/// bubble and host offload traffic. Needs the report's FLOPs, step inputs and host bytes;
/// zero without a GPU or outside training.
StepTimeParts stepTime(const ModelSpec& model, const RunSpec& run, const Report& report);

/// Sets report.flops.time, stepTimeS, tokensPerS and the MFU the step time implies from
/// stepTime(), and appends the step to the formula: the one step time of every view.
void applyStepTime(const ModelSpec& model, const RunSpec& run, Report& report, bool explain);

/// "58.6 s per step (compute 38.3 s + recomputation 12.7 s + data-parallel comm 7.6 s),
/// 4,475 tokens/s, MFU 26% of 989.4 TFLOP/s (compute at 40%)": the step time as every view
/// prints it; empty without a step time.
std::string stepTimeSummary(const FlopsEstimate& flops);

} // namespace vramlab
