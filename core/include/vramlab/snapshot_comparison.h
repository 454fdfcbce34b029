// SPDX-License-Identifier: MIT
#pragma once
// A measured step (a PyTorch memory snapshot) beside VRAM Lab's simulated one: the peaks,
// the bytes of each category at each peak, and the biggest differences in words. Value
// types only, so the CLI prints them and a chart can draw both curves on one step axis.

#include "vramlab/memory_snapshot.h"
#include "vramlab/report.h"

#include <string>
#include <string_view>
#include <vector>

namespace vramlab {

struct SnapshotCategoryComparison {
    SnapshotCategory category = SnapshotCategory::Other;
    Bytes measuredBytes = 0; ///< alive at the measured peak
    Bytes predictedBytes = 0; ///< alive at the simulated peak
    Bytes differenceBytes() const { return measuredBytes - predictedBytes; }
};

/// Where a phase begins in the simulated step, as a fraction of its events (0 to 1).
struct PredictedPhaseMark {
    StepPhase phase = StepPhase::Start;
    double stepFraction = 0;
};

struct SnapshotComparison {
    std::string scenarioName;
    int device = 0; ///< the measured device compared (the busiest)
    Bytes measuredPeakAllocatedBytes = 0;
    Bytes measuredPeakReservedBytes = 0;
    SnapshotPhase measuredPeakPhase = SnapshotPhase::Unknown;
    Bytes predictedPeakBytes = 0; ///< the report's peak (CUDA context and allocator rounding included)
    Bytes predictedAllocatedBytes = 0; ///< what PyTorch would count as allocated: peak - context - allocator rounding
    Bytes predictedReservedBytes = 0; ///< what the allocator would reserve: peak - context
    StepPhase predictedPeakPhase = StepPhase::Start;
    std::vector<SnapshotCategoryComparison> categories; ///< the six measured categories, in order
    std::vector<std::string> explanations; ///< the biggest differences first, in words
    std::vector<PredictedPhaseMark> predictedPhases; ///< to align the measured curve phase by phase
};

/// Compares the busiest device of `snapshot` with `report` (an estimate of a training
/// scenario: its simulated step; for inference only the totals are compared).
SnapshotComparison compareSnapshot(const MemorySnapshot& snapshot, const Report& report);

} // namespace vramlab
