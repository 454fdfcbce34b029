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
    header()->setSectionResizeMode(BreakdownModel::ComponentColumn, QHeaderView::Stretch);
    header()->setMinimumSectionSize(60);
    for (int c = BreakdownModel::SizeColumn; c < BreakdownModel::ColumnCount; ++c)
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
