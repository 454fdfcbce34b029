// SPDX-License-Identifier: MIT
#include "vramlab/serving_fit.h"

#include "vramlab/errors.h"

#include <algorithm>

namespace vramlab {

RunSpec withContext(const RunSpec& run, Count context)
{
    RunSpec r = run;
    if (r.serving->engine == ServingEngine::Sglang)
        r.serving->contextLength = context;
    else if (r.serving->engine == ServingEngine::LlamaCpp)
        r.serving->nCtx = context;
    else
        r.serving->maxModelLen = context;
    return r;
}

/// Requests of max_model_len tokens the cache holds: vLLM allocates whole blocks per request.
Count requestsHeld(const ServingEstimate& e, const Serving& s)
{
    if (e.startupFails || e.maxModelLen <= 0)
        return 0;
    // Hybrid state-space models: blocks of two kinds (vLLM) or a Mamba pool (SGLang) bound the requests; the
    // engine's concurrency already counts both.
    if (!e.ranks.empty() && e.ranks.front().statePerSequenceBytes > 0)
        return static_cast<Count>(e.maxConcurrency);
    if (e.engine == ServingEngine::Vllm)
        return e.gpuBlocks.value_or(0) / e.blocksPerRequest.value_or(ceilDiv(e.maxModelLen, s.blockSize));
    if (e.engine == ServingEngine::LlamaCpp)
        return 1;
    return e.kvCacheTokens / e.maxModelLen;
}

namespace {

void requireServing(const RunSpec& run)
{
    if (!run.serving)
        throw InputError("run.mode", "expected \"serving\" (a serving fit needs run.serving)");
}

} // namespace

ServingFit maxConcurrency(const ModelSpec& m, const RunSpec& run, Count context)
{
    requireServing(run);
    ServingFit f;
    const RunSpec r = withContext(run, context);
    f.estimate = servingEstimate(m, r);
    const Count n = requestsHeld(*f.estimate, *r.serving);
    if (n > 0)
        f.value = n;
    f.explanation = n > 0 ? formatCount(n) + " requests of " + formatCount(context) + " tokens fit the KV cache ("
            + formatCount(f.estimate->kvCacheTokens) + " tokens)"
                          : (f.estimate->startupFails ? f.estimate->failure
                                                      : "not one request of " + formatCount(context) + " tokens fits");
    return f;
}

ServingFit longestContext(const ModelSpec& m, const RunSpec& run, Count concurrency)
{
    requireServing(run);
    ServingFit f;
    auto fits = [&](Count len) {
        ServingEstimate e = servingEstimate(m, withContext(run, len));
        const bool ok = requestsHeld(e, *run.serving) >= concurrency;
        return std::make_pair(ok, e);
    };
    const Count ceiling = std::max<Count>(1, m.maxPositionEmbeddings > 0 ? m.maxPositionEmbeddings : 1'000'000);
    Count lo = 0, hi = ceiling + 1; // fits(lo) (0: nothing), !fits(hi)
    auto [okTop, eTop] = fits(ceiling);
    if (okTop) {
        f.value = ceiling;
        f.estimate = eTop;
        f.explanation = "the model's whole context (" + formatCount(ceiling) + " tokens) fits "
            + formatCount(concurrency) + " requests";
        return f;
    }
    hi = ceiling;
    while (hi - lo > 1) {
        const Count mid = lo + (hi - lo) / 2;
        auto [ok, e] = fits(mid);
        if (ok) {
            lo = mid;
            f.estimate = e;
        } else {
            hi = mid;
        }
    }
    if (lo > 0) {
        f.value = lo;
        f.explanation = formatCount(concurrency) + " requests of " + formatCount(lo) + " tokens fit; "
            + formatCount(lo + 1) + " do not";
    } else {
        f.estimate = fits(1).second;
        f.explanation = "not even " + formatCount(concurrency) + " requests of 1 token fit";
    }
    return f;
}

ServingFit fewestGpus(const ModelSpec& m, const RunSpec& run, Count concurrency)
{
    requireServing(run);
    if (run.serving->engine == ServingEngine::LlamaCpp || run.serving->engine == ServingEngine::HfGenerate)
        throw InputError("run.serving.engine", "fewest GPUs is a tensor-parallel search: expected vllm or sglang");
    ServingFit f;
    for (Count tp = 1; tp <= 64; tp *= 2) {
        if (m.numHeads % tp != 0)
            break;
        RunSpec r = run;
        r.parallelism.tensorParallel = tp;
        r.parallelism.gpus = tp * r.parallelism.pipelineParallel;
        ServingEstimate e = servingEstimate(m, r);
        const Count held = requestsHeld(e, *r.serving);
        if (!f.estimate)
            f.estimate = e;
        if (held >= concurrency) {
            f.value = r.parallelism.gpus;
            f.estimate = e;
            f.explanation = "tensor parallel " + formatCount(tp) + ": " + formatCount(held) + " requests of "
                + formatCount(e.maxModelLen) + " tokens fit";
            return f;
        }
    }
    f.explanation = "no tensor-parallel size up to 64 (dividing the " + formatCount(m.numHeads) + " heads) holds "
        + formatCount(concurrency) + " requests";
    return f;
}

ServingFit mostGpuLayers(const ModelSpec& m, const RunSpec& run)
{
    requireServing(run);
    if (run.serving->engine != ServingEngine::LlamaCpp)
        throw InputError("run.serving.engine", "layers on the GPU is a llama.cpp question: expected llama.cpp");
    if (!run.gpu)
        throw InputError("run.gpu", "required: the GPU the layers go to");
    if (run.serving->tensorSplit.size() > 1)
        throw InputError("run.serving.tensor_split", "expected one GPU for the layer search");
    ServingFit f;
    auto gpuBytes = [](const ServingEstimate& e) {
        const LlamaCppDevice& d = e.devices.front();
        return d.weightsBytes + d.kvBufferBytes + d.computeBufferBytes.value_or(0);
    };
    // More layers never take less GPU memory, so the largest that fits is found by bisection.
    Count lo = -1, hi = m.numLayers + 2;
    while (hi - lo > 1) {
        const Count mid = lo + (hi - lo) / 2;
        RunSpec r = run;
        r.serving->nGpuLayers = mid;
        ServingEstimate e = servingEstimate(m, r);
        if (gpuBytes(e) <= run.gpu->memoryBytes) {
            lo = mid;
            f.estimate = e;
        } else {
            hi = mid;
        }
    }
    if (lo >= 0) {
        f.value = lo;
        f.explanation = formatCount(lo) + " of " + formatCount(m.numLayers + 1) + " layers fit ("
            + formatBytes(gpuBytes(*f.estimate)) + " of " + formatBytes(run.gpu->memoryBytes) + ")";
    }
    return f;
}

} // namespace vramlab
