// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/report.h"

#include <QTreeWidget>

namespace vramlab {

/// Component, bytes and share of the total; the activations row expands into every
/// saved tensor (name, shape, count, bytes).
class BreakdownTable : public QTreeWidget {
    Q_OBJECT
public:
    explicit BreakdownTable(QWidget* parent = nullptr);
    void setReport(const Report* report);
    /// The table as CSV (component,bytes,share) for the clipboard.
    QString toCsv() const;
};

} // namespace vramlab
