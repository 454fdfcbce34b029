// SPDX-License-Identifier: MIT
#include "vramlab/report_json.h"

namespace vramlab {

using json = nlohmann::ordered_json;

namespace {

json componentJson(const Component& c)
{
    return { { "key", c.key }, { "label", c.label }, { "bytes", c.bytes }, { "formula", c.formula },
        { "explanation", c.explanation } };
}

const char* scopeName(ActivationScope s)
{
    switch (s) {
    case ActivationScope::Layer:
        return "layer";
    case ActivationScope::Embedding:
        return "embedding";
    case ActivationScope::Head:
        return "head";
    }
    return "?";
}

} // namespace

nlohmann::ordered_json reportToJson(const Report& r)
{
    json perGpu = json::object();
    for (ComponentKind k : kReportComponents)
        perGpu[std::string(componentKey(k))] = r.bytes(k);
    perGpu["total"] = r.total;

    json components = json::array(), overheads = json::array(), tensors = json::array();
    for (const Component& c : r.components)
        components.push_back(componentJson(c));
    for (const Component& c : r.overheadParts)
        overheads.push_back(componentJson(c));
    for (const ActivationTensor& t : r.activations.tensors)
        tensors.push_back({ { "name", t.name }, { "module", t.module }, { "scope", scopeName(t.scope) },
            { "bytes_each", t.bytesEach }, { "count", t.count }, { "bytes", t.total() }, { "shape", t.shapeText() } });

    const FlopsEstimate& f = r.flops;
    json out = {
        { "format", "vramlab.report" },
        { "version", 1 },
        { "scenario", r.scenarioName },
        { "params",
            { { "total", r.params.total }, { "trainable", r.trainableParams }, { "active", r.params.active },
                { "embedding", r.params.embedding }, { "lora", r.loraParams } } },
        { "per_gpu_bytes", perGpu },
        { "peak_bytes", r.peak },
        { "peak_where", r.peakWhere },
        { "peak_phase", r.stepInputs.training ? std::string(toString(r.peakEvent.phase)) : std::string("inference") },
        { "peak_layer", r.peakEvent.layer >= 0 ? json(r.peakEvent.layer + 1) : json(nullptr) }, // 1-based, of the stage
        { "peak_micro_batch", r.peakEvent.microBatch >= 0 ? json(r.peakEvent.microBatch + 1) : json(nullptr) },
        { "flops",
            { { "per_step", f.perStep }, { "per_token", f.perToken }, { "hardware_per_step", f.hardwarePerStep },
                { "forward_per_token", f.forwardPerToken }, { "attention_per_token", f.attentionPerToken },
                { "tokens_per_step", f.tokensPerStep }, { "formula", f.formula } } },
        { "time",
            { { "peak_tflops", f.peakTflops }, { "efficiency", f.efficiency }, { "mfu", f.mfu },
                { "step_seconds", f.stepTimeS }, { "tokens_per_second", f.tokensPerS },
                { "step_parts_seconds",
                    { { "compute", f.time.computeS }, { "recompute", f.time.recomputeS },
                        { "data_parallel", f.time.dataParallelS }, { "tensor_parallel", f.time.tensorParallelS },
                        { "pipeline", f.time.pipelineS }, { "offload", f.time.offloadS } } } } },
        { "fits", r.hasVerdict ? json(r.fits) : json(nullptr) }, // no GPU, no verdict
        { "lower_bound", r.lowerBound.empty() ? json(nullptr) : json(r.lowerBound) }, // the peak is at least this
        { "usable_bytes", r.hasVerdict ? json(r.usableBytes) : json(nullptr) },
        { "stage", r.stage },
        { "micro_batches_in_flight", r.microBatchesInFlight },
        { "host_bytes", r.hostBytes },
        { "host_formula", r.hostFormula },
        { "recompute_bytes", r.activations.recomputeBytes },
        { "components", components },
        { "overhead_parts", overheads },
        { "activation_tensors", tensors },
        { "warnings", r.warnings },
    };
    if (r.pagedOptimizerBytes > 0) // in the optimizer states, outside the peak and the allocator's counters
        out["paged_optimizer_bytes"] = r.pagedOptimizerBytes;
    if (r.allocatorReplayed) { // EstimateOptions::replayAllocator: what the GPU's counters will read
        out["peak_allocated_bytes"] = r.peakAllocatedBytes;
        out["peak_reserved_bytes"] = r.peakReservedBytes;
        out["peak_device_bytes"] = r.peakDeviceBytes;
        out["allocator_out_of_memory"] = r.allocatorOutOfMemory;
        out["allocator_extrapolated"] = r.allocatorExtrapolated;
    } else if (!r.allocatorNote.empty()) {
        out["allocator_note"] = r.allocatorNote; // why the replay was not run
    }
    if (r.gpu)
        out["gpu"] = { { "name", r.gpu->name }, { "display_name", r.gpu->displayName },
            { "memory_bytes", r.gpu->memoryBytes } };
    if (!r.activations.compileScope.empty()) { // run.compile: what the partitioner recomputes instead of saving
        json removed = json::array();
        for (const ActivationTensor& t : r.activations.compileRemoved)
            removed.push_back({ { "name", t.name }, { "module", t.module }, { "bytes_each", t.bytesEach },
                { "count", t.count }, { "shape", t.shapeText() } });
        out["compile"] = { { "scope", r.activations.compileScope },
            { "rule",
                "AOTAutograd min-cut partitioner: pointwise tensors read in backward only by pointwise ops are "
                "recomputed; matmul and SDPA inputs, reductions and random masks are saved" },
            { "removed_bytes", r.activations.compileRemovedBytes }, { "removed", std::move(removed) } };
    }
    if (r.activations.ringForwardBytes + r.activations.ringBackwardBytes > 0) { // context parallelism
        json buffers = json::array();
        for (const ActivationTensor& t : r.activations.ringBuffers)
            buffers.push_back(
                { { "name", t.name }, { "pass", t.module }, { "bytes", t.bytesEach }, { "shape", t.shapeText() } });
        out["ring_attention"] = { { "forward_bytes", r.activations.ringForwardBytes },
            { "backward_bytes", r.activations.ringBackwardBytes }, { "buffers", std::move(buffers) } };
    }
    if (r.activations.doraForwardBytes > 0) { // DoRA's weight norm, while an adapted linear runs forward
        json transients = json::array();
        for (const ActivationTensor& t : r.activations.doraTransients)
            transients.push_back({ { "name", t.name }, { "bytes", t.bytesEach }, { "shape", t.shapeText() } });
        out["dora"] = { { "forward_transient_bytes", r.activations.doraForwardBytes },
            { "transients", std::move(transients) } };
    }
    if (r.stepInputs.training && r.stepInputs.lastStage) // the loss as the framework computes it
        out["loss"] = { { "source", r.activations.lossSource }, { "framework", r.activations.lossFramework },
            { "forward_bytes", r.activations.lossForwardBytes }, { "backward_bytes", r.activations.lossBackwardBytes },
            { "held_bytes", r.activations.lossHeldBytes } };
    return out;
}

nlohmann::ordered_json timelineToJson(const StepTimeline& t, const StepInputs& in)
{
    json events = json::array();
    for (const TimelineEvent& e : t.events) {
        json bytes = json::object();
        for (int c = 0; c < kTimelineCategories; ++c)
            bytes[std::string(timelineCategoryKey(static_cast<TimelineCategory>(c)))] = e.bytes[static_cast<size_t>(c)];
        json ev = { { "phase", toString(e.phase) }, { "micro_batch", e.microBatch }, { "layer", e.layer },
            { "what", e.what } };
        ev["bytes"] = std::move(bytes);
        ev["total"] = e.total();
        events.push_back(std::move(ev));
    }
    return { { "format", "vramlab.timeline" }, { "version", 1 }, { "step", t.step }, { "peak_bytes", t.peak },
        { "peak_where", t.peakWhere(in) }, { "layers", in.layers }, { "micro_batches", in.microBatches },
        { "simulated_micro_batches", t.simulatedMicroBatches }, { "events", std::move(events) } };
}

namespace {

json candidateToJson(const PlanCandidate& c)
{
    const StepTimeParts& t = c.time;
    return { { "zero_stage", c.zeroStage }, { "sharding", toString(c.sharding) },
        { "tensor_parallel", c.tensorParallel }, { "pipeline_parallel", c.pipelineParallel },
        { "expert_parallel", c.expertParallel }, { "sequence_parallel", c.sequenceParallel },
        { "micro_batch_size", c.microBatch }, { "gradient_accumulation_steps", c.accumulation },
        { "checkpointing", toString(c.checkpointing) }, { "offload_optimizer", c.offloadOptimizer },
        { "offload_params", c.offloadParams }, { "peak_bytes", c.peak }, { "lower_bound", c.lowerBound },
        { "fits", c.fits }, { "step_seconds", t.total() }, { "tokens_per_second", c.tokensPerS },
        { "seconds",
            { { "compute", t.computeS }, { "recompute", t.recomputeS }, { "data_parallel", t.dataParallelS },
                { "tensor_parallel", t.tensorParallelS }, { "pipeline", t.pipelineS }, { "offload", t.offloadS } } },
        { "why", c.why } };
}

} // namespace

nlohmann::ordered_json planToJson(const PlanResult& p)
{
    json top = json::array();
    for (const PlanCandidate& c : p.top)
        top.push_back(candidateToJson(c));
    json j = { { "format", "vramlab.plan" }, { "version", 1 }, { "gpus", p.gpus }, { "global_batch", p.globalBatch },
        { "evaluated", p.evaluated }, { "fitting", p.fitting }, { "notes", p.notes }, { "top", std::move(top) } };
    j["fastest_unfit"] = p.fastestUnfit ? candidateToJson(*p.fastestUnfit) : json(nullptr);
    return j;
}

} // namespace vramlab
