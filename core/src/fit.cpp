// SPDX-License-Identifier: MIT
#include "vramlab/fit.h"

#include "vramlab/errors.h"
#include "vramlab/estimator.h"

namespace vramlab {

namespace {

bool fitsAt(const Scenario& base, SweepParam p, Count v, EstimateCache& cache)
{
    RunSpec run = base.run;
    setValue(run, p, v);
    return estimate(base.model, run, EstimateOptions { false }, &cache).fits;
}

void requireGpu(const Scenario& base)
{
    if (!base.run.gpu)
        throw InputError("run.gpu", "required to fit: a catalog name or {\"memory_gib\": N}");
}

/// Largest v in [lo, ceiling] with pred(v), pred monotone decreasing; lo must satisfy it.
template <typename Pred> Count largestTrue(Count lo, Count ceiling, Pred pred)
{
    Count good = lo, bad = 0;
    Count probe = lo;
    while (true) { // gallop
        const Count next = probe > ceiling / 2 ? ceiling : probe * 2;
        if (next == probe)
            return good;
        if (!pred(next)) {
            bad = next;
            break;
        }
        good = probe = next;
        if (probe == ceiling)
            return good;
    }
    while (bad - good > 1) {
        const Count mid = good + (bad - good) / 2;
        (pred(mid) ? good : bad) = mid;
    }
    return good;
}

} // namespace

FitResult fitMax(const Scenario& base, SweepParam p)
{
    requireGpu(base);
    if (p == SweepParam::Gpus)
        return fitMinGpus(base);
    FitResult res { p, std::nullopt, std::nullopt, std::nullopt, 0, 0 };
    const Count ceiling = (p == SweepParam::SequenceLength || p == SweepParam::ContextLength) ? 100'000'000 : 1'000'000;
    res.ceiling = ceiling;
    // Learned positions cap the sequence at the table's length.
    Count cap = ceiling;
    if (p == SweepParam::SequenceLength && base.model.position == PositionKind::Learned
        && base.run.mode == Mode::Training)
        cap = base.model.maxPositionEmbeddings;
    EstimateCache cache;
    auto pred = [&](Count v) {
        try {
            return fitsAt(base, p, v, cache);
        } catch (const SizeOverflow&) {
            return false;
        }
    };
    if (!pred(1)) {
        res.nextValue = 1;
        res.nextReport = estimate(withValue(base, p, 1));
        return res;
    }
    const Count best = largestTrue(1, cap, pred);
    res.value = best;
    res.report = estimate(withValue(base, p, best));
    if (best < cap) {
        res.nextValue = best + 1;
        res.nextReport = estimate(withValue(base, p, best + 1));
    }
    res.ceiling = cap;
    return res;
}

FitResult fitMinGpus(const Scenario& base)
{
    requireGpu(base);
    FitResult res { SweepParam::Gpus, std::nullopt, std::nullopt, std::nullopt, 0, 0 };
    const Count unit = base.run.parallelism.tensorParallel * base.run.parallelism.pipelineParallel
        * base.run.parallelism.contextParallel; // context-parallel ranks share each sample
    const Count maxReplicas = 1'000'000 / unit;
    res.ceiling = maxReplicas * unit;
    EstimateCache cache;
    auto fitsWith = [&](Count replicas) {
        try {
            return fitsAt(base, SweepParam::Gpus, replicas * unit, cache);
        } catch (const InputError&) {
            return false; // e.g. expert parallelism that does not divide this data-parallel size
        }
    };
    // Per-GPU memory falls as data parallelism grows (ZeRO); find the first replica count that fits.
    Count lo = 0, hi = 1;
    while (!fitsWith(hi)) {
        lo = hi;
        if (hi >= maxReplicas) { // even the most GPUs searched: say what they would need
            res.nextValue = res.ceiling;
            try {
                res.nextReport = estimate(withValue(base, SweepParam::Gpus, res.ceiling));
            } catch (const InputError&) {
            }
            return res;
        }
        hi = std::min(maxReplicas, hi * 2);
    }
    while (hi - lo > 1) {
        const Count mid = lo + (hi - lo) / 2;
        (fitsWith(mid) ? hi : lo) = mid;
    }
    res.value = hi * unit;
    res.report = estimate(withValue(base, SweepParam::Gpus, hi * unit));
    if (lo >= 1) {
        res.nextValue = lo * unit;
        res.nextReport = estimate(withValue(base, SweepParam::Gpus, lo * unit));
    }
    return res;
}

} // namespace vramlab
