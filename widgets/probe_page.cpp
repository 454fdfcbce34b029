// SPDX-License-Identifier: MIT
#include "probe_page.h"

#include "probe_view.h"
#include "scenario_document.h"

#include <QVBoxLayout>

namespace vramlab {

ProbePage::ProbePage(ScenarioDocument* document, QWidget* parent)
    : Page(document, parent)
    , m_view(new ProbeView)
{
    setObjectName(QStringLiteral("probePage"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_view);
}

void ProbePage::recompute()
{
    m_view->setScenario(document()->scenario());
}

} // namespace vramlab
