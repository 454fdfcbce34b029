// SPDX-License-Identifier: MIT
#include "vramlab/sweep.h"

#include "vramlab/errors.h"
#include "vramlab/estimator.h"

#include <cmath>

namespace vramlab {

namespace {
struct ParamName {
    SweepParam p;
    const char* key;
};
constexpr ParamName kParams[] = {
    { SweepParam::SequenceLength, "run.sequence_length" },
    { SweepParam::MicroBatchSize, "run.micro_batch_size" },
    { SweepParam::GradientAccumulation, "run.gradient_accumulation_steps" },
    { SweepParam::Gpus, "run.parallelism.gpus" },
    { SweepParam::ContextLength, "run.context_length" },
    { SweepParam::BatchSize, "run.batch_size" },
    { SweepParam::LoraRank, "run.finetune.rank" },
};
} // namespace

SweepParam parseSweepParam(const std::string& keyPath, const std::string& optionName)
{
    std::string names;
    for (const ParamName& n : kParams) {
        if (keyPath == n.key)
            return n.p;
        names += (names.empty() ? "" : ", ") + std::string(n.key);
    }
    throw InputError(optionName, "expected one of " + names + ", got \"" + keyPath + "\"");
}

std::string keyPathOf(SweepParam p)
{
    for (const ParamName& n : kParams)
        if (n.p == p)
            return n.key;
    return "?";
}

Scenario withValue(const Scenario& base, SweepParam p, Count v)
{
    Scenario s = base;
    setValue(s.run, p, v);
    return s;
}

void setValue(RunSpec& r, SweepParam p, Count v)
{
    switch (p) {
    case SweepParam::SequenceLength:
        r.sequenceLength = v;
        break;
    case SweepParam::MicroBatchSize:
        r.microBatchSize = v;
        break;
    case SweepParam::GradientAccumulation:
        r.gradientAccumulationSteps = v;
        break;
    case SweepParam::Gpus:
        r.parallelism.gpus = v;
        break;
    case SweepParam::ContextLength:
        r.inference.contextLength = v;
        break;
    case SweepParam::BatchSize:
        r.inference.batchSize = v;
        break;
    case SweepParam::LoraRank:
        r.finetune.rank = v;
        break;
    }
}

Count valueOf(const Scenario& s, SweepParam p)
{
    const RunSpec& r = s.run;
    switch (p) {
    case SweepParam::SequenceLength:
        return r.sequenceLength;
    case SweepParam::MicroBatchSize:
        return r.microBatchSize;
    case SweepParam::GradientAccumulation:
        return r.gradientAccumulationSteps;
    case SweepParam::Gpus:
        return r.parallelism.gpus;
    case SweepParam::ContextLength:
        return r.inference.contextLength;
    case SweepParam::BatchSize:
        return r.inference.batchSize;
    case SweepParam::LoraRank:
        return r.finetune.rank;
    }
    return 0;
}

std::vector<SweepPoint> sweep(const Scenario& base, SweepParam p, Count from, Count to, int points, bool logScale)
{
    if (from < 1)
        throw InputError("--from", "expected a value of at least 1, got " + std::to_string(from));
    if (to < from)
        throw InputError(
            "--to", "expected a value of at least --from (" + std::to_string(from) + "), got " + std::to_string(to));
    if (points < 1 || points > 1'000'000)
        throw InputError("--points", "expected 1 to 1,000,000 points, got " + std::to_string(points));
    std::vector<SweepPoint> out;
    out.reserve(static_cast<size_t>(points));
    validateScenario(base);
    const EstimateOptions lean { false };
    RunSpec run = base.run; // one copy, the swept key set in place
    EstimateCache cache;
    for (int i = 0; i < points; ++i) {
        const double f = points == 1 ? 0.0 : static_cast<double>(i) / (points - 1);
        const double v = logScale
            ? std::exp(std::log(double(from)) + f * (std::log(double(to)) - std::log(double(from))))
            : double(from) + f * double(to - from);
        const Count value = static_cast<Count>(std::llround(v));
        if (!out.empty() && out.back().value == value)
            continue;
        setValue(run, p, value);
        out.push_back({ value, estimate(base.model, run, lean, &cache) });
        out.back().report.scenarioName = base.name;
    }
    return out;
}

} // namespace vramlab
