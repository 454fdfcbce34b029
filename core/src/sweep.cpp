// SPDX-License-Identifier: MIT
#include "vramlab/sweep.h"

#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/scenario_fields.h"

#include <cmath>

namespace vramlab {

namespace {
/// The keys a sweep, a fit and the planner vary; what they are (range, unit, accessor) is
/// the scenario field table's.
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

std::vector<SweepParam> sweepParams()
{
    std::vector<SweepParam> all;
    for (const ParamName& n : kParams)
        all.push_back(n.p);
    return all;
}

const ScenarioField& sweepField(SweepParam p)
{
    return *findField(keyPathOf(p));
}

Scenario withValue(const Scenario& base, SweepParam p, Count v)
{
    Scenario s = base;
    sweepField(p).set(s, v);
    return s;
}

void setValue(RunSpec& r, SweepParam p, Count v)
{
    // Every sweepable key is a run key: a scratch scenario around the run reaches it.
    Scenario s;
    s.run = std::move(r);
    sweepField(p).set(s, v);
    r = std::move(s.run);
}

Count valueOf(const Scenario& s, SweepParam p)
{
    return std::get<Count>(sweepField(p).get(s));
}

SweepPoint::SweepPoint(Count v, const Report& r)
    : value(v)
    , total(r.total)
    , peak(r.peak)
    , usableBytes(r.usableBytes)
    , flopsPerStep(r.flops.perStep)
    , fits(r.fits)
    , hasVerdict(r.hasVerdict)
    , lowerBound(!r.lowerBound.empty())
{
    // The estimator lists the components in kReportComponents order: take them by index
    // when they are there, by key otherwise.
    for (size_t i = 0; i < kReportComponents.size(); ++i) {
        const std::string_view key = componentKey(kReportComponents[i]);
        // Both keys come from kComponents: the same pointer, unless a report was made elsewhere.
        const bool inPlace
            = i < r.components.size() && (r.components[i].key.data() == key.data() || r.components[i].key == key);
        componentBytes[i] = inPlace ? r.components[i].bytes : r.bytesOf(key);
    }
}

Bytes SweepPoint::bytes(ComponentKind kind) const
{
    for (size_t i = 0; i < kReportComponents.size(); ++i)
        if (kReportComponents[i] == kind)
            return componentBytes[i];
    return 0;
}

Bytes SweepPoint::bytesOf(std::string_view key) const
{
    if (key == "total")
        return total;
    const ComponentInfo* c = findComponent(key);
    return c ? bytes(c->kind) : 0;
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
    Scenario scratch; // the run is copied once, the swept key set in place
    scratch.run = base.run;
    const ScenarioField& field = sweepField(p);
    EstimateCache cache;
    for (int i = 0; i < points; ++i) {
        const double f = points == 1 ? 0.0 : static_cast<double>(i) / (points - 1);
        const double v = logScale
            ? std::exp(std::log(double(from)) + f * (std::log(double(to)) - std::log(double(from))))
            : double(from) + f * double(to - from);
        const Count value = static_cast<Count>(std::llround(v));
        if (!out.empty() && out.back().value == value)
            continue;
        field.set(scratch, value);
        out.emplace_back(value, estimate(base.model, scratch.run, lean, &cache));
    }
    return out;
}

} // namespace vramlab
