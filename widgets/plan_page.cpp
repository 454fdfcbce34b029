// SPDX-License-Identifier: MIT
#include "plan_page.h"

#include "plan_view.h"
#include "scenario_document.h"

#include <QVBoxLayout>

namespace vramlab {

PlanPage::PlanPage(ScenarioDocument* document, QWidget* parent)
    : Page(document, parent)
    , m_view(new PlanView)
{
    setObjectName(QStringLiteral("planPage"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_view);
    connect(m_view, &PlanView::applyRun, this, [this](const RunSpec& run, const QString& what) {
        Scenario sc = this->document()->scenario();
        sc.run = run;
        this->document()->replaceScenario(sc, what);
    });
}

void PlanPage::recompute()
{
    m_view->setScenario(document()->scenario());
}

} // namespace vramlab
