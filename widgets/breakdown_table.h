// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/report.h"

#include <QTreeView>

namespace vramlab {

class BreakdownModel;

/// Component, bytes and share of the total (a BreakdownModel); the activations row
/// expands into every saved tensor (name, shape, count, bytes).
class BreakdownTable : public QTreeView {
    Q_OBJECT
public:
    explicit BreakdownTable(QWidget* parent = nullptr);
    void setReport(const Report* report);
    BreakdownModel* breakdownModel() const { return m_model; }

private:
    BreakdownModel* m_model;
};

} // namespace vramlab
