// SPDX-License-Identifier: MIT
// SGLang's token pool: python/sglang/srt/model_executor/model_runner.py profile_max_num_token
// (model_runner_kv_cache_mixin.py in later versions; stored copy @001ccef0072a4537d4ec6bdd50a73e6feb2c907d).
#include "serving_detail.h"

#include "vramlab/errors.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>

namespace vramlab::detail {

namespace {

/// SGLang's pools for a hybrid model (model_runner_kv_cache_mixin.py profile_max_num_token @001ccef007,
/// configs/mamba_utils.py @02e208ded6, mem_cache/memory_pool.py MambaPool): the Mamba states take
/// rest x r / (1 + r) (r = --mamba-full-memory-ratio, 0.9 since PR #11679), or max_running_requests states with
/// the radix cache off, or --max-mamba-cache-size; the attention layers' token pool takes what is left.
/// Returns the Mamba states held; `rest` becomes the token pool's bytes.
Count sglangMambaPool(const ModelSpec& m, const Serving& s, Count tp, ServingRank& k, std::string* logLine)
{
    if (versionKey(s.engineVersion) < versionKey("0.5.4"))
        throw InputError("run.serving.engine_version",
            "0.5.4 or later for a hybrid state-space model (its Mamba pool and mamba_full_memory_ratio 0.9; earlier "
            "pools are not modelled)");
    // The conv state in the model dtype (SGLANG_MAMBA_CONV_DTYPE, then --dtype); the scan's state in
    // --mamba-ssm-dtype, else the config's mamba_ssm_dtype, else float32.
    const SsmStateBytes state
        = ssmStateBytes(m, tp, s.dtype, s.mambaSsmCacheDtype.value_or(m.ssm.stateDtype.value_or(DType::Fp32)));
    const Bytes perRequest = checkedMul(state.total(), m.ssm.layers);
    k.statePerSequenceBytes = perRequest;
    Count size = 0;
    if (s.maxMambaCacheSize)
        size = *s.maxMambaCacheSize;
    else if (s.disableRadixCache && s.maxNumSeqs)
        size = *s.maxNumSeqs;
    else if (k.kvCacheBytes > 0) {
        const double r = s.mambaFullMemoryRatio.value_or(0.9);
        size = static_cast<Count>(static_cast<double>(k.kvCacheBytes) * r / (1 + r)) / perRequest;
    }
    k.stateBytes = checkedMul(size, perRequest);
    k.kvCacheBytes -= k.stateBytes;
    // MambaPool allocates size + 1 slots (slot 0 is a dummy) of every Mamba layer; printed after the weights load.
    const Count slots = size + 1, layers = m.ssm.layers;
    *logLine = ("Mamba Cache is allocated. max_mamba_cache_size: " + std::to_string(size)
        + ", conv_state size: " + gib(checkedMul(state.conv, slots, layers))
        + "GB, ssm_state size: " + gib(checkedMul(state.ssm, slots, layers)) + "GB");
    return size;
}

/// An SGLang release as a comparable number with its .postN counted: the multimodal rule changed at 0.4.4.post4 and
/// 0.4.9.post3.
long sglangRelease(const std::string& v)
{
    long post = 0;
    const std::size_t at = v.find("post"); // "0.4.9.post3", or "0.4.9post3" as pip also reads it
    if (at != std::string::npos)
        for (std::size_t p = at + 4; p < v.size() && std::isdigit(static_cast<unsigned char>(v[p])) && post < 1000; ++p)
            post = post * 10 + (v[p] - '0');
    return versionKey(v) * 1000 + post;
}

/// configs/model_config.py is_multimodal: an architecture with a vision tower, except Gemma 3's and Llama 4's from
/// v0.4.6 (mm_disabled_models, PR #5349), which are text-only unless launched with --enable-multimodal
/// (run.serving.multimodal). Without model.vision, run.serving.multimodal says the architecture has a tower.
bool sglangMultimodal(const ModelSpec& m, const Serving& s, long release)
{
    if (!m.vision.enabled())
        return s.multimodal;
    // v0.4.5 runs Llama4ForConditionalGeneration as text (model_config.py: "TODO: add multimodal support").
    if (m.vision.kind == VisionKind::Llama4 && release < sglangRelease("0.4.5.post1"))
        return false;
    const bool offByDefault = (m.vision.kind == VisionKind::Siglip || m.vision.kind == VisionKind::Llama4)
        && release >= sglangRelease("0.4.6");
    return !offByDefault || s.multimodal;
}

/// Whether SGLang builds the tower and loads its weights: Gemma 3's always (gemma3_mm.py); Llama 4's from v0.4.5.post1
/// (v0.4.5's mllama4.py builds the language model only), and from v0.4.9.post4 only with --enable-multimodal
/// (PR #8272: has_vision = has_vision_weights and enable_multimodal).
bool sglangLoadsTower(const ModelSpec& m, long release, bool multimodal)
{
    if (m.vision.kind != VisionKind::Llama4)
        return true;
    return release >= sglangRelease("0.4.5.post1") && (release < sglangRelease("0.4.9.post4") || multimodal);
}

/// What SGLang multiplies mem_fraction_static by for a multimodal model: 0.95 on any value up to v0.4.4.post3
/// (model_runner.py), 0.90 to v0.4.8 (PR #4754), 0.90 only on the default value in v0.4.9-0.4.9.post2 (moved to
/// server_args.py, PR #7748), then, on the default only, adjust_mem_fraction_for_vlm (PR #6881, unchanged to
/// v0.5.18): 0.95 x clamp(1 - 0.1 (L H^2 / (24 x 1024^2) - 1), 0.8, 1.05), L and H the vision_config's
/// num_hidden_layers (24 where it has none: Qwen's towers say depth) and hidden_size.
double sglangMultimodalFactor(const ModelSpec& m, const Serving& s, long release)
{
    if (release < sglangRelease("0.4.4.post4"))
        return 0.95;
    if (release < sglangRelease("0.4.9"))
        return 0.90;
    if (s.memFractionStatic)
        return 1.0;
    if (release < sglangRelease("0.4.9.post3"))
        return 0.90;
    if (!m.vision.enabled())
        throw InputError("model.vision",
            "the vision tower (SGLang from 0.4.9.post3 scales the default mem_fraction_static by the tower's depth and "
            "width, adjust_mem_fraction_for_vlm); run.serving.multimodal alone does not say them, or set "
            "run.serving.mem_fraction_static");
    const VisionSpec& v = m.vision;
    const double layers = v.fixedImage() ? static_cast<double>(v.numLayers) : 24.0;
    const double width = static_cast<double>(v.hiddenSize);
    const double ratio = layers * width * width / (24.0 * 1024.0 * 1024.0);
    return 0.95 * std::clamp(1.0 - 0.1 * (ratio - 1.0), 0.8, 1.05);
}

/// How many token counts SGLang captures piecewise prefill CUDA graphs for, up to `maxTokens` (server_args.py
/// v0.5.10+: 4..32 by 4, 48..256 by 16, 288..512 by 32, 576..1024 by 64, 1280..4096 by 256, then by 512).
Count prefillGraphSizes(Count maxTokens)
{
    Count n = 0;
    const auto range = [&](Count lo, Count hi, Count step) {
        for (Count t = lo; t <= hi && t <= maxTokens; t += step)
            ++n;
    };
    range(4, 32, 4);
    range(48, 256, 16);
    range(288, 512, 32);
    range(576, 1024, 64);
    range(1280, 4096, 256);
    range(4608, maxTokens, 512);
    return n;
}

/// SGLang's default --mem-fraction-static (python/sglang/srt/server_args.py by release; facts and worked examples:
/// tests/data/published/serving/ACCOUNTING_FACTS.md), with default flags: no speculative decoding, no DP attention,
/// no disaggregation. gpu_mem is nvidia-smi's memory.total in MiB (get_device_memory_capacity), the catalog's figure.
double sglangDefaultMfs(const ModelSpec& m, const Serving& s, long release, Bytes totalGpuBytes, Count tp, bool mm)
{
    const auto table = [&](Count ps) { // v0.2.7 - v0.4.7; TP 8 was 0.83 before 0.3.6 and 0.82 in 0.3.6.x
        return ps >= 16                                   ? 0.79
            : ps >= 8 && release < sglangRelease("0.3.6") ? 0.83
            : ps >= 8 && release < sglangRelease("0.4.0") ? 0.82
            : ps >= 8                                     ? 0.81
            : ps >= 4                                     ? 0.85
            : ps >= 2                                     ? 0.87
                                                          : 0.88;
    };
    const double gpu = static_cast<double>(totalGpuBytes) / static_cast<double>(kMiB);
    // Python's round(x, 3): the double's exact value rounded (0.6625 is stored as 0.66249999..., so 0.662), which
    // printf's conversion also does; x * 1000 would land on 662.5 and round up.
    const auto round3 = [](double x) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.3f", x);
        return std::strtod(buf, nullptr);
    };
    if (release < sglangRelease("0.4.5.post3"))
        return table(tp);
    if (release < sglangRelease("0.4.6.post2")) // PR #5604: large GPUs keep 13 GiB
        return gpu <= 81920 ? table(tp) : (gpu - 13 * 1024) / gpu;
    if (release < sglangRelease("0.4.7.post1")) { // PR #5893 (H200), #6748 (B200: 0.79 above 180,000 MiB)
        const double base = gpu <= 81920 ? table(tp) : 0.88;
        if (release >= sglangRelease("0.4.7") && gpu > 180 * 1000)
            return 0.79;
        return gpu > 96 * 1024 ? std::min(base + 48 * 1024 * (1 - base) / gpu, (gpu - 18 * 1024) / gpu) : base;
    }
    const double ps = static_cast<double>(tp);
    double reserved = 0;
    if (release < sglangRelease("0.5.3")) { // PR #7054: a reserve by GPU size class
        reserved = gpu < 35 * 1024 ? (2.8 + ps / 10) * 1024
            : gpu < 90 * 1024      ? (9.5 + ps / 2) * 1024
            : gpu < 160 * 1024     ? (12 + ps / 2) * 1024
                                   : 32 * 1024;
        return round3((gpu - reserved) / gpu);
    }
    // PR #10975 (_handle_gpu_memory_settings): the chunked-prefill activations, the decode CUDA graphs' batch and the
    // ranks, by the defaults of the GPU's size class; from 0.5.10 the piecewise prefill graphs (on by default, off
    // for multimodal models), 8 MiB per captured size or 1.5 GiB with MLA; at least 10 GiB above 60 GiB.
    const bool small = tp < 4;
    const Count chunk = gpu < 35 * 1024 ? 2048 : gpu < 60 * 1024 ? 4096 : gpu < 160 * 1024 ? 8192 : 16384;
    const Count maxBs = gpu < 20 * 1024 ? 8
        : gpu < 35 * 1024               ? (small ? (release >= sglangRelease("0.5.4.post1") ? 24 : 16) : 80)
        : gpu < 60 * 1024               ? (small ? 32 : 160)
        : gpu < 160 * 1024              ? (small ? 256 : 512)
                                        : 512;
    reserved = 512 + 1.5 * static_cast<double>(chunk) + 2.0 * static_cast<double>(maxBs) + ps / 8 * 1024;
    if (release >= sglangRelease("0.5.10") && !mm) {
        const bool mla = m.attentionType == AttentionType::Mla;
        Count graphTokens = chunk;
        if (release >= sglangRelease("0.5.13")) // capped by the context length
            graphTokens = std::min(graphTokens, s.contextLength.value_or(m.maxPositionEmbeddings));
        reserved += mla ? 1.5 * 1024 : 8.0 * static_cast<double>(prefillGraphSizes(graphTokens));
    }
    if (gpu > 60 * 1024)
        reserved = std::max(reserved, 10.0 * 1024);
    return round3((gpu - reserved) / gpu);
}

} // namespace

void sglangEstimate(const ModelSpec& m, const RunSpec& r, ServingEstimate& e)
{
    const Serving& s = *r.serving;
    const Count tp = r.parallelism.tensorParallel;
    if (r.parallelism.pipelineParallel > 1)
        throw InputError(
            "run.parallelism.pipeline_parallel", "expected 1 for SGLang (its pipeline parallelism is not modelled)");
    if (m.numHeads % tp != 0)
        throw InputError("run.parallelism.tensor_parallel",
            "expected a divisor of model.num_heads (" + std::to_string(m.numHeads) + "), got " + std::to_string(tp));
    // Llama 4 arrived in v0.4.5 (PR #5092). From v0.5.8 Llama4ForConditionalGeneration (the tower loaded) gets a
    // hybrid pool by default, its chunked layers a share swa_full_tokens_ratio of the full pool
    // (configs/model_config.py is_hybrid_swa_model, model_runner_kv_cache_mixin.py); not modelled. Before, and for
    // the text-only Llama4ForCausalLM, every layer takes the full pool (--hybrid-kvcache-ratio unset).
    if (isLlama4(m)) {
        const long v = versionKey(e.engineVersion);
        if (v < versionKey("0.4.5"))
            throw InputError("run.serving.engine_version", "0.4.5 or later for Llama 4 (PR #5092, its first release)");
        if (m.chunkedLocalAttention && m.vision.enabled() && v >= versionKey("0.5.8"))
            throw InputError("run.serving.engine_version",
                "before 0.5.8 for Llama 4 with its vision tower (from 0.5.8 SGLang gives the chunked layers a pool of "
                "swa_full_tokens_ratio x the full one, which is not modelled yet)");
    }
    // python/sglang/srt/server_args.py: mem_fraction_static, by default the release's rule (sglangDefaultMfs), then
    // lowered for a multimodal model (sglangMultimodalFactor).
    const long release = sglangRelease(e.engineVersion);
    const bool multimodal = sglangMultimodal(m, s, release);
    const bool loadsTower = m.vision.enabled() && sglangLoadsTower(m, release, multimodal);
    const double mfsGiven
        = s.memFractionStatic.value_or(sglangDefaultMfs(m, s, release, e.totalGpuBytes, tp, multimodal));
    const double mfsFactor = multimodal ? sglangMultimodalFactor(m, s, release) : 1.0;
    const double mfs = mfsGiven * mfsFactor;
    e.rule = "SGLang (model_runner.profile_max_num_token): rest = free memory after loading the weights - free memory "
             "before loading "
             "x (1 - mem_fraction_static); max_total_num_tokens = rest // cell size; no profiling forward (activations "
             "and CUDA "
             "graphs live in the 1 - mem_fraction_static share)";
    if (multimodal) {
        char factor[32];
        std::snprintf(factor, sizeof factor, "%.4f", mfsFactor);
        e.rule += std::string("; a multimodal model: mem_fraction_static x ") + factor
            + (release >= sglangRelease("0.5.18") ? ", and 100 MiB for the image-embedding cache" : "");
    } else if (m.vision.enabled()) {
        e.rule += loadsTower ? "; the vision tower is loaded (its weights count) but the model runs text-only (SGLang "
                               "from 0.4.6 enables Gemma 3's and Llama 4's images only with --enable-multimodal: "
                               "run.serving.multimodal)"
                             : "; the model runs text-only and its vision tower is not built (Llama 4 without "
                               "--enable-multimodal from 0.4.9.post4, or on 0.4.5: run.serving.multimodal)";
    }
    e.maxModelLen = s.contextLength.value_or(m.maxPositionEmbeddings);
    const Stage st = pipelineStage(m, 0, 1);
    ServingRank k;
    k.name = "tp rank 0";
    k.layers = m.numLayers;
    ModelSpec loaded = m;
    if (!loadsTower)
        loaded.vision = {};
    k.weightsBytes = rankWeightsBytes(loaded, s, tp, st);
    // Memory taken before the model loads (CUDA context, NCCL): an input. What the rule calls
    // total_gpu_memory is the free memory then (init_torch_distributed returns
    // get_available_gpu_memory(), passed on as min_per_gpu_memory / pre_model_load_memory).
    k.nonTorchBytes = s.nonTorchBytes.value_or(
        r.overheads.cudaContextBytes + (tp > 1 ? r.overheads.commBufferBytes.value_or(256 * kMiB) : 0));
    const Bytes preLoad = e.totalGpuBytes - k.nonTorchBytes;
    const Bytes available = preLoad - k.weightsBytes;
    const Bytes reserved = static_cast<Bytes>(static_cast<double>(preLoad) * (1.0 - mfs));
    k.budgetBytes = preLoad - reserved;
    k.kvCacheBytes = available - reserved;
    // v0.5.18 (kv_cache_configurator.py mm_runtime_reservation_gb, PR #34141): a multimodal model's embedding cache,
    // SGLANG_VLM_CACHE_SIZE_MB (100), comes out of the pool's share.
    if (multimodal && release >= sglangRelease("0.5.18"))
        k.kvCacheBytes -= 100 * kMiB;
    std::string mambaLine;
    const Count mambaStates = m.ssm.enabled() ? sglangMambaPool(m, s, tp, k, &mambaLine) : 0;
    // get_cell_size_per_token: kv heads per rank x (head_dim + v_head_dim) x layers x element size;
    // one pool for every layer (sliding-window layers get their own pool only from the hybrid-SWA versions;
    // a hybrid model's attention layers only).
    k.kvBytesPerToken = kvBytesPerToken(m, tp, m.attentionLayers(), kvDtype(s));
    k.blocks = k.kvCacheBytes > 0 ? k.kvCacheBytes / k.kvBytesPerToken : 0;
    e.ranks.push_back(k);
    e.kvCacheTokens = k.blocks;
    e.kvCacheBytes = k.kvCacheBytes;
    e.maxConcurrency = static_cast<double>(e.kvCacheTokens) / static_cast<double>(std::max<Count>(1, e.maxModelLen));
    // init_memory_pool: max_running_requests = min(max(int(tokens / context_len * 512), 2048), 4096).
    e.maxNumSeqs = s.maxNumSeqs.value_or(
        std::min<Count>(std::max<Count>(e.kvCacheTokens * 512 / std::max<Count>(1, e.maxModelLen), 2048), 4096));
    // A hybrid model runs at most one request per Mamba state (three per state with the radix cache, which keeps
    // states of cached prefixes).
    if (m.ssm.enabled() && !s.maxNumSeqs)
        e.maxNumSeqs = std::min(e.maxNumSeqs, mambaStates / (s.disableRadixCache ? 1 : 3));
    if (m.ssm.enabled()) {
        e.maxConcurrency = std::min(e.maxConcurrency, static_cast<double>(mambaStates));
        // The rank's cache is both pools, the Mamba pool's share in stateBytes (set with it).
        e.kvCacheBytes = k.kvCacheBytes + k.stateBytes;
        e.ranks.back().kvCacheBytes = e.kvCacheBytes;
    }
    if (m.slidingWindow > 0)
        e.warnings.push_back(
            "sliding-window layers are given the full context, as SGLang did before its hybrid-SWA pools");
    if (k.blocks <= 0) {
        e.startupFails = true;
        e.failure = "Not enough memory. Please try to increase --mem-fraction-static.";
    }
    const Bytes half = checkedMul(k.blocks, k.kvBytesPerToken) / 2;
    char buf[256];
    std::snprintf(buf, sizeof buf, "Load weight end. avail mem=%s GB, mem usage=%s GB.", gib(available).c_str(),
        gib(k.weightsBytes).c_str());
    e.logLines.push_back(buf);
    if (!mambaLine.empty())
        e.logLines.push_back(mambaLine);
    std::snprintf(buf, sizeof buf, "KV Cache is allocated. #tokens: %lld, K size: %s GB, V size: %s GB",
        static_cast<long long>(k.blocks), gib(half).c_str(), gib(half).c_str());
    e.logLines.push_back(buf);
    std::snprintf(buf, sizeof buf, "max_total_num_tokens=%lld, max_running_requests=%lld, context_len=%lld",
        static_cast<long long>(k.blocks), static_cast<long long>(e.maxNumSeqs), static_cast<long long>(e.maxModelLen));
    e.logLines.push_back(buf);
}

} // namespace vramlab::detail
