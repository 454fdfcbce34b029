// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/scenario.h"

#include <QString>
#include <QStringList>
#include <QVariant>
#include <QVector>

#include <functional>

namespace vramlab {

/// One control of the parameter panel: what it edits in the scenario, its limits, unit
/// and tooltip. The panel, the undo commands and the tests all go through this table,
/// so every parameter behaves the same way.
struct ParamDescriptor {
    enum class Kind {
        Integer, ///< slider + spin box, linear
        LogInteger, ///< slider on a log2 scale + spin box
        Real, ///< spin box with decimals (slider on a log scale when logScale)
        Choice, ///< combo box over `choices` (values) shown as `choiceLabels`
        Toggle, ///< check box
        Text, ///< line edit (a list of names, comma-separated)
    };
    QString key; ///< "run.sequence_length"
    QString group; ///< panel section
    QString label;
    QString unit; ///< "tokens", "GPUs", "B params", ...
    QString tooltip; ///< what it does
    Kind kind = Kind::Integer;
    double min = 0, max = 0;
    int decimals = 0;
    QStringList choices, choiceLabels;
    /// Integer, Real: min - 1 leaves an optional key unset and is shown as this text ("auto").
    QString unsetText;
    /// In a group of rarely used keys, collapsed by default; the row hides where it does not apply.
    bool advanced = false;
    std::function<QVariant(const Scenario&)> get;
    std::function<void(Scenario&, const QVariant&)> set;
    /// Whether the control applies to this scenario (e.g. LoRA rank only with LoRA).
    std::function<bool(const Scenario&)> applies;
};

/// Every parameter the panel offers, in display order.
const QVector<ParamDescriptor>& parameterDescriptors();
const ParamDescriptor* findDescriptor(const QString& key);

} // namespace vramlab
