// SPDX-License-Identifier: MIT
#include "vramlab/pipeline_schedule.h"

#include "vramlab/errors.h"
#include "vramlab/precision_regime.h"

#include <algorithm>
#include <string>

namespace vramlab {

namespace {

std::string n(Count v)
{
    return std::to_string(v);
}

/// Micro-batches a rank runs through one chunk before the next (the schedule's group).
/// Megatron-LM (schedules.py@0d7e02b forward_backward_pipelining_with_interleaving): the
/// microbatch_group_size_per_vp_stage default, pp. PyTorch's ScheduleInterleaved1F1B (torchtitan):
/// microbatches_per_round = m / max(1, m // pp).
Count groupSize(const RunSpec& r)
{
    const Count pp = r.parallelism.pipelineParallel, m = r.gradientAccumulationSteps;
    if (r.framework == Framework::Torchtitan)
        return m / std::max<Count>(1, m / pp);
    return pp;
}

/// The layers [lo, hi) of pipeline stage `stage` of `stages` (interleaved: the model's chunks, rank r's j-th being
/// stage j pp + r).
struct LayerRange {
    Count lo = 0, hi = 0;
};
LayerRange stageLayers(const ModelSpec& m, const RunSpec& r, Count stages, Count stage)
{
    const Count base = m.numLayers / stages, extra = m.numLayers % stages;
    if (r.framework == Framework::Torchtitan) {
        // torchtitan/parallelisms/pipelining_utils.py@9dec370 generate_split_points: the first stage gets base
        // layers, the middle ones base + 1 while the remainder lasts, the last what is left (126 layers in 16
        // stages: 7, 8 x 14, 7). Later torchtitan versions count the embedding and the head as layers too.
        const Count lo = stage == 0 ? 0 : stage * base + std::min(stage - 1, extra);
        const Count hi = stage == stages - 1 ? m.numLayers : (stage + 1) * base + std::min(stage, extra);
        return { lo, hi };
    }
    const Count lo = stage * base + std::min(stage, extra); // earlier stages take the remainder
    return { lo, lo + base + (stage < extra ? 1 : 0) };
}

/// The layers [lo, hi) as a slice of dense and MoE layers, where the model places them (leading dense layers,
/// then model.moe.layer_interval).
StageSlice layerSlice(const ModelSpec& m, LayerRange range)
{
    StageSlice s;
    s.moeLayers = m.moeLayersIn(range.lo, range.hi);
    s.denseLayers = (range.hi - range.lo) - s.moeLayers;
    s.firstLayer = range.lo;
    return s;
}

/// Whether the framework splits layers unevenly between the chunks of interleaved 1F1B: torchtitan by its split
/// points, plain eager code as stageLayers does; Megatron-LM asserts num_layers divisible by pp x v
/// (transformer_config.py@0d7e02b, without the uneven first/last-stage options).
bool unevenChunksModelled(const RunSpec& r)
{
    return r.framework == Framework::Torchtitan || r.framework == Framework::Plain;
}

/// torchtitan's pipelining (torch 2.6 stage.py, read for the 405B rows): _prepare_forward_infra and
/// _prepare_backward_infra allocate, at the first step and for good, one receive buffer per micro-batch for the
/// stage's input (stages after the first) and one for its output's gradient (stages before the last), shaped as
/// the tensor between stages: the residual stream [b, s, h] in the activations' type, its sequence split over
/// the TP ranks with sequence parallelism (the blocks' RowwiseParallel output_layouts Shard(1), to_local()).
/// forward_one_chunk appends every output to output_chunks (the last stage's are the logits, a vocabulary shard
/// with loss parallelism) and backward leaves the input's gradient in the receive buffer's .grad, both cleared
/// by clear_runtime_states when the next step() begins.
PipelineBuffers pipelineBuffers(const ModelSpec& m, const RunSpec& r, Count rank)
{
    const Parallelism& p = r.parallelism;
    PipelineBuffers b;
    if (r.mode != Mode::Training || p.pipelineParallel < 2 || r.framework != Framework::Torchtitan)
        return b;
    const Count pp = p.pipelineParallel, mb = r.gradientAccumulationSteps;
    const Count act = static_cast<Count>(bytesPerElement(precisionRegime(r).activations));
    const Count rows = p.sequenceParallel ? ceilDiv(r.localSequence(), p.tensorParallel) : r.localSequence();
    const Bytes boundary = checkedMul(checkedMul(r.microBatchSize, rows), m.hiddenSize, act);
    // Interleaved: each of the rank's v stage objects has its own; only the model's first stage (rank 0's first
    // chunk) receives no input, only its last (the last rank's last chunk) no gradient, and that one's outputs are
    // the logits.
    const Count v = p.pipelineSchedule == PipelineSchedule::Interleaved ? p.virtualStages : 1;
    const Count inputs = v - (rank == 0 ? 1 : 0), grads = v - (rank == pp - 1 ? 1 : 0);
    b.receive = checkedMul(mb, boundary, inputs + grads);
    const Bytes logits
        = checkedMul(checkedMul(r.microBatchSize, r.localSequence()), ceilDiv(m.vocabSize, p.tensorParallel), act);
    b.outputKept = checkedAdd(checkedMul(grads, boundary), rank == pp - 1 ? logits : 0);
    b.inputGradKept = checkedMul(inputs, boundary);
    return b;
}

} // namespace

bool middleStageMayPeak(const RunSpec& r)
{
    return r.mode == Mode::Training && r.framework == Framework::Torchtitan && r.parallelism.pipelineParallel > 2;
}

void validatePipelineSchedule(const ModelSpec& m, const RunSpec& r)
{
    const Parallelism& p = r.parallelism;
    if (r.mode != Mode::Training)
        return;
    const std::string key = "run.parallelism.virtual_stages";
    if (p.pipelineSchedule == PipelineSchedule::OneFOneB) {
        if (p.virtualStages != 1)
            throw InputError(key,
                "expected 1 with pipeline_schedule \"1F1B\" (virtual stages are interleaved 1F1B's), got "
                    + n(p.virtualStages));
        return;
    }
    const std::string sched = "run.parallelism.pipeline_schedule";
    const Count pp = p.pipelineParallel, v = p.virtualStages, mb = r.gradientAccumulationSteps;
    if (pp < 2)
        throw InputError(sched, "expected \"1F1B\" without pipeline parallelism (pipeline_parallel 1)");
    if (v < 2)
        throw InputError(key, "expected at least 2 model chunks per rank with \"interleaved-1F1B\", got " + n(v));
    if (pp * v > m.numLayers)
        throw InputError(key,
            "expected pipeline_parallel x virtual_stages (" + n(pp * v) + ") at most model.num_layers ("
                + n(m.numLayers) + "): every chunk holds a layer, got " + n(v));
    // torchtitan@9dec370 generates split points for 2 stages per rank only; other counts need hand-written ones.
    if (r.framework == Framework::Torchtitan && v != 2)
        throw InputError(key,
            "expected 2 with torchtitan (generate_split_points makes 2 stages per rank; other counts need "
            "pipeline_parallel_split_points, which are not modelled), got "
                + n(v));
    if (m.numLayers % (pp * v) != 0 && !unevenChunksModelled(r))
        throw InputError(key,
            "expected model.num_layers (" + n(m.numLayers)
                + ") to be a multiple of pipeline_parallel x virtual_stages (" + n(pp * v)
                + "): this framework gives each chunk the same number of layers, got " + n(v));
    // Megatron raises unless M % N is 0 or at least pp for its group N = pp (schedules.py@0d7e02b, "dependency
    // bubbles"), which with N = pp means a multiple of pp; PyTorch's schedule splits M into rounds of g >= pp.
    const Count g = groupSize(r);
    if (mb < pp || mb % g != 0)
        throw InputError("run.gradient_accumulation_steps",
            "expected a multiple of " + n(g) + " micro-batches (at least pipeline_parallel " + n(pp)
                + ") with interleaved 1F1B, got " + n(mb));
    // FSDP2 inside PyTorch's pipelining keeps every chunk gathered and its gradients unsharded (RunSpec::
    // fsdpKeepsGathered), so the chunks' order does not matter to it.
    if (p.zeroStage >= 2 && !r.fsdp2InPipeline())
        throw InputError("run.parallelism.zero_stage",
            "expected 0 or 1 with interleaved 1F1B, or 3 with sharding \"fsdp2\" (Megatron's distributed optimizer "
            "is ZeRO-1; gradients reduce-scattered and weights gathered chunk by chunk are not modelled), got "
                + n(p.zeroStage));
    if (r.checkpointing.kind == Checkpointing::Kind::Layers)
        throw InputError("run.checkpointing",
            "full, selective or every k layers with interleaved 1F1B (Megatron's recompute_num_layers counts per "
            "chunk, which is not modelled)");
    for (Count c = 0; r.checkpointing.kind == Checkpointing::Kind::Every && c < pp * v; ++c) {
        const LayerRange chunk = stageLayers(m, r, pp * v, c);
        if ((chunk.hi - chunk.lo) % r.checkpointing.every != 0)
            throw InputError("run.checkpointing.every",
                "expected a divisor of every chunk's layers (chunk " + n(c) + " holds " + n(chunk.hi - chunk.lo)
                    + ") with interleaved 1F1B, got " + n(r.checkpointing.every));
    }
}

PipelineRank pipelineRank(const ModelSpec& m, const RunSpec& r, Count rank)
{
    const Parallelism& p = r.parallelism;
    const Count pp = p.pipelineParallel, mb = r.gradientAccumulationSteps;
    PipelineRank out;
    out.rank = rank;
    out.buffers = pipelineBuffers(m, r, rank);
    if (p.pipelineSchedule != PipelineSchedule::Interleaved || r.mode != Mode::Training) {
        out.params = layerSlice(m, stageLayers(m, r, pp, rank));
        out.params.first = rank == 0;
        out.params.last = rank == pp - 1;
        out.activations = out.params;
        // 1F1B: stage s runs pp - s forwards before its first backward.
        out.inFlight = r.mode == Mode::Training ? std::min(pp - rank, mb) : 1;
        return out;
    }
    // Interleaved 1F1B (Megatron-LM schedules.py@0d7e02b get_pp_rank_microbatches and get_schedule_table;
    // PyTorch's ScheduleInterleaved1F1B has the same warm-up): rank r runs
    // 2 (pp - 1 - r) + (v - 1) g chunk forwards before its first backward, then one forward and one backward
    // in turn, so warm-up + 1 chunk-micro-batches are alive at the first backward (all m v if the warm-up
    // covers them). Forwards go group by group: g micro-batches through chunk 0, then through chunk 1, ...
    const Count v = p.virtualStages, g = groupSize(r);
    const Count total = mb * v;
    const Count warmup = 2 * (pp - 1 - rank) + (v - 1) * g;
    out.chunksInFlight = warmup >= total ? total : warmup + 1;
    out.inFlight = 1;
    const Count perGroup = g * v, full = out.chunksInFlight / perGroup, rest = out.chunksInFlight % perGroup;
    out.params.first = out.activations.first = rank == 0;
    out.params.last = out.activations.last = rank == pp - 1;
    for (Count j = 0; j < v; ++j) {
        const StageSlice chunk = layerSlice(m, stageLayers(m, r, pp * v, j * pp + rank)); // chunks r, r + pp, ...
        const Count alive = full * g + std::clamp<Count>(rest - j * g, 0, g);
        out.params.denseLayers += chunk.denseLayers;
        out.params.moeLayers += chunk.moeLayers;
        out.activations.denseLayers += alive * chunk.denseLayers;
        out.activations.moeLayers += alive * chunk.moeLayers;
        if (j == 0)
            out.activations.embeddingMicroBatches = std::max<Count>(1, alive);
    }
    return out;
}

} // namespace vramlab
