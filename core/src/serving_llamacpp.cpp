// SPDX-License-Identifier: MIT
// llama.cpp: GGUF weights by tensor type, the KV cache per device and the layer split
// (ggml-org/llama.cpp src/llama-kv-cache.cpp@3514e9f6e795d3b3cd88d6614f6c07e7ce6f916f,
// src/llama-model.cpp load_tensors, src/llama.cpp of builds b4000-b5000).
#include "serving_detail.h"

#include "vramlab/errors.h"
#include "vramlab/parameter_tensors.h"

#include <algorithm>
#include <cstdio>

namespace vramlab::detail {

namespace {

/// GGUF tensor name stem of a parameter tensor (llama.cpp's LLM_TENSOR names).
std::string_view ggufModule(const ParamTensor& t)
{
    if (t.group == ParamGroup::Head)
        return "output";
    if (t.group == ParamGroup::Embedding)
        return "token_embd";
    if (t.module == "v")
        return "attn_v";
    if (t.module == "down")
        return "ffn_down";
    return t.module;
}

/// Device of each layer: llama-model.cpp load_tensors. Layers from n_layer - n_gpu_layers on
/// go to the GPUs, split by the cumulative --tensor-split proportions over act_gpu_layers =
/// min(n_gpu_layers, n_layer + 1) (std::upper_bound of (il - i_gpu_start) / act_gpu_layers);
/// the output layer is layer n_layer. -1: CPU.
int layerDevice(Count il, Count nLayer, Count ngl, const std::vector<double>& cumulative)
{
    const Count start = std::max<Count>(nLayer - ngl, 0);
    if (il < start)
        return -1;
    const Count act = std::min(ngl, nLayer + 1);
    const double x = static_cast<double>(il - start) / static_cast<double>(act);
    const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), x);
    return static_cast<int>(
        std::min<std::ptrdiff_t>(it - cumulative.begin(), static_cast<std::ptrdiff_t>(cumulative.size()) - 1));
}

} // namespace

void llamaCppEstimate(const ModelSpec& m, const RunSpec& r, ServingEstimate& e)
{
    const Serving& s = *r.serving;
    if (r.parallelism.tensorParallel > 1 || r.parallelism.pipelineParallel > 1)
        throw InputError("run.parallelism",
            "expected tensor_parallel 1 and pipeline_parallel 1 for llama.cpp; split layers over GPUs with "
            "run.serving.tensor_split");
    const GgmlTypeInfo& tk = ggmlTypeInfo(s.typeK);
    const GgmlTypeInfo& tv = ggmlTypeInfo(s.typeV);
    // llama.cpp refuses a quantized V cache without flash attention ("V cache quantization requires flash_attn").
    if (tv.blockValues > 1 && !s.flashAttn)
        throw InputError("run.serving.type_v",
            "a quantized V cache needs flash_attn true (llama.cpp refuses it otherwise); got " + std::string(tv.name));
    e.rule = "llama.cpp: GGUF tensors in their ggml types (block scales included); K and V of every layer, n_ctx "
             "padded to 256 with flash "
             "attention and 32 without (llama_kv_cache_get_padding), on the device that holds the layer";
    // src/llama.cpp: cparams.n_ctx = GGML_PAD(n_ctx, llama_kv_cache_get_padding(cparams)).
    e.nCtxPadded = roundUp(s.nCtx, s.flashAttn ? 256 : 32);
    e.maxModelLen = e.nCtxPadded;
    std::vector<double> cumulative;
    const std::vector<double> split = s.tensorSplit.empty() ? std::vector<double> { 1.0 } : s.tensorSplit;
    double sum = 0;
    for (double p : split)
        sum += p;
    double acc = 0;
    for (double p : split)
        cumulative.push_back((acc += p) / sum);
    for (std::size_t i = 0; i < split.size(); ++i)
        e.devices.push_back({ "CUDA" + std::to_string(i), 0, 0, 0, s.computeBufferBytes });
    e.devices.push_back({ "CPU", 0, 0, 0, std::nullopt });
    auto device
        = [&](int d) -> LlamaCppDevice& { return d < 0 ? e.devices.back() : e.devices[static_cast<std::size_t>(d)]; };

    const Count nLayer = m.numLayers;
    const Count kWidth = std::max<Count>(1, m.numKvHeads) * m.headDim, vWidth = kWidth;
    // Interleaved sliding-window models (Gemma 2/3, Cohere2, gpt-oss: a global layer every N; Llama 4's chunks) get
    // llama_kv_cache_unified_iswa from PR #13194 (e298d2fb, May 2025, build b5429 on): the SWA layers keep
    // min(n_ctx, GGML_PAD(n_swa x n_seq_max + n_batch, n_pad)) cells unless --swa-full (src/llama-kv-cache.cpp@b5429),
    // n_ubatch in place of n_batch from b5554 (PR #13833), padded to 256 with or without flash attention from b6981
    // (PR #17046, src/llama-kv-cache-iswa.cpp). Earlier builds, and all-local models such as Mistral v0.1
    // (llama.cpp runs its llama architecture without a window), keep n_ctx cells in every layer.
    const long build = versionKey(s.engineVersion.substr(s.engineVersion.rfind('b', 0) == 0 ? 1 : 0));
    if (isLlama4(m)) {
        // src/llama-model.cpp LLM_ARCH_LLAMA4 (b5074, PR #12791): n_swa 8192 and a global layer every 4th are
        // hard-coded, whatever the model's config says.
        if (build < versionKey("5074"))
            throw InputError("run.serving.engine_version", "b5074 or later for Llama 4 (PR #12791, its first build)");
        if (!m.chunkedLocalAttention || m.slidingWindow != 8192 || m.globalLayerInterval != 4)
            throw InputError(m.slidingWindow != 8192 ? "model.sliding_window" : "model.global_layer_interval",
                "8192-token chunks with every 4th layer global for llama.cpp, which hard-codes Llama 4's chunks and "
                "pattern");
    } else if (m.moe.enabled() && m.moe.layerInterval > 1) {
        // Only Llama 4 places experts every Nth layer in llama.cpp (n_moe_layer_step); qwen2moe has every layer MoE.
        throw InputError("model.moe.layer_interval",
            "1 for llama.cpp outside Llama 4 (its other MoE architectures have experts in every layer)");
    }
    const bool iswa = m.slidingWindow > 0 && m.globalLayerInterval > 0 && !s.swaFull && build >= versionKey("5429");
    // b6981 pads after taking the minimum: GGML_PAD(min(size_base, n_swa + n_ubatch), 256).
    const Count swaSpan = m.slidingWindow + (build >= versionKey("5554") ? s.nUbatch : s.nBatch);
    const Count swaCells = !iswa      ? e.nCtxPadded
        : build >= versionKey("6981") ? roundUp(std::min(e.nCtxPadded, swaSpan), 256)
                                      : std::min(e.nCtxPadded, roundUp(swaSpan, s.flashAttn ? 256 : 32));
    for (Count il = 0; il < nLayer; ++il) {
        LlamaCppDevice& d = device(layerDevice(il, nLayer, s.nGpuLayers, cumulative));
        ++d.layers;
        // hparams.is_swa(il): Gemma 3's pattern of 6 has layers 5, 11, ... global.
        const bool swa = iswa && (il + 1) % m.globalLayerInterval != 0;
        const Count cells = swa ? swaCells : e.nCtxPadded;
        // llama_kv_cache: K [n_embd_k_gqa, kv_size], V [n_embd_v_gqa, kv_size] in type_k / type_v.
        accumulate(d.kvBufferBytes, checkedMul(cells, ggmlBytes(s.typeK, kWidth) + ggmlBytes(s.typeV, vWidth)));
        accumulate(e.kBytes, checkedMul(cells, ggmlBytes(s.typeK, kWidth)));
        accumulate(e.vBytes, checkedMul(cells, ggmlBytes(s.typeV, vWidth)));
    }
    const std::string& ft = s.quantization.ggufFileType.empty() ? std::string("F16") : s.quantization.ggufFileType;
    for (const ParamTensor& t : parameterTensors(m)) {
        const bool perLayer = t.group != ParamGroup::Embedding && t.group != ParamGroup::Head
            && t.group != ParamGroup::Position && t.name.rfind("final_norm", 0) != 0;
        const Count perLayerCopies = perLayer ? t.copies
                / (t.group == ParamGroup::Expert || t.group == ParamGroup::SharedExpert
                            || t.name.rfind("moe_layers.", 0) == 0
                        ? std::max<Count>(1, m.moeLayers())
                        : (t.name.rfind("layers.mlp.", 0) == 0 ? std::max<Count>(1, m.denseLayers()) : nLayer))
                                              : 1;
        for (Count il = 0; il < (perLayer ? nLayer : 1); ++il) {
            if (perLayer && t.name.rfind("moe_layers.", 0) == 0 && !m.isMoeLayer(il))
                continue;
            if (perLayer && t.name.rfind("layers.mlp.", 0) == 0 && m.isMoeLayer(il))
                continue;
            // 1-D tensors stay F32 in GGUF; 2-D ones take the file type's choice for them.
            const Bytes bytes = t.rows == 1
                ? checkedMul(t.cols, 4)
                : checkedMul(ggmlBytes(ggufTensorType(ft, ggufModule(t), il, nLayer, t.rows), t.rows), t.cols);
            // The input embedding always stays on the CPU; the output layer is "layer n_layer".
            const int dev = t.group == ParamGroup::Embedding || t.group == ParamGroup::Position
                ? -1
                : layerDevice(perLayer ? il : nLayer, nLayer, s.nGpuLayers, cumulative);
            accumulate(device(dev).weightsBytes, checkedMul(bytes, perLayerCopies));
        }
    }
    // llama_output_reserve(n_seq_max = 1): n_vocab fp32 logits in host memory.
    e.outputBufferBytes = checkedMul(m.vocabSize, 4);
    e.kvCacheBytes = e.kBytes + e.vBytes;
    e.kvCacheTokens = e.nCtxPadded;
    e.maxConcurrency = 1;
    if (m.slidingWindow > 0 && !iswa)
        e.warnings.push_back("sliding-window layers keep the full context here (llama.cpp before b5429, --swa-full, or "
                             "a model without global layers)");
    if (!s.computeBufferBytes)
        e.warnings.push_back("compute buffers (graph reservation for n_ubatch) are not modelled; set "
                             "run.serving.compute_buffer_mib to include them");

    char buf[256];
    const Count offloaded = std::min(s.nGpuLayers, nLayer + 1);
    std::snprintf(buf, sizeof buf, "load_tensors: offloaded %lld/%lld layers to GPU", static_cast<long long>(offloaded),
        static_cast<long long>(nLayer + 1));
    e.logLines.push_back(buf);
    for (const LlamaCppDevice& d : e.devices) {
        std::snprintf(buf, sizeof buf, "load_tensors: %10s model buffer size = %10s MiB",
            d.name == "CPU" ? "CPU_Mapped" : d.name.c_str(), mib(d.weightsBytes).c_str());
        e.logLines.push_back(buf);
    }
    for (const LlamaCppDevice& d : e.devices)
        if (d.kvBufferBytes > 0) {
            std::snprintf(buf, sizeof buf, "llama_kv_cache_init: %10s KV buffer size = %8s MiB", d.name.c_str(),
                mib(d.kvBufferBytes).c_str());
            e.logLines.push_back(buf);
        }
    std::snprintf(buf, sizeof buf,
        "llama_new_context_with_model: KV self size  = %7s MiB, K (%s): %7s MiB, V (%s): %7s MiB",
        mib(e.kBytes + e.vBytes).c_str(), std::string(tk.name).c_str(), mib(e.kBytes).c_str(),
        std::string(tv.name).c_str(), mib(e.vBytes).c_str());
    e.logLines.push_back(buf);
    std::snprintf(buf, sizeof buf, "llama_new_context_with_model:  CUDA_Host  output buffer size = %8s MiB",
        mib(e.outputBufferBytes).c_str());
    e.logLines.push_back(buf);
}

} // namespace vramlab::detail
