// SPDX-License-Identifier: MIT
#include "plan_page.h"

#include "chart_export.h"
#include "plan_view.h"
#include "scenario_document.h"
#include "serving_plan_view.h"

#include <QStackedWidget>
#include <QVBoxLayout>

namespace vramlab {

PlanPage::PlanPage(ScenarioDocument* document, QWidget* parent)
    : Page(document, parent)
    , m_stack(new QStackedWidget)
    , m_view(new PlanView)
    , m_servingView(new ServingPlanView)
{
    setObjectName(QStringLiteral("planPage"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_stack->addWidget(m_view);
    m_stack->addWidget(m_servingView);
    layout->addWidget(m_stack);
    auto apply = [this](const RunSpec& run, const QString& what) {
        Scenario sc = this->document()->scenario();
        sc.run = run;
        this->document()->replaceScenario(sc, what);
    };
    connect(m_view, &PlanView::applyRun, this, apply);
    connect(m_servingView, &ServingPlanView::applyRun, this, apply);
}

bool PlanPage::serving() const
{
    return m_stack->currentWidget() == m_servingView;
}

bool PlanPage::hasTable() const
{
    return serving() ? m_servingView->result().evaluated > 0 : m_view->result().evaluated > 0;
}

bool PlanPage::exportTable(const QString& path, QString* error) const
{
    return serving() ? exportServingPlan(m_servingView->result(), path, error)
                     : exportPlan(m_view->result(), path, error);
}

void PlanPage::recompute()
{
    // Only the view on show computes: a serving scenario has no training plan, and back.
    const Scenario& sc = document()->scenario();
    if (sc.run.serving) {
        m_stack->setCurrentWidget(m_servingView);
        m_servingView->setScenario(sc);
    } else {
        m_stack->setCurrentWidget(m_view);
        m_view->setScenario(sc);
    }
}

} // namespace vramlab
