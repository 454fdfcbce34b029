// SPDX-License-Identifier: MIT
#pragma once

#include "page.h"

class QStackedWidget;

namespace vramlab {

class PlanView;
class ServingPlanView;

/// The fit solvers and the planner's ranked setups for the document: PlanView for a
/// training scenario, ServingPlanView for a serving one. Applying one is one undoable edit
/// of the document.
class PlanPage : public Page {
    Q_OBJECT
public:
    explicit PlanPage(ScenarioDocument* document, QWidget* parent = nullptr);
    QString title() const override { return QStringLiteral("Plan"); }
    /// File > Export writes the ranked table as shown (exportTable): .csv or .md.
    ChartKind chartKind() const override { return ChartKind::Plan; }
    PlanView* view() const { return m_view; }
    ServingPlanView* servingView() const { return m_servingView; }
    /// Whether the table on show has rows to export.
    bool hasTable() const;
    /// Writes the table on show (training or serving plan) as .csv or .md.
    bool exportTable(const QString& path, QString* error) const;

protected:
    void recompute() override;

private:
    bool serving() const;

    QStackedWidget* m_stack;
    PlanView* m_view;
    ServingPlanView* m_servingView;
};

} // namespace vramlab
