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
/// FlashAttention's backward. Step time = model FLOPs / (GPUs x peak x MFU).
/// Inference: one decode step of the batch at the full context, the slower of compute
/// and reading the weights and KV cache from memory.
FlopsEstimate estimateFlops(const ModelSpec& model, const RunSpec& run, const ParameterCount& params, Count loraParams,
    Bytes weightBytesPerGpu, Bytes kvBytesPerGpu, bool explain = true);

} // namespace vramlab
