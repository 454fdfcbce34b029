// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/scenario.h"
#include "vramlab/serving_fit.h"
#include "vramlab/serving_plan.h"

#include <QWidget>

#include <optional>

class QLabel;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace vramlab {

/// The Plan tab of a serving scenario: "how do I serve C users at L tokens on my GPUs, and
/// how fast?". The serving fit solvers (most requests, longest context, fewest GPUs; for
/// llama.cpp the layers on the GPU) and the serving planner's deployments (tensor x
/// pipeline x data-parallel replicas, KV dtype) against the target and the speed limits.
/// Applying a fit or a fitting row hands the changed run back (one undoable edit there);
/// a row that does not fit says why and cannot be applied.
class ServingPlanView : public QWidget {
    Q_OBJECT
public:
    explicit ServingPlanView(QWidget* parent = nullptr);

    /// Recomputes for `scenario`; the GPU count and the context follow it, the requests and
    /// the limits stay as the user set them.
    void setScenario(const Scenario& scenario);

    const ServingPlanResult& result() const { return m_result; }
    const ServingPlanRequest& request() const { return m_request; }
    QTableWidget* table() const { return m_table; }
    QString fitText(int row) const;
    QString summaryText() const;
    /// The target controls, for tests: GPUs, requests, context, prompt, max TPOT (ms),
    /// max TTFT (ms), min tokens/s, rows shown.
    enum Control { Gpus, Requests, Context, Prompt, MaxTpotMs, MaxTtftMs, MinTokensPerS, Show, ControlCount };
    QSpinBox* control(Control c) const { return m_controls[c]; }
    /// Applies ranked row `row` (0-based; unfit rows are not applied) or fit `row`.
    void applyRow(int row);
    void applyFit(int row);

signals:
    void applyRun(const vramlab::RunSpec& run, const QString& what);

private:
    void replan();
    void refit();

    Scenario m_scenario;
    ServingPlanRequest m_request;
    ServingPlanResult m_result;
    QSpinBox* m_controls[ControlCount];
    QLabel* m_fitNames[3];
    QLabel* m_fitLabels[3];
    QPushButton* m_fitApply[3];
    std::optional<RunSpec> m_fitRuns[3];
    QString m_fitWhat[3];
    QLabel* m_summary;
    QTableWidget* m_table;
    QPushButton* m_apply;
    bool m_syncing = false;
};

} // namespace vramlab
