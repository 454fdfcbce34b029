// SPDX-License-Identifier: MIT
#include "vramlab/flops_model.h"
#include "vramlab/framework_profile.h"
#include "vramlab/model_states.h"
#include "vramlab/parameter_tensors.h"

#include "vramlab/precision_regime.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

namespace vramlab {

namespace {

/// What a CPU optimizer (ZeRO-Offload's CPU-Adam) reads and writes per second: its
/// states and master weights once each per step. A stated assumption, not a measurement.
constexpr double kHostOptimizerBytesPerS = 20e9;

/// The step time's causes in order, named once for the formula and the summary.
std::array<std::pair<double, const char*>, 6> namedParts(const StepTimeParts& t)
{
    return { { { t.computeS, "compute" }, { t.recomputeS, "recomputation" }, { t.dataParallelS, "data-parallel comm" },
        { t.tensorParallelS, "tensor-parallel comm" }, { t.pipelineS, "pipeline bubble" },
        { t.offloadS, "offload" } } };
}

std::string num(double v)
{
    return formatDouble(v, std::chars_format::general, 4); // "%.4g"
}

/// Forward attention FLOPs per token: QK^T and PV over the attended tokens of each layer.
double attentionFlopsPerToken(const ModelSpec& m, Count seq)
{
    const double qk = m.attentionType == AttentionType::Mla
        ? static_cast<double>(m.numHeads) * static_cast<double>(m.mla.qkNopeHeadDim + m.mla.qkRopeHeadDim)
        : static_cast<double>(m.qWidth());
    const double pv = m.attentionType == AttentionType::Mla ? static_cast<double>(m.numHeads * m.mla.vHeadDim) : qk;
    const double window
        = m.slidingWindow > 0 ? static_cast<double>(std::min(seq, m.slidingWindow)) : static_cast<double>(seq);
    const double attended = static_cast<double>(m.globalLayers()) * static_cast<double>(seq)
        + static_cast<double>(m.localLayers()) * window;
    return 2.0 * (qk + pv) * attended;
}

} // namespace

FlopsEstimate estimateFlops(const ModelSpec& m, const RunSpec& r, const ParameterCount& params, Count loraParams,
    Bytes weightBytesPerGpu, Bytes kvBytesPerGpu, bool explain)
{
    FlopsEstimate f;
    const double gpus = static_cast<double>(r.parallelism.gpus);
    const PrecisionRegime reg = precisionRegime(r);
    f.efficiency = r.mfu;
    if (r.gpu)
        f.peakTflops = r.gpu->peakTflops(r.mode == Mode::Inference ? DType::Bf16 : reg.compute);
    const double peak = f.peakTflops * 1e12;

    if (r.mode == Mode::Inference) {
        const double n = static_cast<double>(params.matmulActive);
        f.attentionPerToken = attentionFlopsPerToken(m, r.inference.contextLength);
        f.forwardPerToken = 2.0 * n + f.attentionPerToken;
        f.perToken = f.forwardPerToken;
        f.tokensPerStep = r.inference.batchSize;
        f.perStep = f.perToken * static_cast<double>(f.tokensPerStep);
        f.hardwarePerStep = f.perStep;
        if (r.gpu && peak > 0) {
            const double compute = f.perStep / (gpus * peak * std::max(r.mfu, 1e-6));
            // A custom GPU without a bandwidth: the decode step is compute-bound as far as we know.
            const double memory = r.gpu->memoryBandwidthGBs > 0
                ? static_cast<double>(weightBytesPerGpu + kvBytesPerGpu) / (r.gpu->memoryBandwidthGBs * 1e9)
                : 0.0;
            f.stepTimeS = std::max(compute, memory);
            f.mfu = f.perStep / (gpus * peak * f.stepTimeS);
            f.tokensPerS = static_cast<double>(f.tokensPerStep) / f.stepTimeS;
            if (explain)
                f.formula = "decode step = max(compute " + num(compute * 1e3) + " ms, read weights + KV "
                    + num(memory * 1e3) + " ms at " + num(r.gpu->memoryBandwidthGBs) + " GB/s)";
        } else if (explain) {
            f.formula = "forward per token = 2 x " + formatCount(params.matmulActive) + " + attention "
                + num(f.attentionPerToken);
        }
        return f;
    }

    const double n = static_cast<double>(params.matmulActive);
    f.attentionPerToken = attentionFlopsPerToken(m, r.sequenceLength);
    f.forwardPerToken = 2.0 * n + f.attentionPerToken;
    const bool peft = r.finetune.method != FinetuneMethod::Full;
    // DoRA (PEFT 0.18.0 dora.py@77daa8d3), per adapted linear (in x out, rank r) and forward: B A through x_eye
    // (2 in^2 r + 2 in r out), W + s B A and its norm (4 in out), once per micro-batch; with dropout the base
    // linear again on the dropped input, and its input gradient in backward (2 in out per token each).
    double doraForward = 0, doraBackward = 0;
    if (peft && r.finetune.dora) {
        const double tokens = static_cast<double>(std::max<Count>(1, r.microBatchSize * r.sequenceLength));
        for (const ParamTensor& t : parameterTensors(m)) {
            if (!t.linear || t.group == ParamGroup::Head || t.group == ParamGroup::Embedding
                || !isTarget(r.finetune, t.module) || t.copies < m.numLayers)
                continue;
            const double in = static_cast<double>(t.rows), out = static_cast<double>(t.cols);
            const double rank = static_cast<double>(r.finetune.rank), copies = static_cast<double>(t.copies);
            doraForward += copies * (2 * in * in * rank + 2 * in * rank * out + 4 * in * out) / tokens;
            if (r.finetune.dropout > 0) {
                doraForward += copies * 2 * in * out;
                doraBackward += copies * 2 * in * out;
            }
        }
        f.forwardPerToken += doraForward;
    }
    const double backward = (peft ? f.forwardPerToken + 2.0 * static_cast<double>(loraParams) : 2.0 * f.forwardPerToken)
        + doraBackward - (peft ? doraForward : 0);
    f.perToken = f.forwardPerToken + backward;

    double recompute = 0;
    switch (r.checkpointing.kind) {
    case Checkpointing::Kind::Full:
    case Checkpointing::Kind::Every:
        recompute = f.forwardPerToken - 2.0 * static_cast<double>(m.vocabSize * m.hiddenSize);
        break;
    case Checkpointing::Kind::Layers: {
        // The first N layers of each of the pp stages are rebuilt: that share of the layers' forward.
        const Count pp = std::max<Count>(1, r.parallelism.pipelineParallel);
        const Count perStage = ceilDiv(m.numLayers, pp);
        const double share
            = static_cast<double>(std::min(m.numLayers, pp * r.checkpointing.checkpointedLayers(perStage)))
            / static_cast<double>(std::max<Count>(1, m.numLayers));
        recompute = share * (f.forwardPerToken - 2.0 * static_cast<double>(m.vocabSize * m.hiddenSize));
        break;
    }
    case Checkpointing::Kind::Selective:
        recompute = r.attention == AttentionImpl::Eager ? f.attentionPerToken : 0;
        break;
    case Checkpointing::Kind::SelectiveOp: {
        // torchtitan's op-level save list keeps the outputs of wq, wv, w1 and w2 and
        // recomputes wk, wo and w3 (see activation_model.cpp): 2 FLOPs per weight of those.
        const double perLayer = static_cast<double>(m.hiddenSize)
            * static_cast<double>(m.numKvHeads * m.headDim + m.numHeads * m.headDim + m.ffnHiddenSize);
        recompute = 2.0 * perLayer * static_cast<double>(m.numLayers);
        break;
    }
    case Checkpointing::Kind::None:
        break;
    }
    if (r.attention == AttentionImpl::Flash)
        recompute += f.attentionPerToken / 2; // FlashAttention's backward rebuilds QK^T
    // FSDP1 flat parameters holding adapters (fsdp1FrozenGradients): backward computes the frozen block weights'
    // gradients too, 2 FLOPs per weight per token, work the model FLOPs do not count.
    const double frozenWeightGrads = fsdp1FrozenGradients(r)
        ? 2.0 * (static_cast<double>(params.matmulActive) - static_cast<double>(m.vocabSize * m.hiddenSize))
        : 0;

    // Context parallelism: cp ranks share each sample (every token still attends over the whole sequence).
    const Count dp = std::max<Count>(1, r.parallelism.sampleParallel());
    f.tokensPerStep = checkedMul(r.microBatchSize, r.sequenceLength, r.gradientAccumulationSteps, dp);
    const double tokens = static_cast<double>(f.tokensPerStep);
    f.perStep = f.perToken * tokens;
    f.frozenGradientsPerStep = frozenWeightGrads * tokens;
    f.hardwarePerStep = (f.perToken + recompute + frozenWeightGrads) * tokens;
    if (!explain)
        return f;
    // One buffer, appended in place: operator+ chains allocated a string per piece.
    const std::string perStep = num(f.perStep);
    std::string& s = f.formula;
    s.reserve(320);
    if (peft)
        s.append("(2 x forward + 2 x ").append(formatCount(loraParams)).append(" adapter params)");
    else
        s.append("3 x forward");
    s.append("; forward/token = 2 x ")
        .append(formatCount(params.matmulActive))
        .append(" params + attention ")
        .append(num(f.attentionPerToken))
        .append(doraForward > 0 ? " + DoRA's weight norm" : "")
        .append(frozenWeightGrads > 0
                ? " (hardware: + 2 x the frozen block weights, whose FSDP1 gradients are computed)"
                : "")
        .append(doraForward > 0 ? (r.finetune.dropout > 0 ? " and base linears again " : " ") : "")
        .append(doraForward > 0 ? num(doraForward) : "")
        .append(" = ")
        .append(num(f.forwardPerToken))
        .append("; x ")
        .append(formatCount(f.tokensPerStep))
        .append(" tokens/step = ")
        .append(perStep)
        .append(" FLOPs");
    return f;
}

StepTimeParts stepTime(const ModelSpec& m, const RunSpec& r, const Report& rep)
{
    StepTimeParts t;
    if (!r.gpu || r.mode != Mode::Training)
        return t;
    const GpuSpec& g = *r.gpu;
    const Parallelism& par = r.parallelism;
    const double flopsPerS = rep.flops.peakTflops * 1e12 * std::max(r.mfu, 1e-6);
    if (!(flopsPerS > 0))
        return t;
    const double gpus = static_cast<double>(par.gpus);
    t.computeS = (rep.flops.perStep + rep.flops.frozenGradientsPerStep) / (gpus * flopsPerS);
    t.recomputeS
        = (rep.flops.hardwarePerStep - rep.flops.perStep - rep.flops.frozenGradientsPerStep) / (gpus * flopsPerS);

    const PrecisionRegime reg = precisionRegime(r);
    const double link = g.interconnectGBs * 1e9, host = g.hostLinkGBs * 1e9;
    const double tp = static_cast<double>(par.tensorParallel), pp = static_cast<double>(par.pipelineParallel);
    const double dp = static_cast<double>(par.dataParallel()), micro = static_cast<double>(r.gradientAccumulationSteps);
    const double trainable = static_cast<double>(rep.stepInputs.trainableParamsLocal);
    const double params = static_cast<double>(rep.stepInputs.paramsLocal);
    const double gradB = bytesPerElement(reg.gradients), weightB = bytesPerElement(reg.working);

    // Ring collectives move (n - 1) / n of the data per GPU each way.
    if (dp > 1 && link > 0) {
        const double share = (dp - 1) / dp;
        double bytes = 0;
        switch (par.zeroStage) {
        case 0:
        case 1:
            bytes = 2 * share * trainable * gradB;
            break; // one all-reduce per step (no_sync while accumulating)
        case 2:
            bytes = micro * share * trainable * gradB + share * trainable * weightB;
            break; // reduce-scatter per micro-batch
        default: {
            // HSDP: the gathers and the reduce-scatter run inside a shard group of g GPUs, then each shard's
            // gradient is all-reduced across the dp / g replicas (FSDP2 does both every backward).
            const double group = static_cast<double>(par.shardGroup()), replicas = dp / group;
            bytes = micro * (group - 1) / group * (trainable * gradB + 2 * params * weightB)
                + micro * 2 * (replicas - 1) / replicas * trainable / group * gradB;
            break; // + gathers in forward and backward
        }
        }
        t.dataParallelS = bytes / link;
    }
    const double actBytes = static_cast<double>(r.microBatchSize) * static_cast<double>(r.sequenceLength)
        * static_cast<double>(m.hiddenSize) * bytesPerElement(reg.activations);
    const double layers = std::ceil(static_cast<double>(m.numLayers) / pp);
    if (tp > 1 && link > 0) // Megatron: 2 all-reduces forward, 2 backward per layer
        t.tensorParallelS = micro * layers * 4 * 2 * (tp - 1) / tp * actBytes / link;
    if (pp > 1) {
        // Interleaved 1F1B cuts the bubble by the chunks per rank and sends at every chunk boundary
        // (Narayanan et al. 2021, section 2.2.2: (p - 1) / (m v)).
        const double v = par.pipelineSchedule == PipelineSchedule::Interleaved
            ? static_cast<double>(std::max<Count>(1, par.virtualStages))
            : 1.0;
        const double busy = t.computeS + t.recomputeS + t.tensorParallelS;
        t.pipelineS = (pp - 1) / (micro * v) * busy + (link > 0 ? micro * v * 2 * actBytes / link : 0);
    }
    if (host > 0) {
        const double shard = par.zeroStage >= 1 ? dp : 1;
        if (par.offloadOptimizer) // gradients down, updated 16-bit weights up, and the CPU's update
            t.offloadS += trainable / shard * (gradB + weightB) / host
                + 2 * static_cast<double>(rep.hostBytes) / kHostOptimizerBytesPerS;
        if (par.offloadParams) // each micro-batch fetches the shard for forward and backward
            t.offloadS += micro * 2 * params / dp * weightB / host;
    }
    return t;
}

void applyStepTime(const ModelSpec& m, const RunSpec& r, Report& rep, bool explain)
{
    FlopsEstimate& f = rep.flops;
    f.time = stepTime(m, r, rep);
    const double total = f.time.total();
    if (!(total > 0))
        return;
    f.stepTimeS = total;
    f.tokensPerS = static_cast<double>(f.tokensPerStep) / total;
    f.mfu = f.perStep / (static_cast<double>(r.parallelism.gpus) * f.peakTflops * 1e12 * total);
    if (!explain)
        return;
    const StepTimeParts& t = f.time;
    std::string& s = f.formula;
    s.append("; step = hardware ")
        .append(num(f.hardwarePerStep))
        .append(" FLOPs / (")
        .append(num(static_cast<double>(r.parallelism.gpus)))
        .append(" GPUs x ")
        .append(num(f.peakTflops))
        .append(" TFLOP/s x efficiency ")
        .append(num(r.mfu))
        .append(") = ")
        .append(formatSeconds(t.computeS + t.recomputeS));
    const auto parts = namedParts(t);
    for (auto it = parts.begin() + 2; it != parts.end(); ++it) // compute and recomputation are the sum above
        if (const auto& [v, what] = *it; v > 0)
            s.append(" + ").append(what).append(" ").append(formatSeconds(v));
    if (total > t.computeS + t.recomputeS)
        s.append(" = ").append(formatSeconds(total));
    s.append("; MFU = model FLOPs / (GPUs x peak x step) = ").append(num(f.mfu * 100)).append("%");
}

std::string stepTimeSummary(const FlopsEstimate& f)
{
    if (!(f.stepTimeS > 0))
        return {};
    const StepTimeParts& t = f.time;
    const bool training = t.total() > 0;
    std::string s = formatSeconds(f.stepTimeS, f.stepTimeS < 10 ? 2 : 1);
    s.append(training ? " per step" : " per decode step");
    if (training && t.total() > t.computeS) {
        const char* sep = " (";
        for (const auto& [v, what] : namedParts(t))
            if (v > 0) {
                s.append(sep).append(what).append(" ").append(formatSeconds(v));
                sep = " + ";
            }
        s.append(")");
    }
    s.append(", ").append(formatCount(static_cast<Count>(std::llround(f.tokensPerS)))).append(" tokens/s");
    if (!training && f.mfu < f.efficiency * 0.999) // decode waits on memory: no utilization to speak of
        return s.append(", bandwidth-bound (reading the weights and KV cache)");
    s.append(", MFU ");
    s.append(formatDouble(f.mfu * 100, std::chars_format::fixed, 0)).append("% of ");
    s.append(formatDouble(f.peakTflops, std::chars_format::general, 4)).append(" TFLOP/s");
    if (training && f.efficiency > 0 && std::fabs(f.efficiency - f.mfu) > 5e-3)
        s.append(" (compute at ").append(formatDouble(f.efficiency * 100, std::chars_format::fixed, 0)).append("%)");
    return s;
}

} // namespace vramlab
