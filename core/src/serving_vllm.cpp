// SPDX-License-Identifier: MIT
// vLLM's KV-cache budget, rule by version (tests/data/published/serving/ACCOUNTING_FACTS.md
// has the full citations; each rule's source is named where it is applied below).
#include "serving_detail.h"

#include "vramlab/errors.h"

#include <algorithm>
#include <cstdio>

namespace vramlab::detail {

namespace {

/// The accounting rule of a vLLM version.
int vllmRule(long v)
{
    if (v < versionKey("0.2.5"))
        return 1; // torch max_memory_allocated (before PR #2031)
    if (v < versionKey("0.6.4"))
        return 2; // free-memory peak, vllm/worker/worker.py determine_num_available_blocks
    if (v < versionKey("0.6.5"))
        return 3; // PR #9352: torch allocated peak + non-torch after empty_cache
    if (v < versionKey("0.9.2"))
        return 4; // PR #10511: baseline snapshot, weights + non-torch increase + activation peak
    if (v < versionKey("0.20.0"))
        return 5; // V1 gpu_worker.determine_available_memory after PR #19312
    // PR #38284 (envs.py: "Enabled by default as of v0.21.0"), already in the official v0.20.0 image, whose log says
    // "CUDA graph memory profiling is enabled".
    return 6; // V1 with VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS on by default
}

/// --enable-prefix-caching for a hybrid model: as the run sets it, else vLLM's default, off until 0.27 (PR #23716:
/// "Disable prefix caching default for hybrid models") and on from 0.28.0 (PR #50991, align mode; vllm-metal #651
/// dates it to 0.28.0).
bool hybridPrefixCaching(const Serving& s, long v)
{
    return s.enablePrefixCaching.value_or(v >= versionKey("0.28.0"));
}

const char* ruleText(int rule)
{
    switch (rule) {
    case 1:
        return "vLLM <= 0.2.4: KV = total x gpu_memory_utilization - torch max_memory_allocated after the profile run "
               "(weights + activations; memory outside torch is not seen)";
    case 2:
        return "vLLM 0.2.5-0.6.3 (vllm/worker/worker.py determine_num_available_blocks): KV = total x "
               "gpu_memory_utilization - (free memory at init - free memory after the profile run)";
    case 3:
        return "vLLM 0.6.4 (PR #9352): KV = total x gpu_memory_utilization - torch allocated peak (weights included) - "
               "non-torch memory";
    case 4:
        return "vLLM 0.6.5-0.9.1 (PR #10511, memory_profiling): KV = total x gpu_memory_utilization - weights - "
               "non-torch increase - PyTorch activation peak";
    case 5:
        return "vLLM V1 0.9.2+ (vllm/v1/worker/gpu_worker.py determine_available_memory, PR #19312): Available KV "
               "cache memory = requested - weights - non-torch - activation peak; CUDA graphs not subtracted";
    default:
        return "vLLM V1 with CUDA-graph memory profiling (PR #30515): KV = requested - weights - non-torch - "
               "activation peak - CUDA-graph estimate";
    }
}

std::string fmt(const char* f, double a)
{
    char buf[160];
    std::snprintf(buf, sizeof buf, f, a);
    return buf;
}

/// "23,648" as vLLM's f"{num_tokens:,}" prints it.
std::string thousands(Count n)
{
    std::string s = std::to_string(n), out;
    const int lead = static_cast<int>(s.size()) % 3;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (i != 0 && (static_cast<int>(i) - lead) % 3 == 0 && s[0] != '-')
            out += ',';
        out += s[i];
    }
    return out;
}

void logLines(ServingEstimate& e, int rule, const Serving& s)
{
    const ServingRank& k = e.limiting();
    std::vector<std::string>& L = e.logLines;
    L.push_back("Loading model weights took " + gib(k.weightsBytes, 4) + " GB");
    if (rule == 3) {
        L.push_back("Memory profiling results: total_gpu_memory=" + gib(e.totalGpuBytes)
            + "GiB peak_torch_memory=" + gib(k.weightsBytes + k.activationPeakBytes)
            + "GiB non_torch_memory=" + gib(k.nonTorchBytes) + "GiB kv_cache_size=" + gib(k.kvCacheBytes)
            + "GiB gpu_memory_utilization=" + fmt("%.2f", gpuMemoryUtilizationOrDefault(s)));
    } else if (rule == 4) {
        L.push_back("the current vLLM instance can use total_gpu_memory (" + gib(e.totalGpuBytes)
            + "GiB) x gpu_memory_utilization (" + fmt("%.2f", gpuMemoryUtilizationOrDefault(s))
            + ") = " + gib(k.budgetBytes) + "GiB");
        L.push_back("model weights take " + gib(k.weightsBytes) + "GiB; non_torch_memory takes " + gib(k.nonTorchBytes)
            + "GiB; PyTorch activation peak memory takes " + gib(k.activationPeakBytes)
            + "GiB; the rest of the memory reserved for KV Cache is " + gib(k.kvCacheBytes) + "GiB.");
    } else if (rule >= 5) {
        L.push_back("Available KV cache memory: " + gib(k.kvCacheBytes) + " GiB");
    }
    const Count blocks = e.gpuBlocks.value_or(0);
    if (rule <= 4) {
        L.push_back("# GPU blocks: " + std::to_string(blocks) + ", # CPU blocks: " + std::to_string(e.cpuBlocks));
        L.push_back("Maximum concurrency for " + std::to_string(e.maxModelLen)
            + " tokens per request: " + fmt("%.2fx", e.maxConcurrency));
    } else {
        L.push_back("GPU KV cache size: " + thousands(e.kvCacheTokens) + " tokens");
        L.push_back("Maximum concurrency for " + thousands(e.maxModelLen)
            + " tokens per request: " + fmt("%.2fx", e.maxConcurrency));
    }
}

/// "GPU KV cache size" is int(max_concurrency x max_model_len) from 0.21.0 (PR #41069, merged after the 0.20
/// branch cut), num_blocks // groups x the smallest block before (kv_cache_utils.py _report_kv_cache_config).
bool kvSizeFromConcurrency(long v)
{
    return v >= versionKey("0.21.0");
}

/// The engine stops at start-up: no block at all (vLLM's "No available memory for the cache blocks").
void noCacheBlocks(ServingEstimate& e)
{
    e.startupFails = true;
    e.failure = "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
                "initializing the engine.";
}

/// The engine stops at start-up: V1's check_enough_kv_cache_memory, one request at max_model_len needs more cache
/// than there is.
void notOneRequest(ServingEstimate& e, Bytes needed, Bytes available)
{
    e.startupFails = true;
    e.failure = "To serve at least one request with the models's max seq len (" + std::to_string(e.maxModelLen) + "), ("
        + gib(needed) + " GiB KV cache is needed, which is larger than the available KV cache memory (" + gib(available)
        + " GiB). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
        + "initializing the engine.";
}

/// vLLM V1's KV cache of a hybrid model: attention and Mamba-2 layers share one pool of equal pages (PR #20840,
/// v0.10.0: vllm/model_executor/models/config.py HybridAttentionMambaModelConfig.verify_and_update_config; groups
/// and block counts in vllm/v1/core/kv_cache_utils.py). A request holds cdiv(max_model_len, block) blocks per
/// attention group, and per Mamba group one block with prefix caching off (mamba_cache_mode "none") or two with it
/// on for Gated DeltaNet ("align": the running state and the last block boundary's, vllm/config/cache.py).
void hybridCache(const ModelSpec& m, const Serving& s, Count tp, DType kv, long v, ServingEstimate& e, ServingRank& k)
{
    // PR #22928 (0.10.2) added --mamba-cache-dtype (the conv state; auto = --dtype) and --mamba-ssm-cache-dtype
    // (auto = the conv state's); before, both states took the KV cache's dtype (MambaSpec(dtype=kv_cache_dtype)).
    const bool own = v >= versionKey("0.10.2");
    if (!own && (s.mambaCacheDtype || s.mambaSsmCacheDtype))
        throw InputError(s.mambaSsmCacheDtype ? "run.serving.mamba_ssm_cache_dtype" : "run.serving.mamba_cache_dtype",
            "vLLM 0.10.2 or later (earlier versions keep the Mamba states in kv_cache_dtype)");
    const DType conv = own ? s.mambaCacheDtype.value_or(s.dtype) : kv;
    // With both on auto the scan's state takes the dtype the model's config names (Qwen3.5's mamba_ssm_dtype:
    // MambaStateDtypeCalculator), else the conv state's.
    const DType ssm = own ? s.mambaSsmCacheDtype.value_or(m.ssm.stateDtype.value_or(conv)) : kv;
    const SsmStateBytes state = ssmStateBytes(m, tp, conv, ssm);
    const Bytes mambaPage = state.total();
    const Count nA = m.attentionLayers(), nM = m.ssm.layers, L = e.maxModelLen;
    const Bytes attnToken = nA > 0 ? kvBytesPerToken(m, tp, 1, kv) : 0;
    // The attention block grows until its page holds a Mamba page, in steps of 16 tokens; the Mamba page is
    // padded to the attention page. A Mamba layer's "block" is one state of max_model_len tokens.
    Count block = L;
    Bytes page = mambaPage;
    if (nA > 0) {
        block = std::max<Count>(s.blockSize, 16 * ceilDiv(mambaPage, 16 * attnToken));
        page = std::max<Bytes>(mambaPage, checkedMul(block, attnToken));
        if (block > s.blockSize)
            e.logLines.push_back("Setting attention block size to " + std::to_string(block)
                + " tokens to ensure that attention page size is >= mamba page size.");
        if (page > mambaPage)
            e.logLines.push_back(fmt("Padding mamba page size by %.2f%% to ensure that mamba page size and attention "
                                     "page size are exactly equal.",
                100.0 * static_cast<double>(page - mambaPage) / static_cast<double>(mambaPage)));
    }
    // Layers of one kind split into groups of the smaller kind's count (the last one padded); each of the
    // group-size tensors holds one page per block for one layer of every group.
    const Count groupSize = nA > 0 ? std::min(nA, nM) : nM;
    const Count attnGroups = nA > 0 ? ceilDiv(nA, groupSize) : 0, mambaGroups = ceilDiv(nM, groupSize);
    // mamba_cache_mode "align": Gated DeltaNet from 0.17.0, every hybrid from 0.28.0 (vllmEstimate refuses the rest).
    const bool align = hybridPrefixCaching(s, v);
    const Count mambaBlocks = checkedMul(align ? 2 : 1, mambaGroups);
    const Count perRequest = checkedAdd(checkedMul(attnGroups, ceilDiv(L, block)), mambaBlocks);
    k.kvBytesPerToken = checkedMul(attnToken, nA);
    k.statePerSequenceBytes = checkedMul(mambaPage, nM);
    k.blocks = k.kvCacheBytes > 0 ? k.kvCacheBytes / page / groupSize : 0;
    e.gpuBlocks = k.blocks;
    e.blocksPerRequest = perRequest;
    e.maxConcurrency = static_cast<double>(k.blocks) / static_cast<double>(perRequest);
    // "GPU KV cache size": num_blocks // groups x the smallest block (max_model_len for a Mamba group without prefix
    // caching, the attention block in align mode) until 0.20; from 0.21 int(concurrency x max_model_len)
    // (get_kv_cache_capacity, PR #41069).
    e.kvCacheTokens = !kvSizeFromConcurrency(v)
        ? checkedMul(k.blocks / (attnGroups + mambaGroups), align ? block : std::min(block, L))
        : static_cast<Count>(e.maxConcurrency * static_cast<double>(L));
    k.stateBytes = static_cast<Bytes>(static_cast<double>(checkedMul(k.blocks, page, groupSize))
        * static_cast<double>(mambaBlocks) / static_cast<double>(perRequest));
    if (k.blocks > 0 && e.maxConcurrency < 1.0)
        notOneRequest(e, checkedMul(perRequest, page, groupSize), k.kvCacheBytes);
}

/// Whether vLLM gives the model's local layers their own KV cache spec, in the versions VRAM Lab models as V1
/// (0.9.2 and later) and unless --disable-hybrid-kv-cache-manager: sliding windows always (SlidingWindowSpec, PR
/// #14097; beside full layers through the hybrid KV cache manager of PR #17996, 0.9.1); Llama 4's chunks from 0.10.0
/// (ChunkedLocalAttentionSpec, PR #19351), except 0.10.1-0.13.x, where
/// VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE defaults to 0 (PR #21761; 1 from PR #29627, December 2025) and
/// disables the hybrid manager, so every layer is full attention.
bool localLayersOwnSpec(const ModelSpec& m, const Serving& s, long v)
{
    // --disable-hybrid-kv-cache-manager: unify_hybrid_kv_cache_specs turns the windows of a model that also has full
    // layers into FullAttentionSpec (a window in every layer is uniform and stays a window).
    if (m.slidingWindow <= 0 || m.localLayers() <= 0 || v < versionKey("0.9.2")
        || (s.disableHybridKvCacheManager && m.globalLayers() > 0))
        return false;
    if (!m.chunkedLocalAttention)
        return true;
    return v >= versionKey("0.10.0") && !(v >= versionKey("0.10.1") && v < versionKey("0.14.0"));
}

/// Blocks one request at max_model_len needs in a local layer's group (vllm/v1/kv_cache_interface.py
/// max_memory_usage_bytes): cdiv(min(W - 1 + X, L), block) + 1 with a sliding window, cdiv(min(C + X, L), block)
/// with chunks, where X is max_num_batched_tokens, or twice it from 0.26.0 with async scheduling on (PR #47728:
/// max_in_flight_tokens).
Count localBlocksPerRequest(const ModelSpec& m, const Serving& s, long v, ServingEstimate& e)
{
    if (v >= versionKey("0.25.0") && v < versionKey("0.26.0"))
        throw InputError("run.serving.engine_version",
            "a version other than 0.25.x for a model with sliding-window or chunked layers (whether 0.25 already "
            "counts two batches in flight for them, PR #47728, is not pinned)");
    const Count L = e.maxModelLen, bs = s.blockSize, T = e.maxNumBatchedTokens, W = m.slidingWindow;
    const bool twoInFlight = v >= versionKey("0.26.0") && s.asyncScheduling.value_or(true);
    const Count X = twoInFlight ? checkedMul(2, T) : T;
    if (v >= versionKey("0.26.0") && !s.asyncScheduling)
        e.warnings.push_back("vLLM " + e.engineVersion
            + " keeps twice max_num_batched_tokens in flight for the local layers (async scheduling, on by default; "
              "--no-async-scheduling halves it, run.serving.async_scheduling): assumed on");
    return m.chunkedLocalAttention ? ceilDiv(std::min(W + X, L), bs)
                                   : checkedAdd(ceilDiv(std::min(W - 1 + X, L), bs), 1);
}

/// vLLM V1's KV cache when local layers beside full ones have their own spec (vllm/v1/core/kv_cache_utils.py
/// get_kv_cache_config; facts: tests/data/published/serving/ACCOUNTING_FACTS.md). Layers are bucketed by spec, split
/// into groups of the smaller bucket's size (the last one padded); group_size tensors each hold one page per block
/// for one layer of every group, so num_blocks = available // page // group_size. One request at max_model_len needs
/// cdiv(L, block) blocks per full group and localBlocksPerRequest per local group.
void windowedCache(const ModelSpec& m, const Serving& s, Count tp, DType kv, long v, ServingEstimate& e, ServingRank& k)
{
    const Count L = e.maxModelLen, bs = s.blockSize;
    const Count nLocal = m.localLayers(), nGlobal = m.globalLayers();
    const Count localBlocks = localBlocksPerRequest(m, s, v, e);
    const Count fullBlocks = ceilDiv(L, bs);
    // Equal buckets, or buckets within 1.5x of each other, are grouped by newer heuristics (PR #29303 at 1.25x,
    // November 2025; PR #36684 at 1.5x, March 2026) in releases not pinned here: only distinct n:1 patterns are
    // modelled (every Nth layer global with N >= 3, or N = 2 with an even layer count).
    const Count lo = std::min(nGlobal, nLocal), hi = std::max(nGlobal, nLocal);
    if (lo != hi && 2 * hi < 3 * lo)
        throw InputError("model.global_layer_interval",
            "a pattern whose local and global layer counts are equal or differ by 1.5x or more (here "
                + std::to_string(nLocal) + " and " + std::to_string(nGlobal)
                + "): how vLLM groups counts closer than that changed in releases VRAM Lab has not pinned");
    const Count groupSize = lo;
    const Count localGroups = ceilDiv(nLocal, groupSize), globalGroups = ceilDiv(nGlobal, groupSize);
    const Count groups = localGroups + globalGroups;
    const Bytes page = checkedMul(bs, kvBytesPerToken(m, tp, 1, kv));
    const Count perRequest = checkedAdd(checkedMul(localGroups, localBlocks), checkedMul(globalGroups, fullBlocks));
    const char* kind = m.chunkedLocalAttention ? "chunked" : "sliding-window";
    e.rule += "; " + std::to_string(nLocal) + " " + kind + " layers and " + std::to_string(nGlobal)
        + " full ones cached in groups of " + std::to_string(groupSize) + " (" + std::to_string(groups)
        + " groups, blocks = KV // page // " + std::to_string(groupSize) + "); a request at max_model_len needs "
        + std::to_string(localBlocks) + " blocks per " + kind + " group and " + std::to_string(fullBlocks)
        + " per full group";
    k.kvBytesPerToken = kvBytesPerToken(m, tp, m.attentionLayers(), kv);
    k.blocks = k.kvCacheBytes > 0 ? k.kvCacheBytes / page / groupSize : 0;
    e.gpuBlocks = k.blocks;
    e.blocksPerRequest = perRequest;
    e.maxConcurrency = static_cast<double>(k.blocks) / static_cast<double>(perRequest);
    e.kvCacheTokens = kvSizeFromConcurrency(v) ? static_cast<Count>(e.maxConcurrency * static_cast<double>(L))
                                               : checkedMul(k.blocks / groups, bs);
    // check_enough_kv_cache_memory: every layer's max_memory_usage_bytes (no padding layers) must fit.
    const Bytes needed = checkedMul(checkedAdd(checkedMul(nLocal, localBlocks), checkedMul(nGlobal, fullBlocks)), page);
    if (k.blocks > 0 && needed > k.kvCacheBytes)
        notOneRequest(e, needed, k.kvCacheBytes);
}

} // namespace

void vllmEstimate(const ModelSpec& m, const RunSpec& r, ServingEstimate& e)
{
    const Serving& s = *r.serving;
    const long v = versionKey(e.engineVersion);
    const int rule = vllmRule(v);
    const bool v1 = rule >= 5;
    const Count tp = r.parallelism.tensorParallel, pp = r.parallelism.pipelineParallel;
    e.rule = ruleText(rule);
    e.maxModelLen = s.maxModelLen.value_or(m.maxPositionEmbeddings);
    if (e.maxModelLen <= 0)
        throw InputError("run.serving.max_model_len", "required: the model states no max_position_embeddings");
    // vllm/config.py _get_and_verify_max_len: a longer max_model_len than the model's is refused.
    if (m.maxPositionEmbeddings > 0 && e.maxModelLen > m.maxPositionEmbeddings)
        throw InputError("run.serving.max_model_len",
            "expected at most model.max_position_embeddings (" + std::to_string(m.maxPositionEmbeddings)
                + "), as vLLM requires; got " + std::to_string(e.maxModelLen));
    if (m.numHeads % tp != 0)
        throw InputError("run.parallelism.tensor_parallel",
            "expected a divisor of model.num_heads (" + std::to_string(m.numHeads) + "), as vLLM requires; got "
                + std::to_string(tp));
    // Defaults of the version: vllm/config.py SchedulerConfig (V0: max_num_seqs 256; without
    // chunked prefill max_num_batched_tokens = max(max_model_len, 2048); chunked: 512 before
    // 0.7, 2048 after); vllm/engine/arg_utils.py (V0 0.5.1+: chunked prefill switched on above
    // 32K context; V1: always chunked, the OpenAI server's 2048 tokens / 256 sequences, or
    // 8192 / 1024 on GPUs of 70 GiB and more other than A100).
    const bool bigGpu = e.totalGpuBytes >= 70 * kGiB && r.gpu->name.find("a100") == std::string::npos;
    const bool chunked = v1 || s.enableChunkedPrefill.value_or(v >= versionKey("0.5.1") && e.maxModelLen > 32768);
    e.maxNumSeqs = s.maxNumSeqs.value_or(v1 && bigGpu ? 1024 : 256);
    const Count chunk = v1 ? (bigGpu ? 8192 : 2048) : (v < versionKey("0.7.0") ? 512 : 2048);
    e.maxNumBatchedTokens = s.maxNumBatchedTokens.value_or(chunked ? chunk : std::max<Count>(e.maxModelLen, 2048));
    if (!chunked && e.maxNumBatchedTokens < e.maxModelLen)
        throw InputError("run.serving.max_num_batched_tokens",
            "expected at least max_model_len (" + std::to_string(e.maxModelLen)
                + ") without chunked prefill, as vLLM requires; got " + std::to_string(e.maxNumBatchedTokens));

    const DType kv = kvDtype(s);
    if (m.hybrid() && v < versionKey("0.10.0"))
        throw InputError("run.serving.engine_version",
            "0.10.0 or later for a hybrid state-space model (V1's hybrid KV cache, PR #20840); the V0 Mamba cache "
            "manager is not modelled");
    // Llama 4's and Qwen2.5-VL's towers are left out with every multimodal limit 0 from 0.10.1 (mllama4.py,
    // qwen2_5_vl.py, PR #22299; an unset modality defaults to 999, so Qwen2.5-VL needs video 0 too), which
    // --language-model-only (PR #34120, February 2026) sets.
    if (s.languageModelOnly && (m.vision.kind == VisionKind::Llama4 || m.vision.qwen25()) && v < versionKey("0.10.1"))
        throw InputError("run.serving.language_model_only",
            std::string("false before vLLM 0.10.1 (the tower is left out from 0.10.1 with --limit-mm-per-prompt ")
                + (m.vision.qwen25() ? "'{\"image\":0,\"video\":0}'" : "'{\"image\":0}'")
                + ", PR #22299; --language-model-only later sets the same)");
    if (m.vision.qwen() && v < versionKey("0.17.0"))
        throw InputError("run.serving.engine_version",
            "0.17.0 or later for a Qwen3.5 checkpoint (the earliest vLLM release VRAM Lab confirmed it in)");
    if (m.ssm.deltaNet() && v < versionKey("0.10.2"))
        throw InputError("run.serving.engine_version",
            "0.10.2 or later for a Gated DeltaNet model (the first vLLM with Qwen3-Next)");
    if (s.kvCacheMemoryBytes && v < versionKey("0.14.0"))
        throw InputError("run.serving.kv_cache_memory_bytes",
            "unset before vLLM 0.14.0 (the earliest version VRAM Lab confirmed the flag in; it replaces the "
            "gpu_memory_utilization budget)");
    if (hybridPrefixCaching(s, v) && m.ssm.enabled()) {
        // PR #30877 (mamba_cache_mode): prefix caching on keeps "all" states for Mamba-2 models that support it
        // (a state every mamba_block_size tokens, chunk-aligned blocks), "align" for the rest (Gated DeltaNet);
        // from 0.28.0 (PR #50991, "[Mamba] enable prefix cache by default") "align" for every hybrid.
        if (!m.ssm.deltaNet() && v < versionKey("0.28.0"))
            throw InputError("run.serving.enable_prefix_caching",
                "false for a Mamba-2 model (vLLM's mamba_cache_mode \"all\", a state every mamba_block_size tokens, "
                "is not modelled yet)");
        if (v < versionKey("0.17.0"))
            throw InputError("run.serving.enable_prefix_caching",
                "false before vLLM 0.17.0 for a Gated DeltaNet model (the mamba_cache_mode \"align\" of 0.17.0 and "
                "later is modelled; earlier versions' handling is not)");
    }
    if (s.disableHybridKvCacheManager && v < versionKey("0.9.2"))
        throw InputError("run.serving.disable_hybrid_kv_cache_manager",
            "false before vLLM 0.9.2 (the hybrid KV cache manager it turns off arrived in 0.9.1, PR #17996; VRAM Lab "
            "models V1 from 0.9.2)");
    if (s.disableHybridKvCacheManager && m.ssm.enabled())
        throw InputError("run.serving.disable_hybrid_kv_cache_manager",
            "false for a hybrid state-space model: without the hybrid manager vLLM cannot unify the Mamba and "
            "attention "
            "layers' specs and does not start (unify_hybrid_kv_cache_specs raises)");
    // Local layers beside full ones are cached in groups (windowedCache); a window in every layer is one uniform
    // group whose requests need the window's blocks only (below).
    const bool ownSpec = !m.ssm.enabled() && localLayersOwnSpec(m, s, v);
    const bool windowed = ownSpec && m.globalLayers() > 0, allLocal = ownSpec && m.globalLayers() == 0;
    if (windowed && pp > 1)
        throw InputError("run.parallelism.pipeline_parallel",
            "1 for a model whose sliding-window or chunked layers vLLM caches apart (each stage's own groups of "
            "them are not modelled)");
    // From 0.26.0 a window's request holds max_concurrent_batches x max_num_batched_tokens (PR #47728): 2 with async
    // scheduling and one stage; with pipeline stages the count is not pinned.
    if (allLocal && pp > 1 && v >= versionKey("0.26.0"))
        throw InputError("run.parallelism.pipeline_parallel",
            "1 from vLLM 0.26.0 for a model with a window in every layer (the batches in flight per stage, which set "
            "the window's blocks, are not pinned with pipeline stages)");
    if (isLlama4(m) && v < versionKey("0.8.3"))
        throw InputError("run.serving.engine_version", "0.8.3 or later for Llama 4 (PR #16104, its first release)");
    const Bytes budget = static_cast<Bytes>(gpuMemoryUtilizationOrDefault(s) * static_cast<double>(e.totalGpuBytes));
    // Memory outside torch's allocator: not derivable from the model (CUDA context, lazily loaded
    // kernels, NCCL); run.serving.non_torch_gib, default the scenario's CUDA context (+ NCCL buffers
    // with more than one GPU). Rule 1 does not see it at all.
    const Bytes nonTorchDefault
        = r.overheads.cudaContextBytes + (tp * pp > 1 ? r.overheads.commBufferBytes.value_or(256 * kMiB) : 0);
    const Bytes nonTorch = rule == 1 ? 0 : s.nonTorchBytes.value_or(nonTorchDefault);
    const Bytes graphs = rule == 6 && !s.enforceEager ? s.cudaGraphBytes.value_or(0) : 0;
    if (rule == 6 && !s.enforceEager && !s.cudaGraphBytes)
        e.warnings.push_back("vLLM " + e.engineVersion
            + " subtracts its CUDA-graph estimate, which depends on the captured sizes; "
              "set run.serving.cuda_graph_gib (0 assumed)");
    for (Count rank = 0; rank < pp; ++rank) {
        const Stage st = pipelineStage(m, rank, pp);
        ServingRank k;
        k.name = "pp rank " + std::to_string(rank) + " (layers " + std::to_string(st.first) + "-"
            + std::to_string(st.last - 1) + ")";
        k.layers = st.layers();
        k.budgetBytes = budget;
        k.weightsBytes = rankWeightsBytes(m, s, tp, st);
        k.activationPeakBytes = vllmActivationPeakBytes(m, s, tp, st, e.maxNumBatchedTokens, e.maxNumSeqs, v1);
        k.nonTorchBytes = nonTorch;
        k.cudaGraphBytes = graphs;
        // --kv-cache-memory-bytes: the cache takes exactly this on every rank and gpu_memory_utilization is ignored
        // (vllm/config/cache.py CacheConfig.kv_cache_memory_bytes); what the process then holds is the weights, the
        // profiling peak, non-torch memory, the graphs and this.
        k.kvCacheBytes
            = s.kvCacheMemoryBytes.value_or(budget - k.weightsBytes - k.activationPeakBytes - nonTorch - graphs);
        if (s.kvCacheMemoryBytes) {
            k.budgetBytes = k.weightsBytes + k.activationPeakBytes + nonTorch + graphs + k.kvCacheBytes;
            if (k.budgetBytes > e.totalGpuBytes)
                e.warnings.push_back("run.serving.kv_cache_memory_bytes: " + k.name + " would hold "
                    + gib(k.budgetBytes) + " GiB of the GPU's " + gib(e.totalGpuBytes)
                    + " GiB; vLLM does not check it at startup and runs out of memory when the cache fills");
        }
        if (m.ssm.enabled()) { // pipeline parallelism is refused for these (validateRun): one rank
            hybridCache(m, s, tp, kv, v, e, k);
            e.ranks.push_back(k);
            break;
        }
        if (windowed) { // pipeline parallelism is refused for these (above): one rank
            windowedCache(m, s, tp, kv, v, e, k);
            e.ranks.push_back(k);
            break;
        }
        // Blocks without attention (a hybrid model's MLP-only blocks) keep no KV; pipeline stages are whole
        // models for those (validateRun).
        k.kvBytesPerToken = kvBytesPerToken(m, tp, m.hybrid() ? m.attentionLayers() : st.layers(), kv);
        // V0 worker: int(available // cache_block_size); V1 kv_cache_utils: available // page_size // num_layers.
        const Bytes blockBytes = checkedMul(k.kvBytesPerToken, s.blockSize);
        k.blocks = k.kvCacheBytes > 0 ? k.kvCacheBytes / blockBytes : 0;
        if (rank == 0 && !v1)
            e.cpuBlocks = static_cast<Count>(s.swapSpaceGib * static_cast<double>(kGiB)) / blockBytes;
        e.ranks.push_back(k);
    }
    if (m.ssm.enabled() || windowed) { // one rank, its groups' accounting done above
        const ServingRank& k = e.ranks.front();
        e.kvCacheBytes = k.kvCacheBytes;
        if (k.blocks <= 0) {
            noCacheBlocks(e);
        } else if (m.ssm.enabled() && !e.startupFails && v >= versionKey("0.19.0") && !s.enforceEager
            && e.maxNumSeqs > k.blocks) {
            // PR #38270 (merged 2026-03-26, in 0.19.0; reported on 0.23.1, 0.25.1 and 0.28.0, vllm#49064): CUDA-graph
            // capture needs one Mamba block per decode sequence, and the engine refuses to start without them.
            e.startupFails = true;
            e.failure = "max_num_seqs (" + std::to_string(e.maxNumSeqs) + ") exceeds available Mamba cache blocks ("
                + std::to_string(k.blocks)
                + "). Each decode sequence requires one Mamba cache block, so CUDA graph capture cannot proceed. "
                  "Please lower max_num_seqs to at most "
                + std::to_string(k.blocks) + " or increase gpu_memory_utilization.";
        }
        if (m.ssm.enabled() && !s.mambaSsmCacheDtype && !m.ssm.stateDtype)
            e.warnings.push_back("run.serving.mamba_ssm_cache_dtype unset: the scan's state is taken in "
                + std::string(v >= versionKey("0.10.2") ? "the conv state's dtype" : "kv_cache_dtype")
                + "; vLLM reads some models' config.json for it (Nemotron-H since Dec 2025, fp32 for Qwen3.5): set "
                  "it to what the log's model uses");
        logLines(e, rule, s);
        return;
    }
    // The executor takes the minimum over workers (vllm/executor/executor_base.py; V1 kv_cache_utils).
    for (std::size_t i = 1; i < e.ranks.size(); ++i)
        if (e.ranks[i].blocks < e.ranks[e.limitingRank].blocks)
            e.limitingRank = i;
    const ServingRank& k = e.limiting();
    e.gpuBlocks = k.blocks;
    e.kvCacheTokens = checkedMul(k.blocks, s.blockSize);
    e.kvCacheBytes = k.kvCacheBytes;
    e.maxConcurrency = static_cast<double>(e.kvCacheTokens) / static_cast<double>(e.maxModelLen);
    // V1 (get_max_concurrency_for_kv_cache_config) counts whole blocks per request: cdiv(max_model_len, block), or the
    // window's blocks with SlidingWindowSpec in every layer (Mistral 7B v0.1).
    const Count perRequest = allLocal ? localBlocksPerRequest(m, s, v, e) : ceilDiv(e.maxModelLen, s.blockSize);
    if (v1) {
        if (allLocal)
            e.blocksPerRequest = perRequest;
        e.maxConcurrency = static_cast<double>(k.blocks) / static_cast<double>(perRequest);
        if (kvSizeFromConcurrency(v))
            e.kvCacheTokens = static_cast<Count>(e.maxConcurrency * static_cast<double>(e.maxModelLen));
    }
    if (k.blocks <= 0) {
        noCacheBlocks(e);
    } else if (allLocal && k.blocks < perRequest) {
        notOneRequest(e, checkedMul(perRequest, k.kvBytesPerToken, s.blockSize), k.kvCacheBytes);
    } else if (!allLocal && e.kvCacheTokens < e.maxModelLen) {
        e.startupFails = true;
        e.failure = "The model's max seq len (" + std::to_string(e.maxModelLen)
            + ") is larger than the maximum number of tokens that can be stored in KV cache ("
            + std::to_string(e.kvCacheTokens)
            + "). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.";
    }
    logLines(e, rule, s);
}

} // namespace vramlab::detail

namespace vramlab {

double gpuMemoryUtilizationOrDefault(const Serving& s)
{
    if (s.gpuMemoryUtilization)
        return *s.gpuMemoryUtilization;
    return s.engine == ServingEngine::Vllm && detail::versionKey(s.engineVersion) >= detail::versionKey("0.20.0") ? 0.92
                                                                                                                  : 0.9;
}

} // namespace vramlab
