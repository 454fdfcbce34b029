// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/report.h"
#include "vramlab/scenario.h"

#include <memory>

namespace vramlab {

/// Checks the keys against each other (heads and parallel sizes that divide, ...);
/// throws InputError naming the key path. readScenario() already checked each key alone.
void validateScenario(const Scenario& scenario);
void validateRun(const ModelSpec& model, const RunSpec& run);

/// What the verdict, the fit solvers and the planner let a peak use: run.gpu's memory less
/// run.safety_margin of it (rounded up); 0 without a GPU.
Bytes usableBytes(const RunSpec& run);

struct EstimateOptions {
    /// Formulas and the per-tensor activation list; off for sweeps, fits and planners,
    /// which need only the bytes (several times faster).
    bool explain = true;
    /// Keep step 2's events (with explain): the window's Timeline draws them instead of
    /// simulating the step again; the CLI's estimate does not pay for them.
    bool recordTimeline = false;
    /// Training: replay the step tensor by tensor through the model of PyTorch's caching
    /// allocator (allocation_trace.h) and fill Report::peakAllocatedBytes, peakReservedBytes,
    /// peakDeviceBytes and allocatorOutOfMemory. It changes no component, total, peak or
    /// verdict: PyTorch releases its cached blocks and retries before it raises out of memory,
    /// so reserved memory above the GPU is not an OOM by itself, and the verdict stays the live
    /// peak against the GPU less run.safety_margin. Views that show one report turn it on;
    /// sweeps, fit solvers and the planner keep the lean path (it costs ~100x an estimate).
    bool replayAllocator = false;
};

/// Scenario in, report out: memory per GPU by component with formulas, FLOPs, step time
/// and the verdict. Throws InputError on an inconsistent scenario and SizeOverflow on
/// one whose sizes do not fit in 63 bits.
Report estimate(const Scenario& scenario, const EstimateOptions& options = {});
/// Reuses, between calls on the same ModelSpec object, what only the model and the
/// run's precision, optimizer, parallelism and fine-tuning decide (parameter tensors,
/// per-stage model states), so a sweep over sizes computes only what moves. One per
/// loop, not shared between threads; the model must not change while it is used.
class EstimateCache {
public:
    EstimateCache();
    ~EstimateCache();
    EstimateCache(const EstimateCache&) = delete;
    EstimateCache& operator=(const EstimateCache&) = delete;
    /// The caller's promise (the planner's) that until holdActivations(false) the runs
    /// differ only in ZeRO stage and offload, which no saved tensor depends on: each
    /// stage's activations are computed once and reused.
    void holdActivations(bool on);
    struct Impl;
    Impl& impl() { return *m_impl; }

private:
    std::unique_ptr<Impl> m_impl;
};

/// The same for a model and run without a scenario document (no copy of it per call).
Report estimate(
    const ModelSpec& model, const RunSpec& run, const EstimateOptions& options = {}, EstimateCache* cache = nullptr);

} // namespace vramlab
