// SPDX-License-Identifier: MIT
#pragma once

// How the parameter panel's controls are made (parameter_descriptors.cpp, advanced_parameters.cpp):
// most read and write one key of the core's field table, so a control accepts what a file does.

#include "parameter_descriptors.h"

#include "vramlab/gpu_catalog.h"

#include <nlohmann/json.hpp>

#include <utility>
#include <vector>

namespace vramlab {

using Applies = std::function<bool(const Scenario&)>;

/// The fields every descriptor has; get, set and applies are filled in by the caller.
ParamDescriptor describe(QString key, QString group, QString label, QString unit, QString tip,
    ParamDescriptor::Kind kind, double lo = 0, double hi = 0, int decimals = 0);

/// A custom GPU derived from the current one (or an H100), under its own name.
GpuSpec customGpu(const Scenario& s);

/// A scalar of a scenario file as the panel holds it (null: invalid, the key unset).
QVariant jsonToVariant(const nlohmann::json& v);

bool training(const Scenario& s);
bool inference(const Scenario& s); ///< one process: serving has the engine's own flags
bool always(const Scenario&);

/// A control over one key of the core's field table: reading and writing it is the table's
/// (the same code the files go through); the descriptor adds only how it is shown.
ParamDescriptor fieldControl(QString key, QString group, QString label, QString unit, QString tip,
    ParamDescriptor::Kind kind, double lo, double hi, Applies applies, int decimals = 0);

ParamDescriptor integer(QString key, QString group, QString label, QString unit, QString tip,
    ParamDescriptor::Kind kind, double lo, double hi, Applies applies = always);

ParamDescriptor toggle(QString key, QString group, QString label, QString tip, Applies applies = always);

/// The value of an enum option as the scenario file spells it: the core's own name, so
/// the panel, undo and files can never disagree.
template <typename E> QString valueName(E e)
{
    const std::string_view name = toString(e);
    return QString::fromUtf8(name.data(), qsizetype(name.size()));
}

/// A combo box over some of a choice field's values, each with the label shown.
template <typename E>
ParamDescriptor choice(QString key, QString group, QString label, QString tip,
    std::vector<std::pair<QString, E>> options, Applies applies = always)
{
    ParamDescriptor d = fieldControl(std::move(key), std::move(group), std::move(label), QString(), std::move(tip),
        ParamDescriptor::Kind::Choice, 0, 0, std::move(applies));
    for (const auto& [shown, e] : options) {
        d.choices << valueName(e);
        d.choiceLabels << shown;
    }
    return d;
}

/// A choice over an optional key: `shown` first, which leaves the key unset so that it keeps
/// its default (the framework's, the precision's).
ParamDescriptor withDefault(ParamDescriptor d, const QString& shown);
/// withDefault() for keys whose unset value follows run.framework.
ParamDescriptor withFrameworkDefault(ParamDescriptor d);

} // namespace vramlab
