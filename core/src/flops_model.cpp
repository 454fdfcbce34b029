// SPDX-License-Identifier: MIT
#include "vramlab/flops_model.h"

#include "vramlab/precision_regime.h"

#include <algorithm>

namespace vramlab {

namespace {

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
    f.mfu = r.mfu;
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
    const double backward = peft ? f.forwardPerToken + 2.0 * static_cast<double>(loraParams) : 2.0 * f.forwardPerToken;
    f.perToken = f.forwardPerToken + backward;

    double recompute = 0;
    switch (r.checkpointing.kind) {
    case Checkpointing::Kind::Full:
    case Checkpointing::Kind::Every:
        recompute = f.forwardPerToken - 2.0 * static_cast<double>(m.vocabSize * m.hiddenSize);
        break;
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

    // Context parallelism: cp ranks share each sample (every token still attends over the whole sequence).
    const Count dp = std::max<Count>(1, r.parallelism.sampleParallel());
    f.tokensPerStep = checkedMul(r.microBatchSize, r.sequenceLength, r.gradientAccumulationSteps, dp);
    const double tokens = static_cast<double>(f.tokensPerStep);
    f.perStep = f.perToken * tokens;
    f.hardwarePerStep = (f.perToken + recompute) * tokens;
    if (peak > 0) {
        f.stepTimeS = f.perStep / (gpus * peak * std::max(r.mfu, 1e-6));
        f.tokensPerS = tokens / f.stepTimeS;
    }
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
        .append(" = ")
        .append(num(f.forwardPerToken))
        .append("; x ")
        .append(formatCount(f.tokensPerStep))
        .append(" tokens/step = ")
        .append(perStep)
        .append(" FLOPs");
    if (peak > 0)
        s.append("; step = ")
            .append(perStep)
            .append(" / (")
            .append(num(gpus))
            .append(" GPUs x ")
            .append(num(f.peakTflops))
            .append(" TFLOP/s x MFU ")
            .append(num(r.mfu))
            .append(") = ")
            .append(num(f.stepTimeS))
            .append(" s");
    return f;
}

} // namespace vramlab
