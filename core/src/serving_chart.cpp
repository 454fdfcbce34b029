// SPDX-License-Identifier: MIT
#include "vramlab/serving_chart.h"

#include "vramlab/errors.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace vramlab {

namespace {

constexpr Count kFirstContext = 256;
constexpr Count kContextWithoutLimit = 131072;

ServingSegment segment(const char* key, std::string label, Bytes bytes, ColourRole colour)
{
    return { key, std::move(label), bytes, colour };
}

/// The margin between what the engine takes and the GPU's memory (none above it).
void addUnused(ServingBar& bar)
{
    if (bar.capacityBytes)
        bar.segments.push_back(segment(
            "unused", "Unused margin", std::max<Bytes>(0, *bar.capacityBytes - bar.usedBytes()), ColourRole::Grey));
}

std::string fraction(double f, int decimals = 2)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, f);
    return buf;
}

RunSpec atContext(const RunSpec& run, Count context)
{
    RunSpec r = run;
    if (r.serving->engine == ServingEngine::Sglang)
        r.serving->contextLength = context;
    else
        r.serving->maxModelLen = context;
    return r;
}

ConcurrencyPoint pointOf(const ServingEstimate& e)
{
    return { e.maxModelLen, e.maxConcurrency, e.startupFails };
}

} // namespace

Bytes ServingBar::usedBytes() const
{
    Bytes sum = 0;
    for (const ServingSegment& s : segments)
        if (s.key != "unused")
            sum += s.bytes;
    return sum;
}

Bytes ServingBar::bytesOf(const std::string& key) const
{
    for (const ServingSegment& s : segments)
        if (s.key == key)
            return s.bytes;
    return 0;
}

ServingBudgetChart servingBudgetChart(const RunSpec& run, const ServingEstimate& e)
{
    ServingBudgetChart c;
    c.gpuBytes = e.totalGpuBytes;
    const std::optional<Bytes> gpu = e.totalGpuBytes > 0 ? std::optional<Bytes>(e.totalGpuBytes) : std::nullopt;
    if (e.engine == ServingEngine::LlamaCpp) {
        for (const LlamaCppDevice& d : e.devices) {
            ServingBar bar;
            bar.label = d.name;
            bar.segments = { segment("weights", "Weights", d.weightsBytes, ColourRole::Blue),
                segment("kv_cache", "KV buffer", d.kvBufferBytes, ColourRole::ReddishPurple),
                segment("compute_buffer", "Compute buffer", d.computeBufferBytes.value_or(0), ColourRole::Vermillion) };
            if (d.name != "CPU") // host memory has no GPU line
                bar.capacityBytes = gpu;
            addUnused(bar);
            c.bars.push_back(std::move(bar));
        }
        return c;
    }
    for (const ServingRank& k : e.ranks) {
        ServingBar bar;
        bar.label = k.name;
        bar.capacityBytes = gpu;
        bar.segments = { segment("weights", "Weights", k.weightsBytes, ColourRole::Blue),
            segment("activation_peak", "Activation peak", k.activationPeakBytes, ColourRole::Vermillion),
            segment("non_torch", "Non-torch", k.nonTorchBytes, ColourRole::Grey),
            segment("cuda_graphs", "CUDA graphs", k.cudaGraphBytes, ColourRole::Yellow),
            // A negative rest is the startup failure: no cache to draw.
            segment(
                "kv_cache", "KV cache", std::max<Bytes>(0, k.kvCacheBytes - k.stateBytes), ColourRole::ReddishPurple) };
        if (k.statePerSequenceBytes > 0) // hybrid state-space models: the recurrent states' part of the cache
            bar.segments.push_back(segment("ssm_state", e.stateKind + " state", k.stateBytes, ColourRole::SkyBlue));
        addUnused(bar);
        c.bars.push_back(std::move(bar));
    }
    if (e.ranks.empty() || !run.serving)
        return c;
    const ServingRank& k = e.ranks.front();
    const Serving& s = *run.serving;
    if (e.engine == ServingEngine::Vllm) {
        c.budgetBytes = k.budgetBytes;
        c.budgetLabel = "gpu_memory_utilization " + fraction(gpuMemoryUtilizationOrDefault(s)) + ": "
            + formatBytes(k.budgetBytes);
    } else if (e.engine == ServingEngine::Sglang) {
        // SGLang's static share is of the memory free before loading (after non-torch): weights + pool.
        c.budgetBytes = k.nonTorchBytes + k.budgetBytes;
        const double mfs = static_cast<double>(k.budgetBytes)
            / static_cast<double>(std::max<Bytes>(1, e.totalGpuBytes - k.nonTorchBytes));
        // Three decimals: SGLang's defaults are rounded to them (server_args.py, round(..., 3)).
        c.budgetLabel = "mem_fraction_static " + fraction(mfs, 3) + ": " + formatBytes(*c.budgetBytes);
    }
    return c;
}

ConcurrencyCurve concurrencyCurve(const ModelSpec& model, const RunSpec& run, const ServingEstimate& current)
{
    if (!run.serving)
        throw InputError("run.mode", "expected \"serving\" for a concurrency curve");
    ConcurrencyCurve c;
    c.current = pointOf(current);
    const Count top = model.maxPositionEmbeddings > 0 ? model.maxPositionEmbeddings : kContextWithoutLimit;
    std::vector<Count> contexts;
    for (Count len = kFirstContext; len < top; len *= 2)
        contexts.push_back(len);
    contexts.push_back(top);
    if (current.engine == ServingEngine::LlamaCpp) {
        // One context of n_ctx cells: llama-server's parallel slots each get n_ctx / slots.
        c.current = { current.nCtxPadded, 1.0, current.startupFails };
        for (Count len : contexts)
            if (len <= current.nCtxPadded)
                c.points.push_back({ len, static_cast<double>(current.nCtxPadded) / static_cast<double>(len), false });
        if (c.points.empty() || c.points.back().context != c.current.context)
            c.points.push_back(c.current);
        return c;
    }
    for (Count len : contexts) {
        if (len == current.maxModelLen)
            continue;
        try {
            c.points.push_back(pointOf(servingEstimate(model, atContext(run, len))));
        } catch (const InputError&) {
            // e.g. max_num_batched_tokens below this length without chunked prefill: vLLM refuses it
        }
    }
    c.points.push_back(c.current);
    std::sort(c.points.begin(), c.points.end(),
        [](const ConcurrencyPoint& a, const ConcurrencyPoint& b) { return a.context < b.context; });
    return c;
}

ServingSpeed defaultServingSpeed(const ModelSpec& model, const RunSpec& run, const ServingEstimate& e)
{
    const Count held = std::max<Count>(1, static_cast<Count>(std::floor(e.maxConcurrency)));
    const Count batch = std::min<Count>(std::max<Count>(1, e.maxNumSeqs), held);
    const Count context = std::max<Count>(1, e.maxModelLen);
    return servingSpeed(model, run, e, batch, context, context);
}

std::string servingVerdict(const ServingEstimate& e)
{
    char concurrency[32];
    std::snprintf(concurrency, sizeof concurrency, "%.2fx", e.maxConcurrency);
    // Short enough for the window's header at 1280 pixels; the engine's message is the Serving page's.
    return std::string(e.startupFails ? "DOES NOT START: " : "STARTS: ") + formatCount(e.kvCacheTokens) + " KV tokens, "
        + concurrency + " at " + formatCount(e.maxModelLen) + " tokens"
        + (e.replicas > 1 ? ", " + std::to_string(e.replicas) + " replicas" : std::string());
}

} // namespace vramlab
