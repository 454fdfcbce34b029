// SPDX-License-Identifier: MIT
#include "vramlab/snapshot_comparison.h"

#include "vramlab/errors.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace vramlab {

namespace {

Bytes overheadPart(const Report& r, std::string_view key)
{
    for (const Component& c : r.overheadParts)
        if (c.key == key)
            return c.bytes;
    return 0;
}

Bytes at(const TimelineEvent& e, TimelineCategory c)
{
    return e.bytes[static_cast<std::size_t>(c)];
}

/// The simulated peak by measured category (master weights are weights; the overhead that
/// goes through PyTorch's allocator, workspace and communication buffers, is "other").
std::array<Bytes, kSnapshotCategories> predictedByCategory(const Report& r, Bytes outsideAllocator)
{
    std::array<Bytes, kSnapshotCategories> p {};
    auto put = [&](SnapshotCategory c, Bytes b) { p[static_cast<std::size_t>(c)] = std::max<Bytes>(0, b); };
    if (r.stepInputs.training) {
        const TimelineEvent& e = r.peakEvent;
        put(SnapshotCategory::Weights, at(e, TimelineCategory::Weights) + at(e, TimelineCategory::MasterWeights));
        put(SnapshotCategory::Gradients, at(e, TimelineCategory::Gradients));
        put(SnapshotCategory::OptimizerStates, at(e, TimelineCategory::OptimizerStates));
        put(SnapshotCategory::Activations, at(e, TimelineCategory::Activations));
        put(SnapshotCategory::Temporaries, at(e, TimelineCategory::Temporaries));
        put(SnapshotCategory::Other, at(e, TimelineCategory::Overhead) - outsideAllocator);
    } else {
        using K = ComponentKind;
        put(SnapshotCategory::Weights, r.bytes(K::Weights) + r.bytes(K::MasterWeights));
        put(SnapshotCategory::Gradients, r.bytes(K::Gradients));
        put(SnapshotCategory::OptimizerStates, r.bytes(K::OptimizerStates));
        put(SnapshotCategory::Activations, r.bytes(K::Activations));
        put(SnapshotCategory::Other, r.bytes(K::KvCache) + r.bytes(K::Overhead) - outsideAllocator);
    }
    return p;
}

std::string percent(Bytes measured, Bytes predicted)
{
    if (predicted <= 0)
        return "";
    const double pct = 100.0 * (double(measured) - double(predicted)) / double(predicted);
    char buf[48];
    std::snprintf(buf, sizeof buf, " (%+.0f %%)", pct);
    return buf;
}

std::string why(SnapshotCategory c, bool more, const SnapshotComparison& cmp)
{
    const std::string phase(toString(cmp.measuredPeakPhase));
    switch (c) {
    case SnapshotCategory::Weights:
        return more
            ? "the GPU holds more weight bytes than the scenario: more parameters, a wider dtype (fp32 weights under "
              "autocast where the scenario says bf16), buffers, or blocks without a stack taken as weights (see each "
              "block's rule)"
            : "the GPU holds fewer weight bytes: frozen or quantized weights, a smaller model, or weights sharded "
              "across GPUs";
    case SnapshotCategory::Gradients:
        return more
            ? "more gradients than predicted: fp32 gradients where the scenario has 16-bit ones, or gradients of "
              "parameters the scenario freezes"
            : "fewer gradient bytes alive at the measured peak (in " + phase
                + "): the peak comes before all gradients exist, or they are freed (set_to_none) before it";
    case SnapshotCategory::OptimizerStates:
        return more
            ? "more optimizer state than predicted: an fp32 master copy, or states for parameters the scenario freezes"
            : "less optimizer state at the measured peak: step 1 creates Adam's states inside optimizer.step, while "
              "the "
              "simulated step is step 2 (states there from the start); or the optimizer keeps less state";
    case SnapshotCategory::Activations:
        return more
            ? "autograd saved more for backward than the activation model predicts: eager attention keeps its score "
              "matrix, no checkpointing, a longer sequence or a larger micro-batch than the scenario"
            : "autograd saved less for backward than predicted (in " + phase
                + " most activations may already be freed): checkpointing, fused kernels (SDPA, flash) or a "
                  "shorter sequence than the scenario";
    case SnapshotCategory::Temporaries:
        return more
            ? "more short-lived buffers at the measured peak: which buffer is alive at the exact peak event (the "
              "logits' gradient, foreach optimizer temporaries, a recomputed layer) moves the peak by its size"
            : "fewer short-lived buffers at the measured peak than at the simulated one";
    case SnapshotCategory::Other:
        return more ? "blocks the rules could not place (inputs, data batches, caches; see their rules)"
                    : "predicted workspace and communication buffers that the measured step does not hold";
    }
    return {};
}

} // namespace

SnapshotComparison compareSnapshot(const MemorySnapshot& snapshot, const Report& report)
{
    SnapshotComparison cmp;
    cmp.scenarioName = report.scenarioName;
    const SnapshotDevice* d = snapshot.busiest();
    if (!d)
        throw InputError("segments", "the snapshot has no device with memory: nothing to compare", snapshot.file);
    cmp.device = d->device;
    cmp.measuredPeakAllocatedBytes = d->peakAllocatedBytes;
    cmp.measuredPeakReservedBytes = d->peakReservedBytes;
    cmp.measuredPeakPhase = d->peakPhase;
    const Bytes context = overheadPart(report, "cuda_context");
    const Bytes rounding = overheadPart(report, "allocator");
    cmp.predictedPeakBytes = report.peak;
    // The caching-allocator replay's counters where the report has them (EstimateOptions::
    // replayAllocator), else the live peak less what the allocator does not hold.
    cmp.predictedReservedBytes
        = report.allocatorReplayed ? report.peakReservedBytes : std::max<Bytes>(0, report.peak - context);
    cmp.predictedAllocatedBytes
        = report.allocatorReplayed ? report.peakAllocatedBytes : std::max<Bytes>(0, report.peak - context - rounding);
    cmp.predictedPeakPhase = report.peakEvent.phase;
    const auto predicted = predictedByCategory(report, context + rounding);
    for (int i = 0; i < kSnapshotCategories; ++i)
        cmp.categories.push_back({ static_cast<SnapshotCategory>(i),
            d->categoryBytesAtPeak[static_cast<std::size_t>(i)], predicted[static_cast<std::size_t>(i)] });

    if (report.stepInputs.training) {
        try {
            const StepTimeline t = simulateStep(report.stepInputs, 2, true);
            const std::size_t n = t.events.size();
            for (std::size_t i = 0; i < n; ++i)
                if (i == 0 || t.events[i].phase != t.events[i - 1].phase)
                    cmp.predictedPhases.push_back({ t.events[i].phase, n > 1 ? double(i) / double(n - 1) : 0.0 });
        } catch (const InputError&) { // too many events to record: the marks are left out
        }
    }

    // The peaks, then the categories that differ most (at least 1 MiB and 5 % of the peak).
    const Bytes measured = cmp.measuredPeakAllocatedBytes, predictedAlloc = cmp.predictedAllocatedBytes;
    cmp.explanations.push_back("Peak allocated: measured " + formatBytes(measured) + " ("
        + std::string(toString(cmp.measuredPeakPhase)) + ") against " + formatBytes(predictedAlloc) + " predicted ("
        + std::string(toString(cmp.predictedPeakPhase)) + ")" + percent(measured, predictedAlloc) + ".");
    const Bytes slack = cmp.measuredPeakReservedBytes - measured;
    cmp.explanations.push_back("The allocator reserved " + formatBytes(cmp.measuredPeakReservedBytes) + " at most, "
        + formatBytes(slack) + " above the allocated peak (cached and fragmented segments); "
        + (report.allocatorReplayed
                ? "the caching-allocator replay predicts " + formatBytes(report.peakReservedBytes) + " reserved at most"
                : "the scenario assumes " + formatBytes(rounding) + " of allocator rounding")
        + (context > 0
                ? ", and the " + formatBytes(context) + " CUDA context is outside the allocator (not in a snapshot)"
                : "")
        + ".");
    std::vector<SnapshotCategoryComparison> sorted = cmp.categories;
    std::stable_sort(sorted.begin(), sorted.end(),
        [](const auto& a, const auto& b) { return std::llabs(a.differenceBytes()) > std::llabs(b.differenceBytes()); });
    const Bytes threshold = std::max<Bytes>(kMiB, std::max(measured, predictedAlloc) / 20);
    for (const SnapshotCategoryComparison& c : sorted) {
        if (std::llabs(c.differenceBytes()) < threshold)
            break;
        const bool more = c.differenceBytes() > 0;
        cmp.explanations.push_back(std::string(snapshotCategoryLabel(c.category)) + ": measured "
            + formatBytes(c.measuredBytes) + ", predicted " + formatBytes(c.predictedBytes) + " (" + (more ? "+" : "-")
            + formatBytes(std::llabs(c.differenceBytes())) + "): " + why(c.category, more, cmp) + ".");
    }
    return cmp;
}

} // namespace vramlab
