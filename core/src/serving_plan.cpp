// SPDX-License-Identifier: MIT
#include "vramlab/serving_plan.h"

#include "vramlab/errors.h"
#include "vramlab/serving_fit.h"
#include "vramlab/units.h"

#include <algorithm>

namespace vramlab {

namespace {

/// Tensor parallelism stays inside one NVLink node; vLLM and SGLang need it to divide the
/// attention heads (vllm/config.py verify_with_parallel_config).
constexpr Count kMaxTensorParallel = 8;

bool faster(const ServingPlanCandidate& a, const ServingPlanCandidate& b)
{
    if (a.speed.tpotS != b.speed.tpotS)
        return a.speed.tpotS < b.speed.tpotS;
    if (a.speed.ttftS != b.speed.ttftS)
        return a.speed.ttftS < b.speed.ttftS;
    return a.tensorParallel * a.pipelineParallel < b.tensorParallel * b.pipelineParallel;
}

/// Every speed limit of the request the candidate misses, in words ("" when it meets them all).
std::string missedLimits(const ServingPlanCandidate& c, const ServingPlanRequest& req)
{
    std::string why;
    auto add = [&](const std::string& s) { why += (why.empty() ? "" : "; ") + s; };
    if (!c.speed.available)
        return req.maxTpotS || req.maxTtftS || req.minTokensPerS
            ? "a speed limit needs the GPU's memory bandwidth and peak FLOP/s (run.gpu)"
            : "";
    if (req.maxTpotS && c.speed.tpotS > *req.maxTpotS)
        add("TPOT " + formatSeconds(c.speed.tpotS, 3) + " is over the " + formatSeconds(*req.maxTpotS, 3) + " limit");
    if (req.maxTtftS && c.speed.ttftS > *req.maxTtftS)
        add("TTFT " + formatSeconds(c.speed.ttftS, 3) + " is over the " + formatSeconds(*req.maxTtftS, 3) + " limit");
    if (req.minTokensPerS && c.tokensPerSAll() < *req.minTokensPerS)
        add(formatCount(static_cast<Count>(c.tokensPerSAll())) + " tokens/s is under the "
            + formatCount(static_cast<Count>(*req.minTokensPerS)) + " asked");
    return why;
}

std::string percentOver(double v, double best)
{
    return "+" + formatDouble(best > 0 ? 100.0 * (v - best) / best : 0.0, std::chars_format::fixed, 0) + "%";
}

} // namespace

std::string ServingPlanCandidate::summary() const
{
    std::string s = "TP " + std::to_string(tensorParallel) + " x PP " + std::to_string(pipelineParallel) + " x DP "
        + std::to_string(dataParallel) + ", kv_cache_dtype ";
    s += kvCacheDtype ? std::string(toString(*kvCacheDtype)) : std::string("auto");
    s += (engine == ServingEngine::Sglang ? ", context_length " : ", max_model_len ") + formatCount(context);
    return s;
}

RunSpec applyServingCandidate(const RunSpec& run, const ServingPlanCandidate& c, Count context)
{
    RunSpec r = withContext(run, context);
    r.parallelism.tensorParallel = c.tensorParallel;
    r.parallelism.pipelineParallel = c.pipelineParallel;
    r.parallelism.gpus = c.tensorParallel * c.pipelineParallel * c.dataParallel; // replicas: ServingEstimate::replicas
    r.serving->kvCacheDtype = c.kvCacheDtype;
    return r;
}

ServingPlanResult servingPlan(const ModelSpec& m, const RunSpec& run, const ServingPlanRequest& req)
{
    if (!run.serving)
        throw InputError("run.mode", "expected \"serving\" (the serving planner needs run.serving)");
    const ServingEngine engine = run.serving->engine;
    if (engine != ServingEngine::Vllm && engine != ServingEngine::Sglang)
        throw InputError("run.serving.engine",
            "the serving planner ranks tensor/pipeline/data-parallel deployments: expected vllm or sglang");
    if (!run.gpu)
        throw InputError("run.gpu", "required: the GPU kind to deploy on");
    if (req.gpus < 1 || req.concurrency < 1 || req.context < 1)
        throw InputError("plan", "expected at least one GPU, one request and one token of context");

    // The scenario's KV dtype, and fp8 (both engines' --kv-cache-dtype fp8) when it is not already.
    std::vector<std::optional<DType>> kvDtypes { run.serving->kvCacheDtype };
    if (run.serving->kvCacheDtype != DType::Fp8)
        kvDtypes.push_back(DType::Fp8);

    ServingPlanResult res;
    for (Count tp = 1; tp <= std::min(req.gpus, kMaxTensorParallel); tp *= 2) {
        if (m.numHeads % tp != 0 || req.gpus % tp != 0)
            continue;
        // Pipeline stages: vLLM only (SGLang's pipeline parallelism is not modelled).
        for (Count pp = 1; tp * pp <= req.gpus; ++pp) {
            if (req.gpus % (tp * pp) != 0 || pp > m.numLayers)
                continue;
            if (pp > 1 && engine != ServingEngine::Vllm)
                break;
            for (const std::optional<DType>& kv : kvDtypes) {
                ServingPlanCandidate c;
                c.tensorParallel = tp;
                c.pipelineParallel = pp;
                c.dataParallel = req.gpus / (tp * pp);
                c.kvCacheDtype = kv;
                c.engine = engine;
                c.context = req.context;
                const RunSpec r = applyServingCandidate(run, c, req.context);
                try {
                    c.estimate = servingEstimate(m, r);
                } catch (const InputError& e) {
                    c.why = e.what(); // a layout the engine refuses for this model
                    res.unfit.push_back(std::move(c));
                    continue;
                }
                ++res.evaluated;
                const Count held = requestsHeld(c.estimate, *r.serving);
                c.requestsHeld = held * c.dataParallel;
                // The engine decodes at most max_num_seqs together; the rest wait in its queue.
                c.batchPerReplica = std::min(held, ceilDiv(req.concurrency, c.dataParallel));
                if (c.estimate.maxNumSeqs > 0)
                    c.batchPerReplica = std::min(c.batchPerReplica, c.estimate.maxNumSeqs);
                if (c.estimate.startupFails) {
                    c.why = c.estimate.failure;
                } else if (c.requestsHeld < req.concurrency) {
                    c.why = "holds " + formatCount(c.requestsHeld) + (c.requestsHeld == 1 ? " request" : " requests")
                        + " of " + formatCount(req.context) + " tokens, " + formatCount(req.concurrency) + " asked";
                } else {
                    c.speed = servingSpeed(
                        m, r, c.estimate, c.batchPerReplica, std::min(req.promptTokens, req.context), req.context);
                    c.why = missedLimits(c, req);
                    c.fits = c.why.empty();
                }
                (c.fits ? res.top : res.unfit).push_back(std::move(c));
            }
        }
    }
    std::stable_sort(res.top.begin(), res.top.end(), faster);
    if (res.top.size() > static_cast<size_t>(std::max(req.topK, 1)))
        res.top.resize(static_cast<size_t>(std::max(req.topK, 1)));
    for (size_t i = 0; i < res.top.size(); ++i) {
        ServingPlanCandidate& c = res.top[i];
        const std::string held = formatCount(c.requestsHeld) + (c.requestsHeld == 1 ? " request" : " requests")
            + " held (" + formatCount(c.batchPerReplica) + " decoding per replica), "
            + formatCount(static_cast<Count>(c.tokensPerSAll())) + " tokens/s in all";
        if (i == 0) {
            c.why = "fastest: TPOT " + formatSeconds(c.speed.tpotS, 3) + " (" + c.speed.decodeBound + "), TTFT "
                + formatSeconds(c.speed.ttftS, 3) + ", " + held;
        } else {
            const ServingPlanCandidate& best = res.top.front();
            c.why = "TPOT " + percentOver(c.speed.tpotS, best.speed.tpotS) + " vs #1 ("
                + formatSeconds(c.speed.tpotS, 3) + "), " + held;
        }
    }
    return res;
}

} // namespace vramlab
