// SPDX-License-Identifier: MIT
#include "vramlab/serving_model.h"

#include "serving_detail.h"
#include "vramlab/errors.h"
#include "vramlab/estimator.h"

namespace vramlab {

std::string_view toString(ServingEngine e)
{
    switch (e) {
    case ServingEngine::Vllm:
        return "vllm";
    case ServingEngine::Sglang:
        return "sglang";
    case ServingEngine::LlamaCpp:
        return "llama.cpp";
    case ServingEngine::HfGenerate:
        return "hf-generate";
    }
    return "?";
}

namespace {

/// Today's inference model (one process running HF generate()): weights, KV cache and one
/// layer's prefill for max_num_seqs sequences of max_model_len tokens, nothing reserved.
void hfGenerateEstimate(const ModelSpec& m, const RunSpec& r, ServingEstimate& e)
{
    const Serving& s = *r.serving;
    RunSpec run = r;
    run.serving.reset();
    e.maxModelLen = s.maxModelLen.value_or(r.inference.contextLength);
    e.maxNumSeqs = s.maxNumSeqs.value_or(r.inference.batchSize);
    run.inference.contextLength = e.maxModelLen;
    run.inference.batchSize = e.maxNumSeqs;
    run.inference.kvCacheDtype = detail::kvDtype(s);
    run.inference.weightDtype = s.dtype;
    const Report rep = estimate(m, run);
    e.rule = "hf-generate: weights + KV cache of max_num_seqs x max_model_len tokens + one layer's prefill, grown on "
             "demand (no reservation)";
    ServingRank k;
    k.name = "rank 0";
    k.layers = m.numLayers;
    k.budgetBytes = e.totalGpuBytes;
    k.weightsBytes = rep.bytesOf("weights");
    k.activationPeakBytes = rep.bytesOf("activations");
    k.nonTorchBytes = rep.bytesOf("overhead");
    k.kvCacheBytes = rep.bytesOf("kv_cache");
    e.ranks.push_back(k);
    e.kvCacheBytes = k.kvCacheBytes;
    e.kvCacheTokens = checkedMul(e.maxModelLen, e.maxNumSeqs);
    e.maxConcurrency = static_cast<double>(e.maxNumSeqs);
    e.startupFails = rep.hasVerdict && !rep.fits;
    if (e.startupFails)
        e.failure = "CUDA out of memory: " + formatBytes(rep.peak) + " needed";
}

} // namespace

ServingEstimate servingEstimate(const ModelSpec& m, const RunSpec& r)
{
    if (!r.serving)
        throw InputError("run.mode", "expected \"serving\" with a run.serving object for a serving estimate");
    validateRun(m, r); // heads and KV heads, parallel sizes against the model, as for any estimate
    const Serving& s = *r.serving;
    ServingEstimate e;
    e.engine = s.engine;
    e.engineVersion = s.engineVersion;
    e.stateKind = m.ssm.label();
    if (!r.gpu && !(s.engine == ServingEngine::LlamaCpp && s.nGpuLayers == 0))
        throw InputError("run.gpu", "required for serving: the engine budgets the GPU's memory");
    e.totalGpuBytes = r.gpu ? r.gpu->memoryBytes : 0;
    switch (s.engine) {
    case ServingEngine::Vllm:
        detail::vllmEstimate(m, r, e);
        e.replicas = r.parallelism.dataParallel();
        break;
    case ServingEngine::Sglang:
        detail::sglangEstimate(m, r, e);
        e.replicas = r.parallelism.dataParallel();
        break;
    case ServingEngine::LlamaCpp:
        detail::llamaCppEstimate(m, r, e);
        break;
    case ServingEngine::HfGenerate:
        hfGenerateEstimate(m, r, e);
        break;
    }
    return e;
}

} // namespace vramlab
