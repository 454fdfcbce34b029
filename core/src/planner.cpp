// SPDX-License-Identifier: MIT
#include "vramlab/planner.h"

#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/precision_regime.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace vramlab {

namespace {

/// Divisors of n up to cap, ascending, from n's prime factors, each divided out as it is
/// found: 10^7 = 2^7 x 5^7 costs a handful of divisions, not the 3,162 of trial division up
/// to its square root (64-bit divisions are slow; a prime n still costs its square root).
std::vector<Count> divisors(Count n, Count cap)
{
    std::vector<std::pair<Count, int>> factors;
    Count rest = n;
    for (Count p = 2; p <= rest / p; ++p) {
        int power = 0;
        for (; rest % p == 0; ++power)
            rest /= p;
        if (power > 0)
            factors.emplace_back(p, power);
    }
    if (rest > 1)
        factors.emplace_back(rest, 1);
    std::vector<Count> all { 1 };
    for (const auto& [p, power] : factors) {
        const size_t known = all.size();
        Count pk = 1;
        for (int i = 0; i < power; ++i) {
            pk *= p; // a divisor of n: no overflow
            for (size_t j = 0; j < known; ++j)
                all.push_back(all[j] * pk);
        }
    }
    std::erase_if(all, [cap](Count d) { return d > cap; });
    std::sort(all.begin(), all.end());
    return all;
}

/// The step-time part that costs a candidate the most against the winner.
std::string whyLoses(const PlanCandidate& c, const PlanCandidate& best)
{
    const double dt = c.time.total() - best.time.total();
    if (dt <= best.time.total() * 1e-9) {
        char buf[96];
        std::snprintf(
            buf, sizeof buf, "as fast as #1 with %s at its peak", c.peak < best.peak ? "less memory" : "more memory");
        return buf;
    }
    struct Part {
        double delta;
        const char* what;
    };
    const Part parts[] = {
        { c.time.computeS - best.time.computeS, "compute" },
        { c.time.recomputeS - best.time.recomputeS, "recomputation (checkpointing)" },
        { c.time.dataParallelS - best.time.dataParallelS,
            c.zeroStage == 3 ? "ZeRO-3 gathers and reductions" : "data-parallel gradient reduction" },
        { c.time.tensorParallelS - best.time.tensorParallelS, "tensor-parallel all-reduces" },
        { c.time.pipelineS - best.time.pipelineS, "pipeline bubble" },
        { c.time.offloadS - best.time.offloadS, "host offload traffic" },
    };
    const Part& worst = *std::max_element(
        std::begin(parts), std::end(parts), [](const Part& a, const Part& b) { return a.delta < b.delta; });
    char buf[160];
    std::snprintf(buf, sizeof buf, "%+.0f%% (+%s) vs #1, mostly %s (+%s)", 100.0 * dt / best.time.total(),
        formatSeconds(dt).c_str(), worst.what, formatSeconds(worst.delta).c_str());
    return buf;
}

std::string whyWins(const PlanCandidate& c, Bytes usable)
{
    const StepTimeParts& t = c.time;
    std::string s = "fastest: " + formatSeconds(t.total()) + " per step = compute " + formatSeconds(t.computeS);
    auto part = [&](double v, const char* what) {
        if (v > 0)
            s += std::string(" + ") + what + " " + formatSeconds(v);
    };
    part(t.recomputeS, "recompute");
    part(t.dataParallelS, "DP comm");
    part(t.tensorParallelS, "TP comm");
    part(t.pipelineS, "pipeline");
    part(t.offloadS, "offload");
    s += std::string("; peak ") + (c.lowerBound ? "at least " : "") + formatBytes(c.peak) + " of "
        + formatBytes(usable);
    return s;
}

} // namespace

std::string PlanCandidate::summary() const
{
    std::string s = (zeroStage == 3 && sharding == Sharding::Fsdp2          ? std::string("FSDP2")
                            : zeroStage == 3 && sharding == Sharding::Fsdp1 ? std::string("FSDP1")
                                                                            : "ZeRO-" + std::to_string(zeroStage))
        + ", TP " + std::to_string(tensorParallel)
        + (tensorParallel > 1 ? sequenceParallel ? " + sequence parallel" : " without sequence parallel" : "") + ", PP "
        + std::to_string(pipelineParallel);
    if (expertParallel > 1)
        s += ", EP " + std::to_string(expertParallel);
    s += ", micro-batch " + std::to_string(microBatch) + " x " + std::to_string(accumulation) + ", checkpointing "
        + toString(checkpointing);
    if (offloadParams)
        s += ", offload optimizer + params";
    else if (offloadOptimizer)
        s += ", offload optimizer";
    else
        s += ", no offload";
    return s;
}

namespace {

/// The candidate's keys set on `r` (applyCandidate on a copy; the planner in place).
void setCandidate(RunSpec& r, const PlanCandidate& c, Count gpus)
{
    Parallelism& p = r.parallelism;
    p.gpus = gpus;
    p.zeroStage = c.zeroStage;
    p.tensorParallel = c.tensorParallel;
    p.pipelineParallel = c.pipelineParallel;
    p.pipelineSchedule = PipelineSchedule::OneFOneB; // the planner's pipelines are 1F1B (its rows say "PP n")
    p.virtualStages = 1;
    // The base's options that only some setups can have: kept where the candidate can use them.
    p.asyncTp = p.asyncTp && c.tensorParallel > 1 && c.sequenceParallel;
    // The base's FSDP (its sharding and FSDP1's keys) for the ZeRO-3 setups; ZeRO's own stages below that.
    p.sharding = c.zeroStage == 3 ? c.sharding : Sharding::Zero;
    if (p.sharding != Sharding::Fsdp1) {
        p.noSync = std::nullopt;
        p.fsdpWrap = std::nullopt;
    }
    if (c.zeroStage != 3) {
        r.keepAllGathered = r.keepLastBlockGathered = false;
        p.stage3PrefetchBucketSize = p.stage3MaxLiveParameters = p.stage3MaxReuseDistance
            = p.stage3ParamPersistenceThreshold = std::nullopt;
    }
    if (c.zeroStage == 0) {
        p.reduceBucketSize = std::nullopt;
        p.overlapComm = std::nullopt;
    }
    p.expertParallel = c.expertParallel;
    p.sequenceParallel = c.sequenceParallel;
    p.offloadOptimizer = c.offloadOptimizer;
    p.offloadParams = c.offloadParams;
    p.fsdpShardGroup = 0; // its setups shard over every data-parallel rank (HSDP is not a planner choice)
    r.microBatchSize = c.microBatch;
    r.gradientAccumulationSteps = c.accumulation;
    r.checkpointing = c.checkpointing;
}

} // namespace

RunSpec applyCandidate(const RunSpec& base, const PlanCandidate& c, Count gpus)
{
    RunSpec r = base;
    setCandidate(r, c, gpus);
    return r;
}

PlanResult plan(const Scenario& base, const PlanRequest& req)
{
    const ModelSpec& m = base.model;
    const RunSpec& b = base.run;
    if (!b.gpu)
        throw InputError("run.gpu", "required to plan: a catalog name or {\"memory_gib\": N}");
    if (b.mode != Mode::Training)
        throw InputError("run.mode", "expected training: the planner ranks training setups");
    if (!(req.gpus >= 1 && req.gpus <= 100'000))
        throw InputError("--gpus", "expected a GPU count from 1 to 100000, got " + std::to_string(req.gpus));
    validateRun(m, b);
    // A rate of 0 (a custom GPU's unknown figure) would make that part of the step free and
    // rank it first: refuse what needs the figure, leave out what it only feeds.
    if (const DType compute = precisionRegime(b).compute; !(b.gpu->peakTflops(compute) > 0))
        throw InputError("run.gpu",
            "required to plan: the GPU's TFLOP/s for " + std::string(toString(compute))
                + " (a custom GPU needs bf16_tflops or a \"base\" catalog GPU)");
    if (req.gpus > 1 && !(b.gpu->interconnectGBs > 0))
        throw InputError(
            "run.gpu.interconnect_gbs", "required to plan on more than one GPU: the GPU-to-GPU bandwidth in GB/s");
    PlanResult res;
    std::string lowerBoundWhy; ///< the first lower-bound row's reason, said once in the notes
    bool allowOffload = req.allowOffload;
    if (allowOffload && !(b.gpu->hostLinkGBs > 0)) {
        allowOffload = false;
        res.notes.push_back("offload left out: the GPU has no host link speed (run.gpu.host_link_gbs)");
    }
    res.gpus = req.gpus;
    res.globalBatch = req.globalBatch.value_or(
        checkedMul(b.microBatchSize, b.gradientAccumulationSteps, std::max<Count>(1, b.parallelism.sampleParallel())));
    if (!(res.globalBatch >= 1 && res.globalBatch <= 10'000'000))
        throw InputError(
            "--global-batch", "expected sequences per step from 1 to 10000000, got " + std::to_string(res.globalBatch));

    std::vector<Checkpointing> ckpts = { {}, { Checkpointing::Kind::Full, 0 } };
    if (b.attention == AttentionImpl::Eager) // flash already recomputes what selective would
        ckpts.insert(ckpts.begin() + 1, { Checkpointing::Kind::Selective, 0 });

    // The best topK fitting setups in a max-heap (the worst of them on top), not every
    // fitting setup: ties in step time and peak go to the earlier setup in the order
    // ZeRO stage, offload, checkpointing, micro-batch, as they always did.
    struct Ranked {
        PlanCandidate c;
        Count order; ///< position in that order
    };
    auto better = [](const Ranked& x, const Ranked& y) {
        const double tx = x.c.time.total(), ty = y.c.time.total();
        return tx != ty ? tx < ty : x.c.peak != y.c.peak ? x.c.peak < y.c.peak : x.order < y.order;
    };
    const size_t topK = static_cast<size_t>(std::max(1, req.topK));
    std::vector<Ranked> best;
    best.reserve(topK + 1);
    std::optional<Count> unfitOrder;

    EstimateCache cache;
    RunSpec run = b; // one copy, the candidate's keys set in place
    bool anyBatchSplit = false;
    Count orderBase = 0;
    for (Count tp = 1; tp <= std::min<Count>(req.gpus, std::max<Count>(1, req.maxTensorParallel)); tp *= 2) {
        if (req.gpus % tp != 0 || m.numHeads % tp != 0 || !(m.numKvHeads % tp == 0 || tp % m.numKvHeads == 0))
            continue;
        for (Count pp : divisors(req.gpus / tp,
                 req.maxPipelineParallel > 0 ? std::min(req.maxPipelineParallel, m.numLayers) : m.numLayers)) {
            const Count dp = req.gpus / (tp * pp);
            const Count cp = b.parallelism.contextParallel; // its ranks share each sample
            if (dp % cp != 0 || res.globalBatch % (dp / cp) != 0)
                continue;
            anyBatchSplit = true;
            const Count perReplica = res.globalBatch / (dp / cp);
            const std::vector<Count> microBatches = divisors(perReplica, perReplica);
            const Count ep = m.moe.enabled() ? std::gcd(b.parallelism.expertParallel, dp) : 1;
            // ZeRO x offload innermost: the saved tensors depend on neither, so each
            // micro-batch and checkpointing computes them once for all eight (twice where FSDP1's block flat
            // parameters hold adapters: the cache keeps those apart).
            struct Layout {
                int zero, offload;
                bool done; ///< a smaller micro-batch did not fit (or could not be estimated)
            };
            std::vector<Layout> layouts;
            for (int zero = 0; zero <= (dp > 1 ? 3 : 0); ++zero)
                for (int offload = 0; offload <= (!allowOffload ? 0 : zero == 3 ? 2 : zero >= 1 ? 1 : 0); ++offload)
                    layouts.push_back({ zero, offload, false });
            const Count nCk = static_cast<Count>(ckpts.size()), nMb = static_cast<Count>(microBatches.size());
            for (size_t ci = 0; ci < ckpts.size(); ++ci) {
                for (Layout& l : layouts)
                    l.done = false;
                for (size_t mi = 0; mi < microBatches.size(); ++mi) {
                    const Count mb = microBatches[mi];
                    bool anyLeft = false;
                    cache.holdActivations(true);
                    for (size_t li = 0; li < layouts.size(); ++li) {
                        Layout& l = layouts[li];
                        if (l.done)
                            continue;
                        anyLeft = true;
                        PlanCandidate c;
                        c.zeroStage = l.zero;
                        c.sharding = l.zero == 3 ? base.run.parallelism.sharding : Sharding::Zero;
                        c.tensorParallel = tp;
                        c.pipelineParallel = pp;
                        c.expertParallel = ep;
                        c.sequenceParallel = tp > 1;
                        c.microBatch = mb;
                        c.accumulation = perReplica / mb;
                        c.checkpointing = ckpts[ci];
                        c.offloadOptimizer = l.offload >= 1;
                        c.offloadParams = l.offload == 2;
                        setCandidate(run, c, req.gpus);
                        Count tokensPerStep = 0;
                        try { // the report made in place and read here: no empty one assigned over
                            const Report rep = estimate(m, run, EstimateOptions { false }, &cache);
                            c.peak = rep.peak;
                            c.fits = rep.fits;
                            c.lowerBound = !rep.lowerBound.empty();
                            if (c.lowerBound && lowerBoundWhy.empty())
                                lowerBoundWhy = rep.lowerBound;
                            c.time = rep.flops.time;
                            tokensPerStep = rep.flops.tokensPerStep;
                        } catch (const InputError&) {
                            l.done = true; // this parallel layout is impossible for the model
                            continue;
                        } catch (const SizeOverflow&) {
                            l.done = true;
                            continue;
                        }
                        ++res.evaluated;
                        const double total = c.time.total();
                        c.tokensPerS = total > 0 ? static_cast<double>(tokensPerStep) / total : 0;
                        const Count order
                            = orderBase + (static_cast<Count>(li) * nCk + static_cast<Count>(ci)) * nMb + Count(mi);
                        if (!c.fits) {
                            if (!res.fastestUnfit || total < res.fastestUnfit->time.total()
                                || (total == res.fastestUnfit->time.total() && order < *unfitOrder)) {
                                res.fastestUnfit = c;
                                unfitOrder = order;
                            }
                            l.done = true; // memory grows with the micro-batch: larger ones do not fit either
                            continue;
                        }
                        ++res.fitting;
                        Ranked ranked { std::move(c), order };
                        if (best.size() < topK) {
                            best.push_back(std::move(ranked));
                            std::push_heap(best.begin(), best.end(), better);
                        } else if (better(ranked, best.front())) {
                            std::pop_heap(best.begin(), best.end(), better);
                            best.back() = std::move(ranked);
                            std::push_heap(best.begin(), best.end(), better);
                        }
                    }
                    cache.holdActivations(false);
                    if (!anyLeft)
                        break;
                }
            }
            orderBase += static_cast<Count>(layouts.size()) * nCk * nMb;
        }
    }
    if (!anyBatchSplit)
        throw InputError("--global-batch",
            "expected a multiple of a data-parallel size of " + std::to_string(req.gpus) + " GPUs, got "
                + std::to_string(res.globalBatch));
    std::sort_heap(best.begin(), best.end(), better);
    for (Ranked& r : best)
        res.top.push_back(std::move(r.c));
    if (std::any_of(res.top.begin(), res.top.end(), [](const PlanCandidate& c) { return c.lowerBound; }))
        res.notes.push_back("peaks marked >= are lower bounds (" + lowerBoundWhy + "): such a row may not fit");
    const Bytes usable = b.gpu->memoryBytes;
    for (size_t i = 0; i < res.top.size(); ++i)
        res.top[i].why = i == 0 ? whyWins(res.top[0], usable) : whyLoses(res.top[i], res.top[0]);
    if (res.fastestUnfit && (!res.top.empty() && res.fastestUnfit->time.total() >= res.top[0].time.total()))
        res.fastestUnfit.reset();
    if (res.fastestUnfit)
        res.fastestUnfit->why = "would be " + formatSeconds(res.fastestUnfit->time.total()) + " per step but needs "
            + formatBytes(res.fastestUnfit->peak) + " at its peak (" + formatBytes(usable) + " per GPU)";
    return res;
}

} // namespace vramlab
