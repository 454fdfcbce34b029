// SPDX-License-Identifier: MIT
#include "breakdown_table.h"

#include "breakdown_model.h"

#include <QHeaderView>

namespace vramlab {

BreakdownTable::BreakdownTable(QWidget* parent)
    : QTreeView(parent)
    , m_model(new BreakdownModel(this))
{
    setModel(m_model);
    // Every column at its contents' width, names first: at 1280x720 a stretched name column
    // was squeezed to "Master..." by the numbers; now a narrow pane scrolls the share instead.
    header()->setMinimumSectionSize(60);
    header()->setStretchLastSection(true);
    for (int c = BreakdownModel::ComponentColumn; c < BreakdownModel::ColumnCount; ++c)
        header()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    setRootIsDecorated(true);
    setAlternatingRowColors(true);
    setUniformRowHeights(true);
    setEditTriggers(QAbstractItemView::NoEditTriggers);
}

void BreakdownTable::setReport(const Report* r)
{
    const QString acts = QStringLiteral("activations");
    const bool wasExpanded = isExpanded(m_model->indexOfKey(acts));
    m_model->setReport(r);
    setExpanded(m_model->indexOfKey(acts), wasExpanded);
}

} // namespace vramlab
