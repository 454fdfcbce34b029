// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/planner.h"
#include "vramlab/scenario.h"

#include <QWidget>

class QLabel;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace vramlab {

/// "What is the fastest way to run this on the GPUs I have?": the fit solvers (largest
/// micro-batch, longest sequence, fewest GPUs) and the planner's ranked setups. Applying a
/// row or a fit hands the changed run back to the window (one undoable edit there).
class PlanView : public QWidget {
    Q_OBJECT
public:
    explicit PlanView(QWidget* parent = nullptr);

    /// Recomputes fits and plan for `scenario`; GPU count and global batch follow it.
    void setScenario(const Scenario& scenario);
    void setGpus(Count gpus);
    void setGlobalBatch(Count sequences);

    const PlanResult& result() const { return m_result; }
    QTableWidget* table() const { return m_table; }
    /// The fit answers as shown ("largest micro-batch: 6 (peak ...)").
    QString fitText(int row) const;
    /// Applies ranked row `row` (0-based) or fit `row` (0: micro-batch, 1: sequence, 2: GPUs).
    void applyRow(int row);
    void applyFit(int row);

signals:
    void applyRun(const vramlab::RunSpec& run, const QString& what);

private:
    void replan();

    Scenario m_scenario;
    PlanResult m_result;
    QString m_error;
    QSpinBox* m_gpus;
    QSpinBox* m_globalBatch;
    QSpinBox* m_topK;
    QLabel* m_fitLabels[3];
    QPushButton* m_fitApply[3];
    std::optional<Count> m_fitValues[3];
    QLabel* m_summary;
    QTableWidget* m_table;
    QPushButton* m_apply;
    bool m_syncing = false;
};

} // namespace vramlab
