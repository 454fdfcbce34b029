// SPDX-License-Identifier: MIT
#include "vramlab/probe_plan.h"

#include "vramlab/estimator.h"
#include "vramlab/model_states.h"
#include "vramlab/pipeline_schedule.h"
#include "vramlab/precision_regime.h"

#include <algorithm>

namespace vramlab {

namespace {

/// `bytes` as `count` buffers of equal share (the first ones take the remainder), so the
/// buffers add up exactly to what the estimate counted.
void splitInto(
    std::vector<ProbeBuffer>& out, std::string_view component, const std::string& name, Bytes bytes, Count count)
{
    if (bytes <= 0 || count <= 0)
        return;
    const Bytes each = bytes / count, extra = bytes % count;
    for (Count i = 0; i < count; ++i) {
        const std::string label = count > 1 ? name + " [" + std::to_string(i) + "]" : name;
        out.push_back({ component, label, each + (i < extra ? 1 : 0) });
    }
}

} // namespace

bool ProbeAllocationPlan::measuredNotAllocated(std::string_view component)
{
    return component == "cuda_context" || component == "allocator";
}

ProbeAllocationPlan probeAllocationPlan(const Scenario& scenario)
{
    ProbeAllocationPlan plan;
    plan.report = estimate(scenario); // explained: the activation list is tensor by tensor
    const Report& rep = plan.report;
    const ModelSpec& m = scenario.model;
    const RunSpec& r = scenario.run;
    const StageSlice slice = pipelineRank(m, r, rep.stageIndex).params;
    std::vector<ProbeBuffer>& out = plan.buffers;

    // Model states: modelStates() of each tensor alone, so sharding and optimizer rules stay
    // in one place; its sums over all tensors are the report's components.
    struct Part {
        std::string_view key;
        Bytes ModelStateBytes::*bytes;
    };
    const Part parts[] = { { componentKey(ComponentKind::Weights), &ModelStateBytes::weights },
        { componentKey(ComponentKind::MasterWeights), &ModelStateBytes::master },
        { componentKey(ComponentKind::Gradients), &ModelStateBytes::gradients },
        { componentKey(ComponentKind::OptimizerStates), &ModelStateBytes::optimizer } };
    const std::vector<LocalParam> params = localParameters(m, r, slice);
    for (const Part& part : parts) {
        for (const LocalParam& p : params) {
            const ModelStateBytes s = modelStates({ p }, r, false);
            std::string name(p.name);
            if (p.loraPart)
                name += p.loraPart == 'A' ? ".lora_A" : p.loraPart == 'B' ? ".lora_B" : ".lora_magnitude_vector";
            splitInto(out, part.key, name, s.*part.bytes, p.copies);
        }
    }

    // Activations: every saved tensor of every micro-batch in flight.
    const Count inFlight = rep.microBatchesInFlight;
    for (const ActivationTensor& t : rep.activations.tensors)
        for (Count mb = 0; mb < inFlight; ++mb)
            splitInto(out, "activations", inFlight > 1 ? t.name + " (micro-batch " + std::to_string(mb) + ")" : t.name,
                t.total(), t.count);

    // KV cache: one K and one V buffer per local layer, equal shares of the estimate.
    splitInto(out, "kv_cache", "K/V cache", rep.bytesOf("kv_cache"), checkedMul(2, std::max<Count>(1, slice.layers())));

    // Overhead parts that are real buffers (workspace, NCCL and bucket buffers, gathered layers).
    for (const Component& c : rep.overheadParts)
        if (!ProbeAllocationPlan::measuredNotAllocated(c.key))
            splitInto(out, c.key, std::string(c.label), c.bytes, 1);
    return plan;
}

std::string_view toString(GemmPass pass)
{
    switch (pass) {
    case GemmPass::Forward:
        return "forward";
    case GemmPass::BackwardInput:
        return "backward_input";
    case GemmPass::BackwardWeight:
        return "backward_weight";
    }
    return "forward";
}

GemmPlan probeGemmPlan(const Scenario& scenario, const Report& rep)
{
    const ModelSpec& m = scenario.model;
    const RunSpec& r = scenario.run;
    const bool training = r.mode == Mode::Training;
    const Count tp = r.parallelism.tensorParallel;
    const StageSlice slice = pipelineRank(m, r, rep.stageIndex).params;
    const Count tokens = training ? checkedMul(r.microBatchSize, r.sequenceLength) : r.inference.batchSize;
    const Count steps = training ? r.gradientAccumulationSteps : 1;
    const Count gated = m.gated() ? 2 : 1;
    // Frozen base weights (LoRA, QLoRA) get no weight gradient.
    const bool weightGrads = training && r.finetune.method == FinetuneMethod::Full;

    GemmPlan plan;
    plan.compute = training ? precisionRegime(r).compute : (r.fp8 ? DType::Fp8 : precisionRegime(r).working);
    auto add = [&](const char* layer, Count rows, Count outWidth, Count inWidth, Count layers) {
        if (layers <= 0 || rows <= 0 || outWidth <= 0 || inWidth <= 0)
            return;
        const Count perStep = checkedMul(layers, steps);
        plan.shapes.push_back({ layer, GemmPass::Forward, rows, outWidth, inWidth, perStep });
        if (!training)
            return;
        plan.shapes.push_back({ layer, GemmPass::BackwardInput, rows, inWidth, outWidth, perStep });
        if (weightGrads)
            plan.shapes.push_back({ layer, GemmPass::BackwardWeight, inWidth, outWidth, rows, perStep });
    };

    if (m.attentionType == AttentionType::Mha) {
        const Count kvWidth
            = std::max<Count>(1, m.numKvHeads / tp) * m.headDim; // K/V heads replicate past tp = kv heads
        add("qkv", tokens, m.qWidth() / tp + 2 * kvWidth, m.hiddenSize, slice.layers());
        add("attention_out", tokens, m.hiddenSize, m.qWidth() / tp, slice.layers());
    } else {
        plan.notes.push_back("MLA's low-rank attention projections are not timed");
    }
    add("mlp_up", tokens, gated * ceilDiv(m.ffnHiddenSize, tp), m.hiddenSize, slice.denseLayers);
    add("mlp_down", tokens, m.hiddenSize, ceilDiv(m.ffnHiddenSize, tp), slice.denseLayers);
    if (m.moe.enabled()) {
        const Count routed = checkedMul(tokens, m.moe.topK), width = ceilDiv(m.expertWidth(), tp);
        add("expert_up", routed, gated * width, m.hiddenSize, slice.moeLayers);
        add("expert_down", routed, m.hiddenSize, width, slice.moeLayers);
        const Count sharedWidth = ceilDiv(m.sharedExpertWidth(), tp);
        add("shared_expert_up", tokens, checkedMul(gated * sharedWidth, m.moe.sharedExperts), m.hiddenSize,
            slice.moeLayers);
        add("shared_expert_down", tokens, m.hiddenSize, checkedMul(sharedWidth, m.moe.sharedExperts), slice.moeLayers);
        plan.notes.push_back("routed experts timed as one GEMM over tokens x top_k rows (grouped GEMM)");
    }
    add("lm_head", tokens, ceilDiv(m.vocabSize, tp), m.hiddenSize, slice.last ? 1 : 0);
    if (training && !weightGrads)
        plan.notes.push_back("frozen base weights: no weight-gradient GEMMs; LoRA adapters' small GEMMs not timed");
    return plan;
}

} // namespace vramlab
