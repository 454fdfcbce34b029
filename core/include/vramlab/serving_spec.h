// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/dtype.h"
#include "vramlab/quantized_weights.h"
#include "vramlab/units.h"

#include <optional>
#include <string>
#include <vector>

namespace vramlab {

/// The serving engine whose memory accounting is reproduced (serving_model.h).
enum class ServingEngine { Vllm, Sglang, LlamaCpp, HfGenerate };

/// run.serving: the engine's own flags (names as on its command line) plus the few
/// quantities no flag states and no source determines, as explicit inputs with defaults.
/// Unset optionals take the engine's default at `engineVersion` (serving_io.cpp cites each).
struct Serving {
    ServingEngine engine = ServingEngine::Vllm;
    std::string engineVersion; ///< "0.6.4"; empty: the engine's default version
    DType dtype = DType::Bf16; ///< --dtype: weights and activations of unquantized tensors
    WeightQuant quantization; ///< --quantization (vLLM/SGLang) or the GGUF file type (llama.cpp)

    // vLLM
    /// --gpu-memory-utilization; unset: the version's default, gpuMemoryUtilizationOrDefault().
    std::optional<double> gpuMemoryUtilization;
    std::optional<Count> maxModelLen; ///< default: model.max_position_embeddings
    std::optional<Count> maxNumSeqs;
    std::optional<Count> maxNumBatchedTokens;
    Count blockSize = 16;
    std::optional<DType> kvCacheDtype; ///< unset: "auto" = dtype
    bool enforceEager = false;
    std::optional<bool> enableChunkedPrefill;
    /// --enable-prefix-caching; unset: the version's default (off for hybrid models). It changes memory only for
    /// hybrid models, whose recurrent layers then keep more than one state per request (mamba_cache_mode).
    std::optional<bool> enablePrefixCaching;
    double swapSpaceGib = 4; ///< V0 CPU blocks
    std::optional<Bytes> kvCacheMemoryBytes; ///< --kv-cache-memory-bytes: the KV cache's size, gmu ignored
    bool languageModelOnly = false; ///< --language-model-only: a vision-language checkpoint without its tower
    /// --async-scheduling / --no-async-scheduling; unset: on from 0.26.0, where the local layers then hold twice
    /// max_num_batched_tokens in flight (PR #47728). It changes memory only there.
    std::optional<bool> asyncScheduling;
    /// --disable-hybrid-kv-cache-manager: sliding-window and chunked layers are cached as full attention.
    bool disableHybridKvCacheManager = false;
    /// vLLM builds the model without its vision tower (the flag is vLLM's).
    bool dropsVisionTower() const { return engine == ServingEngine::Vllm && languageModelOnly; }

    // Hybrid state-space models (vLLM --mamba-cache-dtype / --mamba-ssm-cache-dtype, SGLang --mamba-ssm-dtype)
    std::optional<DType> mambaCacheDtype; ///< vLLM: the conv state; unset: "auto" = dtype
    std::optional<DType> mambaSsmCacheDtype; ///< the scan's state; unset: the engine's default at its version

    // SGLang
    std::optional<double> memFractionStatic;
    bool disableRadixCache = false; ///< --disable-radix-cache: a Mamba pool of max_running_requests states
    std::optional<Count> maxMambaCacheSize; ///< --max-mamba-cache-size: Mamba states held
    std::optional<double> mambaFullMemoryRatio; ///< --mamba-full-memory-ratio: Mamba pool : KV pool
    std::optional<Count> contextLength; ///< --context-length (SGLang)
    /// SGLang runs the model as multimodal (and lowers mem_fraction_static): without model.vision, the checkpoint has
    /// a tower VRAM Lab does not model; with Gemma 3's or Llama 4's from v0.4.6, --enable-multimodal.
    bool multimodal = false;

    // llama.cpp
    Count nCtx = 4096;
    Count nGpuLayers = 0; ///< llama.cpp's default keeps every layer on the CPU
    Count nBatch = 2048;
    Count nUbatch = 512;
    GgmlType typeK = GgmlType::F16;
    GgmlType typeV = GgmlType::F16;
    bool flashAttn = false;
    bool swaFull = false; ///< --swa-full: sliding-window layers keep the whole context
    std::vector<double> tensorSplit; ///< --tensor-split proportions; empty: one GPU

    // Inputs no flag states (documented defaults in serving_io.cpp)
    std::optional<Bytes> nonTorchBytes; ///< memory outside torch's allocator the rule counts
    std::optional<Bytes> cudaGraphBytes; ///< CUDA-graph pool, for the rules that subtract it
    std::optional<Bytes> computeBufferBytes; ///< llama.cpp compute buffer per GPU (not modelled)
};

/// vLLM's --gpu-memory-utilization as the run sets it, or its default at the run's version: 0.9, and 0.92 from 0.20.0
/// (PR #38284 turned CUDA-graph memory profiling on and raised the default to make up for it; the official v0.20.0
/// image logs 0.9 as a non-default argument, vllm/config/cache.py: Field(default=0.92)).
double gpuMemoryUtilizationOrDefault(const Serving& s);

std::string_view toString(ServingEngine e);

} // namespace vramlab
