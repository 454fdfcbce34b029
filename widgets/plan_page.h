// SPDX-License-Identifier: MIT
#pragma once

#include "page.h"

namespace vramlab {

class PlanView;

/// The fit solvers and the planner's ranked setups for the document (PlanView); applying
/// one is one undoable edit of the document.
class PlanPage : public Page {
    Q_OBJECT
public:
    explicit PlanPage(ScenarioDocument* document, QWidget* parent = nullptr);
    QString title() const override { return QStringLiteral("Plan"); }
    /// File > Export writes the ranked table as shown (exportPlan): .csv or .md.
    ChartKind chartKind() const override { return ChartKind::Plan; }
    PlanView* view() const { return m_view; }

protected:
    void recompute() override;

private:
    PlanView* m_view;
};

} // namespace vramlab
