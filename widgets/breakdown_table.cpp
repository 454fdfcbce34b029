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
    // The numbers at their contents' width and the names in what is left: a narrow pane elides
    // a long name (its tooltip still says what it is) rather than scroll the share out of
    // sight (1280x720, issue 16). The page starts the table wide enough for every name.
    header()->setMinimumSectionSize(60);
    header()->setStretchLastSection(false);
    header()->setSectionResizeMode(BreakdownModel::ComponentColumn, QHeaderView::Stretch);
    for (int c = BreakdownModel::SizeColumn; c < BreakdownModel::ColumnCount; ++c)
        header()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    setTextElideMode(Qt::ElideRight);
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
