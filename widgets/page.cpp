// SPDX-License-Identifier: MIT
#include "page.h"

#include "scenario_document.h"

#include <QEvent>

namespace vramlab {

Page::Page(ScenarioDocument* document, QWidget* parent)
    : QWidget(parent)
    , m_doc(document)
{
    connect(m_doc, &ScenarioDocument::changed, this, &Page::markStale);
}

QVector<Scenario> Page::chartScenarios(QStringList* labels) const
{
    Q_UNUSED(labels);
    return { m_doc->scenario() };
}

void Page::markStale()
{
    m_stale = true;
    // The tab on show follows every edit; the others wait until they are shown.
    if (isVisibleTo(window()))
        refresh();
}

void Page::refresh()
{
    if (!m_stale)
        return;
    m_stale = false;
    recompute();
}

bool Page::event(QEvent* event)
{
    // ShowToParent: made the current tab (even in a hidden window); Show: the window appeared.
    if (event->type() == QEvent::ShowToParent || event->type() == QEvent::Show)
        refresh();
    return QWidget::event(event);
}

} // namespace vramlab
