// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/activation_model.h"
#include "vramlab/model_spec.h"
#include "vramlab/run_spec.h"

namespace vramlab {

/// What PyTorch's pipelining stage (torchtitan) keeps per rank besides the model (torch 2.6
/// torch/distributed/pipelining/stage.py): zero for the other frameworks and without pipelining.
struct PipelineBuffers {
    Bytes receive = 0; ///< receive buffers, one per micro-batch: activations (stages > 0), gradients (stages < last)
    Bytes outputKept = 0; ///< per micro-batch, from its forward until the next step: output_chunks
    Bytes inputGradKept = 0; ///< per micro-batch, from its backward until the next step: the receive buffer's .grad
};

/// What one pipeline rank holds at its memory peak under the run's schedule.
struct PipelineRank {
    Count rank = 0;
    StageSlice params; ///< the layers whose weights and states the rank holds (interleaved: its chunks)
    /// The layers whose saved tensors one pass holds: 1F1B the stage (`inFlight` copies of it);
    /// interleaved every chunk-micro-batch alive at the rank's first backward, as one pass.
    StageSlice activations;
    Count inFlight = 1; ///< 1F1B: micro-batches in flight; interleaved: 1 (the slice counts the chunks)
    Count chunksInFlight = 0; ///< interleaved: chunk-micro-batches alive at the first backward
    PipelineBuffers buffers;
};

/// Refuses, naming the key, a pipeline schedule that is not modelled or that the framework would refuse
/// (interleaved 1F1B: layers not a multiple of pp x virtual_stages, too few micro-batches, ZeRO-2 or ZeRO-3
/// outside FSDP2 in PyTorch's pipelining, checkpointing that cuts across chunks). Training only; 1F1B with one virtual
/// stage always passes.
void validatePipelineSchedule(const ModelSpec& m, const RunSpec& r);

/// Rank `rank` (0-based) of run.parallelism.pipeline_parallel under run.parallelism.pipeline_schedule.
PipelineRank pipelineRank(const ModelSpec& m, const RunSpec& r, Count rank);

/// Whether a stage between the first and the last can hold the most (PyTorch's pipelining: its receive buffers
/// both ways); without it the first and the last stage bound every other.
bool middleStageMayPeak(const RunSpec& r);

} // namespace vramlab
