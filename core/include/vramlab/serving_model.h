// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/model_spec.h"
#include "vramlab/run_spec.h"

#include <optional>
#include <string>
#include <vector>

namespace vramlab {

/// One GPU process of a vLLM/SGLang deployment (a tensor-parallel rank of a pipeline stage).
struct ServingRank {
    std::string name; ///< "pp rank 0 (layers 0-31)"
    Count layers = 0; ///< transformer layers held
    Bytes budgetBytes = 0; ///< what the rule lets the engine use
    Bytes weightsBytes = 0; ///< weights as loaded, quantization constants included
    Bytes activationPeakBytes = 0; ///< profiling forward's peak above the weights
    Bytes nonTorchBytes = 0; ///< memory outside torch's allocator the rule counts
    Bytes cudaGraphBytes = 0; ///< subtracted only by the rules that do
    Bytes kvCacheBytes = 0; ///< what is left for the cache (negative: startup fails)
    Bytes kvBytesPerToken = 0; ///< all layers of this rank
    Bytes stateBytes = 0; ///< of kvCacheBytes: the Mamba-2 states of hybrid models (vLLM: their share of the
                          ///< shared pool with every request at max_model_len; SGLang: its Mamba pool)
    Bytes statePerSequenceBytes = 0; ///< one sequence's Mamba-2 states, every layer of this rank
    Count blocks = 0; ///< blocks (vLLM) or token slots (SGLang) this rank can hold
};

/// One device of a llama.cpp context ("CUDA0", "CPU").
struct LlamaCppDevice {
    std::string name;
    Count layers = 0;
    Bytes weightsBytes = 0;
    Bytes kvBufferBytes = 0;
    std::optional<Bytes> computeBufferBytes; ///< only when given (run.serving.compute_buffer_mib)
};

/// What the engine prints at startup and what it means, for one serving scenario.
struct ServingEstimate {
    ServingEngine engine = ServingEngine::Vllm;
    std::string engineVersion;
    std::string rule; ///< which accounting rule of the engine, with its source
    Bytes totalGpuBytes = 0; ///< per GPU, as the engine reads it (torch mem_get_info total)
    Count maxModelLen = 0;
    Count maxNumSeqs = 0;
    Count maxNumBatchedTokens = 0;
    /// Data-parallel replicas (vLLM --data-parallel-size, SGLang --dp-size): run.parallelism.gpus /
    /// (tensor x pipeline). Each replica keeps the same memory; everything else here is one replica's.
    Count replicas = 1;
    std::string stateKind = "Mamba-2"; ///< a hybrid model's recurrent mixer, as its states are named ("Gated DeltaNet")
    std::vector<ServingRank> ranks; ///< vLLM/SGLang: every pipeline stage's rank 0
    std::size_t limitingRank = 0; ///< the rank with the fewest blocks (the engine takes the minimum)
    std::optional<Count> gpuBlocks; ///< vLLM: engine-wide blocks; none for SGLang/llama.cpp
    /// vLLM: blocks one request at max_model_len takes from them, where not cdiv(max_model_len, block_size): a model
    /// whose local layers vLLM caches apart (a block of a hybrid pool spans one layer of each group)
    std::optional<Count> blocksPerRequest;
    Count cpuBlocks = 0; ///< vLLM V0: swap_space // block bytes
    Count kvCacheTokens = 0;
    double maxConcurrency = 0; ///< kv_cache_tokens / max_model_len
    Bytes kvCacheBytes = 0; ///< limiting rank's cache (llama.cpp: all devices)
    bool startupFails = false;
    std::string failure; ///< the engine's error message
    // llama.cpp
    Count nCtxPadded = 0;
    std::vector<LlamaCppDevice> devices;
    Bytes kBytes = 0, vBytes = 0; ///< whole K and V caches
    Bytes outputBufferBytes = 0;
    std::vector<std::string> logLines; ///< the engine's startup lines as it would print them
    std::vector<std::string> warnings;
    const ServingRank& limiting() const { return ranks.at(limitingRank); }
};

/// Reproduces the engine's memory accounting for `run.serving` (throws InputError naming
/// the key when the combination cannot be modelled).
ServingEstimate servingEstimate(const ModelSpec& model, const RunSpec& run);

} // namespace vramlab
