// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/report.h"
#include "vramlab/scenario.h"

#include <array>
#include <string>
#include <string_view>
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
/// Every key a sweep or fit can vary, in the order offered to users.
std::vector<SweepParam> sweepParams();
struct ScenarioField;
const ScenarioField& sweepField(SweepParam p);
/// The scenario with one key set.
Scenario withValue(const Scenario& base, SweepParam p, Count value);
void setValue(RunSpec& run, SweepParam p, Count value);
Count valueOf(const Scenario& sc, SweepParam p);

/// One sampled value and the report's numbers a chart or a table needs (about 100 bytes,
/// not a Report with its strings: a million points fit in about 100 MB).
struct SweepPoint {
    Count value = 0;
    std::array<Bytes, kReportComponents.size()> componentBytes {}; ///< in kReportComponents order
    Bytes total = 0; ///< sum of the components
    Bytes peak = 0; ///< highest point of the simulated step (training), else total
    Bytes usableBytes = 0; ///< the GPU's memory less the margin (0 without a GPU)
    double flopsPerStep = 0;
    bool fits = true; ///< meaningful only with hasVerdict
    bool hasVerdict = false;
    bool lowerBound = false; ///< the peak is only a lower bound (Report::lowerBound): "fits" may not hold

    SweepPoint() = default;
    SweepPoint(Count value, const Report& report);
    Bytes bytes(ComponentKind kind) const;
    Bytes bytesOf(std::string_view key) const; ///< a component's key or "total"
    const char* fitsCsv() const { return !hasVerdict ? "" : fits ? "true" : "false"; }
};

/// Evaluates `points` values from `from` to `to` (inclusive), evenly spaced, or
/// geometrically when `logScale`; duplicates after rounding are dropped.
std::vector<SweepPoint> sweep(
    const Scenario& base, SweepParam p, Count from, Count to, int points, bool logScale = false);

} // namespace vramlab
