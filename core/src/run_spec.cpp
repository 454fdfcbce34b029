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
std::string_view toString(LossKind l)
{
    return nameOf(kLossNames, l);
}
std::string_view toString(OptimizerImpl o)
{
    return nameOf(kOptimizerImplNames, o);
}

std::string toString(const Checkpointing& c)
{
    switch (c.kind) {
    case Checkpointing::Kind::None:
        return "none";
    case Checkpointing::Kind::Full:
        return "full";
    case Checkpointing::Kind::Selective:
        return "selective";
    case Checkpointing::Kind::Every:
        return "every " + std::to_string(c.every) + " layers";
    case Checkpointing::Kind::SelectiveOp:
        return "selective-op";
    }
    return "?";
}

} // namespace vramlab
