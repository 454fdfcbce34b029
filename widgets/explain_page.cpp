// SPDX-License-Identifier: MIT
#include "explain_page.h"

#include "explain_view.h"
#include "scenario_document.h"

#include <QVBoxLayout>

namespace vramlab {

ExplainPage::ExplainPage(ScenarioDocument* document, QWidget* parent)
    : Page(document, parent)
    , m_view(new ExplainView)
{
    setObjectName(QStringLiteral("explainPage"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_view);
}

void ExplainPage::recompute()
{
    const std::optional<Report>& r = document()->report();
    // A hybrid state-space model served: the engine's budget is the answer, on the Serving tab.
    if (!r && document()->servingEstimate())
        return m_view->setReport(nullptr, document()->error(), QStringLiteral("Explained on the Serving tab"));
    m_view->setReport(r ? &*r : nullptr, document()->error());
}

} // namespace vramlab
