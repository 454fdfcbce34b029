// SPDX-License-Identifier: MIT
#include "vramlab/serving_io.h"

#include "json_reader.h"
#include "vramlab/errors.h"

#include <algorithm>
#include <set>

namespace vramlab {

using detail::JsonObjectReader;
using nlohmann::json;

namespace {

const std::vector<std::pair<std::string, ServingEngine>> kEngines
    = { { "vllm", ServingEngine::Vllm }, { "sglang", ServingEngine::Sglang }, { "llama.cpp", ServingEngine::LlamaCpp },
          { "hf-generate", ServingEngine::HfGenerate } };
// --dtype of vLLM/SGLang ("auto" needs the checkpoint's torch_dtype, which a scenario does not carry).
const std::vector<std::pair<std::string, DType>> kDtype
    = { { "bfloat16", DType::Bf16 }, { "bf16", DType::Bf16 }, { "float16", DType::Fp16 }, { "half", DType::Fp16 },
          { "fp16", DType::Fp16 }, { "float32", DType::Fp32 }, { "fp32", DType::Fp32 } };
// --kv-cache-dtype: "auto" follows --dtype; the fp8 formats take one byte.
const std::vector<std::pair<std::string, std::optional<DType>>> kKvDtype
    = { { "auto", std::nullopt }, { "fp8", DType::Fp8 }, { "fp8_e4m3", DType::Fp8 }, { "fp8_e5m2", DType::Fp8 },
          { "bfloat16", DType::Bf16 }, { "float16", DType::Fp16 } };
const std::vector<std::pair<std::string, QuantKind>> kQuant = { { "none", QuantKind::None }, { "awq", QuantKind::Awq },
    { "gptq", QuantKind::Gptq }, { "marlin", QuantKind::Marlin }, { "fp8", QuantKind::Fp8 },
    { "fp8-block", QuantKind::Fp8Block }, { "bnb-nf4", QuantKind::BnbNf4 }, { "bnb-int8", QuantKind::BnbInt8 } };

// Which engine each flag belongs to (a flag of another engine is refused, not ignored).
const std::set<std::string> kVllmKeys
    = { "gpu_memory_utilization", "max_model_len", "max_num_batched_tokens", "block_size", "enforce_eager",
          "enable_chunked_prefill", "enable_prefix_caching", "swap_space", "cuda_graph_gib", "mamba_cache_dtype",
          "kv_cache_memory_bytes", "language_model_only", "async_scheduling", "disable_hybrid_kv_cache_manager" };
const std::set<std::string> kSglangKeys = { "mem_fraction_static", "context_length", "multimodal",
    "disable_radix_cache", "max_mamba_cache_size", "mamba_full_memory_ratio" };
const std::set<std::string> kLlamaKeys = { "n_ctx", "n_gpu_layers", "n_batch", "n_ubatch", "type_k", "type_v",
    "flash_attn", "tensor_split", "compute_buffer_mib", "swa_full" };
const std::set<std::string> kCommonKeys = { "engine", "engine_version", "dtype", "quantization", "group_size",
    "weight_block_size", "kv_cache_dtype", "max_num_seqs", "non_torch_gib", "mamba_ssm_cache_dtype" };
// --mamba-cache-dtype / --mamba-ssm-cache-dtype (vLLM vllm/config/cache.py MambaDType), --mamba-ssm-dtype (SGLang).
const std::vector<std::pair<std::string, std::optional<DType>>> kMambaDtype
    = { { "auto", std::nullopt }, { "float32", DType::Fp32 }, { "float16", DType::Fp16 }, { "bfloat16", DType::Bf16 } };

template <typename T> std::string nameOf(const std::vector<std::pair<std::string, T>>& table, const T& value)
{
    for (const auto& [name, v] : table)
        if (v == value)
            return name;
    return "?";
}

std::string engineOfKey(const std::string& key)
{
    if (kVllmKeys.count(key))
        return "vllm";
    if (kSglangKeys.count(key))
        return "sglang";
    if (kLlamaKeys.count(key))
        return "llama.cpp";
    return {};
}

} // namespace

std::optional<DType> mambaDtypeNamed(const std::string& name)
{
    for (const auto& [n, d] : kMambaDtype)
        if (n == name)
            return d; // "auto" is nullopt
    return std::nullopt;
}

bool isServingFlag(const std::string& flag, ServingEngine engine)
{
    const std::string owner = engineOfKey(flag);
    return owner.empty() ? kCommonKeys.count(flag) > 0 : owner == toString(engine);
}

namespace {

/// Refuses unknown keys and keys of another engine, naming them.
void checkKeys(const json& obj, ServingEngine engine)
{
    const std::string name(toString(engine));
    for (auto it = obj.begin(); it != obj.end(); ++it) {
        const std::string& key = it.key();
        const std::string owner = engineOfKey(key);
        if (owner.empty() && !kCommonKeys.count(key))
            throw InputError("run.serving." + key, "unknown key; expected one of the engines' flags (README, Serving)");
        const bool hfLen = engine == ServingEngine::HfGenerate && key == "max_model_len";
        if (!owner.empty() && owner != name && !hfLen)
            throw InputError("run.serving." + key, "a " + owner + " flag; run.serving.engine is \"" + name + "\"");
    }
}

template <typename Field, typename Value> void set(Field& field, const std::optional<Value>& v)
{
    if (v)
        field = *v;
}

std::optional<Bytes> gibBytes(const std::optional<double>& gib)
{
    if (!gib)
        return std::nullopt;
    return static_cast<Bytes>(*gib * static_cast<double>(kGiB));
}

/// A share of the GPU: above 0, at most 1 (or below 1 with `hiOpen`).
std::optional<double> fraction(JsonObjectReader& r, const std::string& key, bool hiOpen)
{
    const std::optional<double> v = r.number(key, 0.0, 1.0, hiOpen);
    if (v && *v <= 0)
        throw InputError(r.keyPath(key),
            std::string("expected a number above 0 and ") + (hiOpen ? "below 1" : "at most 1") + ", got 0");
    return v;
}

WeightQuant readQuantization(JsonObjectReader& r, ServingEngine engine)
{
    WeightQuant q;
    if (engine == ServingEngine::LlamaCpp) {
        // GGUF file types: the plain ggml types and the _M mixes of llama-quant.cpp reproduced here.
        q.kind = QuantKind::Gguf;
        q.ggufFileType = r.string("quantization").value_or("F16");
        if (!knownGgufFileType(q.ggufFileType))
            throw InputError("run.serving.quantization",
                "expected a GGUF type (F16, BF16, Q8_0, Q6_K, Q5_K, Q4_K, Q4_0, Q3_K, Q2_K, IQ4_XS, "
                "IQ4_NL, IQ3_S, IQ2_XS, ... or the mixes Q4_K_M, Q5_K_M), got \""
                    + q.ggufFileType + "\"");
        return q;
    }
    if (auto k = r.choice("quantization", kQuant))
        q.kind = *k;
    if (auto g = r.integer("group_size", -1, 1 << 20)) {
        if (*g == 0 || (*g > 0 && *g % 8 != 0))
            throw InputError("run.serving.group_size",
                "expected -1 (one group per column) or a positive multiple of 8, got " + std::to_string(*g));
        q.groupSize = *g;
    }
    if (auto b = r.integer("weight_block_size", 1, 1 << 20))
        q.fp8Block = *b;
    return q;
}

} // namespace

std::string defaultEngineVersion(ServingEngine engine)
{
    switch (engine) {
    case ServingEngine::Vllm:
        return "0.10.0"; // V1, rule 5 (serving-engines.md)
    case ServingEngine::Sglang:
        return "0.4.9";
    case ServingEngine::LlamaCpp:
        return "b4500";
    case ServingEngine::HfGenerate:
        return "any";
    }
    return {};
}

void checkServingMode(const json& run, const RunSpec& read)
{
    const bool servingMode = run.contains("mode") && run.at("mode") == "serving";
    if (servingMode && !read.serving)
        throw InputError("run.serving", "required with run.mode \"serving\": at least {\"engine\": \"vllm\"}");
    if (!servingMode && read.serving)
        throw InputError("run.serving", "only with run.mode \"serving\" (run.mode is not \"serving\")");
}

void readServing(const json& value, RunSpec& out)
{
    JsonObjectReader r(value, "run.serving");
    Serving s;
    const std::optional<ServingEngine> engine = r.choice("engine", kEngines);
    if (!engine)
        throw InputError("run.serving.engine", "required: vllm, sglang, llama.cpp or hf-generate");
    s.engine = *engine;
    checkKeys(value, s.engine);
    s.engineVersion = r.string("engine_version").value_or(defaultEngineVersion(s.engine));
    if (s.engine != ServingEngine::LlamaCpp && s.engine != ServingEngine::HfGenerate
        && (s.engineVersion.empty() || !std::isdigit(static_cast<unsigned char>(s.engineVersion[0]))))
        throw InputError(
            "run.serving.engine_version", "expected a version such as \"0.6.4\", got \"" + s.engineVersion + "\"");
    set(s.dtype, r.choice("dtype", kDtype));
    s.quantization = readQuantization(r, s.engine);
    set(s.kvCacheDtype, r.choice("kv_cache_dtype", kKvDtype));
    set(s.maxNumSeqs, r.integer("max_num_seqs", 1, 1'000'000));
    set(s.mambaSsmCacheDtype, r.choice("mamba_ssm_cache_dtype", kMambaDtype));
    set(s.mambaCacheDtype, r.choice("mamba_cache_dtype", kMambaDtype));
    set(s.disableRadixCache, r.boolean("disable_radix_cache"));
    set(s.maxMambaCacheSize, r.integer("max_mamba_cache_size", 1, 100'000'000));
    if (auto v = r.number("mamba_full_memory_ratio", 0, 1e6)) {
        if (*v <= 0)
            throw InputError("run.serving.mamba_full_memory_ratio", "expected a number above 0, got 0");
        s.mambaFullMemoryRatio = *v;
    }
    set(s.nonTorchBytes, gibBytes(r.number("non_torch_gib", 0, 1e6)));
    // vLLM (vllm/config.py CacheConfig / SchedulerConfig defaults; chosen per version in serving_vllm.cpp).
    set(s.gpuMemoryUtilization, fraction(r, "gpu_memory_utilization", false));
    set(s.maxModelLen, r.integer("max_model_len", 1, 100'000'000));
    set(s.maxNumBatchedTokens, r.integer("max_num_batched_tokens", 1, 100'000'000));
    set(s.blockSize, r.integer("block_size", 1, 1'000'000));
    set(s.enforceEager, r.boolean("enforce_eager"));
    set(s.enableChunkedPrefill, r.boolean("enable_chunked_prefill"));
    set(s.enablePrefixCaching, r.boolean("enable_prefix_caching"));
    set(s.swapSpaceGib, r.number("swap_space", 0, 1e6));
    set(s.cudaGraphBytes, gibBytes(r.number("cuda_graph_gib", 0, 1e6)));
    set(s.kvCacheMemoryBytes, r.integer("kv_cache_memory_bytes", 1, Count(1) << 50));
    set(s.languageModelOnly, r.boolean("language_model_only"));
    set(s.asyncScheduling, r.boolean("async_scheduling"));
    set(s.disableHybridKvCacheManager, r.boolean("disable_hybrid_kv_cache_manager"));
    // SGLang (python/sglang/srt/server_args.py).
    set(s.memFractionStatic, fraction(r, "mem_fraction_static", true));
    set(s.contextLength, r.integer("context_length", 1, 100'000'000));
    set(s.multimodal, r.boolean("multimodal"));
    // llama.cpp (common/common.h defaults: n_ctx 4096, n_batch 2048, n_ubatch 512, f16 cache, no flash attention).
    set(s.nCtx, r.integer("n_ctx", 1, 100'000'000));
    if (auto v = r.integer("n_gpu_layers", -1, 100'000))
        s.nGpuLayers = *v < 0 ? 100'000 : *v; // -1: every layer, as llama.cpp's 999
    set(s.nBatch, r.integer("n_batch", 1, 100'000'000));
    set(s.nUbatch, r.integer("n_ubatch", 1, 100'000'000));
    const std::vector<std::pair<std::string, GgmlType>> cacheTypes
        = { { "f32", GgmlType::F32 }, { "f16", GgmlType::F16 }, { "bf16", GgmlType::Bf16 }, { "q8_0", GgmlType::Q8_0 },
              { "q4_0", GgmlType::Q4_0 }, { "q4_1", GgmlType::Q4_1 }, { "iq4_nl", GgmlType::IQ4_NL },
              { "q5_0", GgmlType::Q5_0 }, { "q5_1", GgmlType::Q5_1 } };
    set(s.typeK, r.choice("type_k", cacheTypes));
    set(s.typeV, r.choice("type_v", cacheTypes));
    set(s.flashAttn, r.boolean("flash_attn"));
    set(s.swaFull, r.boolean("swa_full"));
    if (r.has("tensor_split")) {
        const json& a = r.at("tensor_split");
        if (!a.is_array() || a.empty() || a.size() > 64)
            throw InputError("run.serving.tensor_split",
                "expected an array of 1 to 64 proportions, got " + JsonObjectReader::describe(a));
        for (std::size_t i = 0; i < a.size(); ++i) {
            if (!a[i].is_number() || a[i].get<double>() < 0 || !std::isfinite(a[i].get<double>()))
                throw InputError("run.serving.tensor_split[" + std::to_string(i) + "]",
                    "expected a proportion (a number from 0), got " + JsonObjectReader::describe(a[i]));
            s.tensorSplit.push_back(a[i].get<double>());
        }
        if (*std::max_element(s.tensorSplit.begin(), s.tensorSplit.end()) <= 0)
            throw InputError("run.serving.tensor_split", "expected at least one proportion above 0");
    }
    if (auto v = r.number("compute_buffer_mib", 0, 1e9))
        s.computeBufferBytes = static_cast<Bytes>(*v * static_cast<double>(kMiB));
    out.serving = s;
}

json servingJson(const RunSpec& run)
{
    if (!run.serving)
        return json();
    const Serving& s = *run.serving;
    json j = { { "engine", std::string(toString(s.engine)) }, { "engine_version", s.engineVersion },
        { "dtype", nameOf(kDtype, s.dtype) }, { "quantization", quantizationName(s.quantization) } };
    if (s.quantization.kind == QuantKind::Awq || s.quantization.kind == QuantKind::Gptq
        || s.quantization.kind == QuantKind::Marlin)
        j["group_size"] = s.quantization.groupSize;
    if (s.quantization.kind == QuantKind::Fp8Block)
        j["weight_block_size"] = s.quantization.fp8Block;
    if (s.maxNumSeqs)
        j["max_num_seqs"] = *s.maxNumSeqs;
    if (s.nonTorchBytes)
        j["non_torch_gib"] = static_cast<double>(*s.nonTorchBytes) / static_cast<double>(kGiB);
    if (s.engine != ServingEngine::LlamaCpp)
        j["kv_cache_dtype"] = nameOf(kKvDtype, s.kvCacheDtype);
    if (s.mambaSsmCacheDtype)
        j["mamba_ssm_cache_dtype"] = nameOf(kMambaDtype, s.mambaSsmCacheDtype);
    if (s.mambaCacheDtype)
        j["mamba_cache_dtype"] = nameOf(kMambaDtype, s.mambaCacheDtype);
    if (s.disableRadixCache)
        j["disable_radix_cache"] = true;
    if (s.maxMambaCacheSize)
        j["max_mamba_cache_size"] = *s.maxMambaCacheSize;
    if (s.mambaFullMemoryRatio)
        j["mamba_full_memory_ratio"] = *s.mambaFullMemoryRatio;
    if (s.engine == ServingEngine::Vllm) {
        if (s.gpuMemoryUtilization)
            j["gpu_memory_utilization"] = *s.gpuMemoryUtilization;
        j["block_size"] = s.blockSize;
        j["enforce_eager"] = s.enforceEager;
        j["swap_space"] = s.swapSpaceGib;
        if (s.enableChunkedPrefill)
            j["enable_chunked_prefill"] = *s.enableChunkedPrefill;
        if (s.enablePrefixCaching)
            j["enable_prefix_caching"] = *s.enablePrefixCaching;
        if (s.maxNumBatchedTokens)
            j["max_num_batched_tokens"] = *s.maxNumBatchedTokens;
        if (s.cudaGraphBytes)
            j["cuda_graph_gib"] = static_cast<double>(*s.cudaGraphBytes) / static_cast<double>(kGiB);
        if (s.kvCacheMemoryBytes)
            j["kv_cache_memory_bytes"] = *s.kvCacheMemoryBytes;
        if (s.languageModelOnly)
            j["language_model_only"] = true;
        if (s.asyncScheduling)
            j["async_scheduling"] = *s.asyncScheduling;
        if (s.disableHybridKvCacheManager)
            j["disable_hybrid_kv_cache_manager"] = true;
    }
    if ((s.engine == ServingEngine::Vllm || s.engine == ServingEngine::HfGenerate) && s.maxModelLen)
        j["max_model_len"] = *s.maxModelLen;
    if (s.engine == ServingEngine::Sglang) {
        if (s.memFractionStatic)
            j["mem_fraction_static"] = *s.memFractionStatic;
        if (s.contextLength)
            j["context_length"] = *s.contextLength;
        if (s.multimodal)
            j["multimodal"] = true;
    }
    if (s.engine == ServingEngine::LlamaCpp) {
        j["n_ctx"] = s.nCtx;
        j["n_gpu_layers"] = s.nGpuLayers >= 100'000 ? Count(-1) : s.nGpuLayers;
        j["n_batch"] = s.nBatch;
        j["n_ubatch"] = s.nUbatch;
        j["type_k"] = std::string(ggmlTypeInfo(s.typeK).name);
        j["type_v"] = std::string(ggmlTypeInfo(s.typeV).name);
        j["flash_attn"] = s.flashAttn;
        if (s.swaFull)
            j["swa_full"] = true;
        if (!s.tensorSplit.empty())
            j["tensor_split"] = s.tensorSplit;
        if (s.computeBufferBytes)
            j["compute_buffer_mib"] = static_cast<double>(*s.computeBufferBytes) / static_cast<double>(kMiB);
    }
    return j;
}

} // namespace vramlab
