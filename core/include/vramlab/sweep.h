// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/report.h"
#include "vramlab/scenario.h"

#include <string>
#include <vector>

namespace vramlab {

/// Integer scenario keys a sweep or a fit can vary, by their key path.
enum class SweepParam {
    SequenceLength,
    MicroBatchSize,
    GradientAccumulation,
    Gpus,
    ContextLength,
    BatchSize,
    LoraRank
};

/// "run.sequence_length" -> SweepParam; throws InputError naming `keyPath`'s option.
SweepParam parseSweepParam(const std::string& keyPath, const std::string& optionName = "--param");
std::string keyPathOf(SweepParam p);
/// The scenario with one key set.
Scenario withValue(const Scenario& base, SweepParam p, Count value);
void setValue(RunSpec& run, SweepParam p, Count value);
Count valueOf(const Scenario& sc, SweepParam p);

struct SweepPoint {
    Count value = 0;
    Report report;
};

/// Evaluates `points` values from `from` to `to` (inclusive), evenly spaced, or
/// geometrically when `logScale`; duplicates after rounding are dropped.
std::vector<SweepPoint> sweep(
    const Scenario& base, SweepParam p, Count from, Count to, int points, bool logScale = false);

} // namespace vramlab
