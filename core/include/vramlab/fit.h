// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/report.h"
#include "vramlab/scenario.h"
#include "vramlab/sweep.h"

#include <optional>

namespace vramlab {

/// The boundary a fit search found: `value` fits (its peak is within the GPU's memory)
/// and `value + step` does not (or `value` is the search's ceiling).
struct FitResult {
    SweepParam param;
    std::optional<Count> value; ///< empty: even the smallest value (the most GPUs) does not fit
    std::optional<Report> report; ///< at `value`
    std::optional<Report> nextReport; ///< at the first value that does not fit
    Count nextValue = 0;
    Count ceiling = 0; ///< largest value searched
};

/// Largest micro-batch or sequence length (or context/batch at inference) whose peak fits.
/// Needs run.gpu. Memory grows monotonically with these, so a doubling then a bisection
/// finds the boundary in O(log n) estimates.
FitResult fitMax(const Scenario& base, SweepParam param);

/// Fewest GPUs (a multiple of tensor x pipeline parallel) whose per-GPU peak fits, with
/// the rest of the scenario (ZeRO stage, offload) as it is.
FitResult fitMinGpus(const Scenario& base);

} // namespace vramlab
