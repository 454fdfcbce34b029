// SPDX-License-Identifier: MIT
#include "vramlab/serving_speed.h"

#include "serving_detail.h"
#include "vramlab/parameter_tensors.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace vramlab {

namespace {

std::string ms(double s)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f ms", s * 1e3);
    return buf;
}

/// Keys the new tokens at positions [past, past + tokens) attend to, summed, in a layer of fixed chunks of `c`
/// tokens (Llama 4): the token at position q sees q mod c + 1 of them.
double chunkedKeys(double past, double tokens, double c)
{
    const auto upTo = [c](double n) { // the sum over positions [0, n)
        const double full = std::floor(n / c), rest = n - full * c;
        return full * c * (c + 1) / 2 + rest * (rest + 1) / 2;
    };
    return upTo(past + tokens) - upTo(past);
}

/// Causal attention FLOPs (QK^T and PV) of `tokens` new tokens over `past` earlier ones, per layer set.
double attentionFlops(const ModelSpec& m, double tokens, double past)
{
    const double width = m.attentionType == AttentionType::Mla ? static_cast<double>(m.numHeads)
            * static_cast<double>(m.mla.qkNopeHeadDim + m.mla.qkRopeHeadDim + m.mla.vHeadDim)
                                                               : 2.0 * static_cast<double>(m.qWidth());
    const double attended = tokens * past + tokens * (tokens + 1) / 2; // each new token sees the past and itself
    double span = attended * static_cast<double>(m.globalLayers());
    if (m.localLayers() > 0) {
        const double w = static_cast<double>(m.slidingWindow);
        span += (m.chunkedLocalAttention ? chunkedKeys(past, tokens, w) : tokens * std::min(w, past + (tokens + 1) / 2))
            * static_cast<double>(m.localLayers());
    }
    return 2.0 * width * span;
}

} // namespace

ServingSpeed servingSpeed(
    const ModelSpec& m, const RunSpec& r, const ServingEstimate& e, Count batch, Count prompt, Count context)
{
    ServingSpeed s;
    s.batch = std::max<Count>(1, batch);
    s.promptTokens = std::max<Count>(1, prompt);
    s.contextTokens = std::max<Count>(1, context);
    if (!r.gpu || r.gpu->memoryBandwidthGBs <= 0 || (e.ranks.empty() && e.devices.empty()))
        return s;
    const Serving& sv = *r.serving;
    const Count tp = std::max<Count>(1, r.parallelism.tensorParallel);
    // FP8 checkpoints run fp8 GEMMs where the GPU has them (vLLM's fp8.py: cutlass / torch._scaled_mm);
    // weight-only formats (AWQ, GPTQ, Marlin, bitsandbytes, GGUF) dequantize into the activation dtype.
    const bool fp8 = sv.quantization.kind == QuantKind::Fp8 || sv.quantization.kind == QuantKind::Fp8Block;
    const double peak = r.gpu->peakTflops(fp8 && r.gpu->fp8Tflops > 0 ? DType::Fp8 : sv.dtype) * 1e12;
    const double bw = r.gpu->memoryBandwidthGBs * 1e9;
    if (peak <= 0)
        return s;
    s.available = true;
    const ParameterCount pc = countParameters(m);
    // Weights one GPU reads per forward: every pipeline stage runs in turn, so a token pays all of them.
    Bytes weights = 0, experts = 0;
    for (Count rank = 0; rank < std::max<Count>(1, r.parallelism.pipelineParallel); ++rank) {
        Bytes ex = 0;
        const detail::Stage st = detail::pipelineStage(m, rank, std::max<Count>(1, r.parallelism.pipelineParallel));
        accumulate(weights, detail::rankWeightsBytes(m, sv, tp, st, &ex));
        accumulate(experts, ex);
    }
    if (sv.engine
        == ServingEngine::LlamaCpp) // the GGUF bytes of the offloaded part (CPU layers are not on this roofline)
        weights = e.devices.front().weightsBytes, experts = 0;
    const double kvPerToken
        = static_cast<double>(detail::kvBytesPerToken(m, tp, m.attentionLayers(), detail::kvDtype(sv)));
    const double kvPerLayerToken = static_cast<double>(detail::kvBytesPerToken(m, tp, 1, detail::kvDtype(sv)));
    // Hybrid models: each step reads and writes every sequence's recurrent states (the scan's FLOPs are left out,
    // as attention's softmax is: an upper bound on speed).
    const double statePerSeq = e.ranks.empty() ? 0.0 : static_cast<double>(e.ranks.front().statePerSequenceBytes);
    const double dense = static_cast<double>(pc.matmulActive);
    const double B = static_cast<double>(s.batch), P = static_cast<double>(s.promptTokens),
                 C = static_cast<double>(s.contextTokens);
    const double TP = static_cast<double>(tp);

    // Prefill: 2 x active matmul parameters per token + causal attention; the weights read once.
    s.prefillFlops = (2.0 * dense * P + attentionFlops(m, P, 0)) / TP;
    s.prefillBytes = static_cast<double>(weights) + kvPerToken * P + statePerSeq;
    // Tensor parallel: Megatron-style layers all-reduce their output twice per layer (after o_proj and after
    // down_proj; vLLM's RowParallelLinear, tensor_model_parallel_all_reduce), a hybrid's Mamba-2 block once
    // (out_proj), every token's hidden state in the model dtype; a ring moves 2 (tp - 1) / tp of it over each
    // GPU's link. Not overlapped with compute in vLLM's forward.
    const double link = r.gpu->interconnectGBs * 1e9;
    double allReducesPerToken = 0;
    if (tp > 1 && link > 0) {
        const double blocks = static_cast<double>(m.attentionLayers() + m.mlpLayers())
            + (m.ssm.parallel ? 0.0 : static_cast<double>(m.ssm.layers));
        allReducesPerToken = blocks * 2.0 * (TP - 1) / TP * static_cast<double>(m.hiddenSize)
            * static_cast<double>(bytesPerElement(sv.dtype)) / link;
    }
    s.prefillAllReduceS = allReducesPerToken * P;
    const double pc_t = s.prefillFlops / peak, pb_t = s.prefillBytes / bw;
    s.ttftS = std::max(pc_t, pb_t) + s.prefillAllReduceS;
    s.prefillBound = pc_t >= pb_t ? "compute-bound" : "bandwidth-bound";

    // Decode: one token per sequence. Dense weights once per step for the whole batch; routed
    // experts only those the batch's tokens pick.
    double expertFraction = 1.0;
    if (m.moe.enabled()) {
        const double E = static_cast<double>(m.moe.numExperts), k = static_cast<double>(m.moe.topK);
        s.expectedExperts = E * (1.0 - std::pow(1.0 - k / E, B));
        expertFraction = s.expectedExperts / E;
    }
    const double weightBytes = static_cast<double>(weights - experts) + static_cast<double>(experts) * expertFraction;
    // A decode step reads every full layer's whole context but a local layer's window at most (a chunk's last token
    // reads the whole chunk): the engines' windowed kernels read those keys alone, whatever the cache holds.
    const double kvRead = kvPerLayerToken
        * (static_cast<double>(m.globalLayers()) * C
            + static_cast<double>(m.localLayers()) * std::min(static_cast<double>(m.slidingWindow), C));
    s.decodeBytes = weightBytes + kvRead * B + 2.0 * statePerSeq * B;
    s.decodeFlops = (2.0 * dense * B + attentionFlops(m, 1, C) * B) / TP;
    const double dc_t = s.decodeFlops / peak, db_t = s.decodeBytes / bw;
    s.decodeAllReduceS = allReducesPerToken * B;
    s.tpotS = std::max(dc_t, db_t) + s.decodeAllReduceS;
    s.decodeBound = dc_t >= db_t ? "compute-bound" : "bandwidth-bound";
    s.tokensPerSPerUser = 1.0 / s.tpotS;
    s.tokensPerSTotal = B / s.tpotS;
    s.formula = "TTFT = max(prefill FLOPs " + ms(pc_t) + ", weights + KV written " + ms(pb_t)
        + "); TPOT = max(step FLOPs " + ms(dc_t) + ", weights read once + " + std::to_string(s.batch) + " x "
        + std::to_string(s.contextTokens) + " tokens of KV"
        + (kvRead < kvPerToken * C ? std::string(" (local layers: their window's or chunk's keys only)")
                                   : std::string())
        + (statePerSeq > 0 ? " + their " + e.stateKind + " states" : std::string()) + " " + ms(db_t) + ") at "
        + std::to_string(static_cast<long long>(r.gpu->memoryBandwidthGBs)) + " GB/s";
    if (s.decodeAllReduceS > 0)
        s.formula += "; + tensor-parallel all-reduces " + ms(s.prefillAllReduceS) + " (prefill), "
            + ms(s.decodeAllReduceS) + " (step) at " + std::to_string(static_cast<long long>(r.gpu->interconnectGBs))
            + " GB/s (latency not counted)";
    if (m.moe.enabled()) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "; MoE: %.1f of %lld experts read per layer per step", s.expectedExperts,
            static_cast<long long>(m.moe.numExperts));
        s.formula += buf;
    }
    return s;
}

} // namespace vramlab
