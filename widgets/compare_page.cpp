// SPDX-License-Identifier: MIT
#include "compare_page.h"

#include "compare_view.h"
#include "scenario_document.h"
#include "vramlab/scenario_io.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QVBoxLayout>

namespace vramlab {

ComparePage::ComparePage(ScenarioDocument* document, QWidget* parent)
    : Page(document, parent)
    , m_view(new CompareView)
{
    setObjectName(QStringLiteral("comparePage"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_view);
    connect(m_view, &CompareView::useCurrentRequested, this, [this](int side) {
        m_view->setSide(side, this->document()->scenario(), QString::fromStdString(this->document()->scenario().name));
    });
    connect(m_view, &CompareView::openSideRequested, this, &ComparePage::openSide);
}

ChartKind ComparePage::chartKind() const
{
    return m_view->chartKind();
}

QVector<Scenario> ComparePage::chartScenarios(QStringList* labels) const
{
    return chartKind() == ChartKind::CompareFiles ? m_view->sides(labels) : Page::chartScenarios(labels);
}

void ComparePage::setTheme(const PlotTheme& theme)
{
    m_view->setTheme(theme);
}

void ComparePage::recompute()
{
    m_view->setScenario(document()->scenario());
}

void ComparePage::openSide(int side)
{
    const QString path = QFileDialog::getOpenFileName(this, QStringLiteral("Open scenario"), QString(),
        QStringLiteral("Scenario or Hugging Face config (*.json);;All files (*)"));
    if (path.isEmpty())
        return;
    try {
        m_view->setSide(side, loadScenarioFile(path.toStdString()), QFileInfo(path).completeBaseName());
    } catch (const std::exception& e) {
        emit failed(QString::fromUtf8(e.what()));
    }
}

} // namespace vramlab
