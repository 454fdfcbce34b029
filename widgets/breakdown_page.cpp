// SPDX-License-Identifier: MIT
#include "breakdown_page.h"

#include "breakdown_table.h"
#include "scenario_document.h"
#include "stacked_bar_chart.h"

#include <QHBoxLayout>
#include <QSplitter>

namespace vramlab {

BreakdownPage::BreakdownPage(ScenarioDocument* document, QWidget* parent)
    : Page(document, parent)
    , m_chart(new StackedBarChart)
    , m_table(new BreakdownTable)
{
    setObjectName(QStringLiteral("breakdownPage"));
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(m_chart);
    split->addWidget(m_table);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    m_table->setMinimumWidth(240); // narrower, the names elide (small screens)
    // Equal at first, the chart taking 3/5 of any growth: at 1280x720 the table starts ~425 px
    // wide, room for every name and number.
    split->setSizes({ 500, 500 });
    layout->addWidget(split);
}

void BreakdownPage::setTheme(const PlotTheme& theme)
{
    m_chart->setTheme(theme);
}

void BreakdownPage::recompute()
{
    const ScenarioDocument* doc = document();
    const std::optional<Report>& rep = doc->report();
    m_chart->setColumns({ { QString::fromStdString(doc->scenario().model.name), rep, doc->error() } });
    m_table->setReport(rep ? &*rep : nullptr);
}

} // namespace vramlab
