// SPDX-License-Identifier: MIT
#include "vramlab/run_spec.h"

#include "vramlab/choice_names.h"

namespace vramlab {

std::string_view toString(Precision p)
{
    return nameOf(kPrecisionNames, p);
}
std::string_view toString(Optimizer o)
{
    return nameOf(kOptimizerNames, o);
}
std::string_view toString(Mode m)
{
    return nameOf(kModeNames, m);
}
std::string_view toString(AttentionImpl a)
{
    return nameOf(kAttentionNames, a);
}
std::string_view toString(FinetuneMethod f)
{
    return nameOf(kFinetuneNames, f);
}
std::string_view toString(Framework f)
{
    return nameOf(kFrameworkNames, f);
}
std::string_view toString(Nf4Format f)
{
    return nameOf(kNf4FormatNames, f);
}

std::string_view toString(Sharding s)
{
    return nameOf(kShardingNames, s);
}

std::string_view toString(FsdpWrap w)
{
    return nameOf(kFsdpWrapNames, w);
}

std::string_view toString(KbitPreparation k)
{
    return nameOf(kKbitPreparationNames, k);
}

std::string_view toString(LossKind l)
{
    return nameOf(kLossNames, l);
}
std::string_view toString(OptimizerImpl o)
{
    return nameOf(kOptimizerImplNames, o);
}

std::string_view toString(PipelineSchedule p)
{
    return nameOf(kPipelineScheduleNames, p);
}

std::string toString(const Checkpointing& c)
{
    if (c.kind == Checkpointing::Kind::Every)
        return "every " + std::to_string(c.every) + " layers";
    if (c.kind == Checkpointing::Kind::Layers)
        return "first " + std::to_string(c.every) + " layers";
    return std::string(nameOf(kCheckpointingNames, c.kind));
}

RunSpec defaultRunKeepingMachine(const RunSpec& before)
{
    RunSpec r;
    r.gpu = before.gpu;
    r.parallelism.gpus = before.parallelism.gpus;
    r.overheads = before.overheads;
    r.allocator = before.allocator;
    r.mfu = before.mfu;
    r.safetyMargin = before.safetyMargin;
    r.inference = before.inference;
    return r;
}

} // namespace vramlab
