// SPDX-License-Identifier: MIT
#pragma once

#include <QStringList>

#include <functional>

class QGridLayout;
class QLabel;
class QPushButton;
class QTableWidget;
class QWidget;

namespace vramlab {

/// One fit solver's line on a Plan tab: its name, its answer (wrapping, so the window stays
/// narrow) and an Apply button.
struct PlanFitRow {
    QLabel* name;
    QLabel* answer;
    QPushButton* apply;
};

/// Adds fit row `row` to `grid` (column 1 stretches); `apply` runs when its button is clicked.
PlanFitRow addPlanFitRow(QGridLayout* grid, int row, QWidget* parent, std::function<void()> apply);

/// A ranked-setups table: whole rows selected one at a time, read-only, columns sized to their
/// contents with the last one stretched; `applyButton` is enabled while a row is selected and
/// applies it, as a double-click does (`applyRow` gets the row).
QTableWidget* newPlanTable(
    const QStringList& headers, QPushButton* applyButton, QWidget* parent, std::function<void(int)> applyRow);

} // namespace vramlab
