// SPDX-License-Identifier: MIT
#include "plan_table.h"

#include "stable_height_label.h"

#include <QGridLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>

namespace vramlab {

PlanFitRow addPlanFitRow(QGridLayout* grid, int row, QWidget* parent, std::function<void()> apply)
{
    PlanFitRow r { new QLabel(parent), new StableHeightLabel(parent),
        new QPushButton(QStringLiteral("Apply"), parent) };
    r.answer->setTextInteractionFlags(Qt::TextSelectableByMouse);
    r.answer->setWordWrap(true); // a long answer wraps, the window stays narrow (issue 16)
    r.apply->setToolTip(QStringLiteral("Set this value in the scenario (undoable)"));
    QObject::connect(r.apply, &QPushButton::clicked, parent, std::move(apply));
    grid->addWidget(r.name, row, 0);
    grid->addWidget(r.answer, row, 1);
    grid->addWidget(r.apply, row, 2);
    grid->setColumnStretch(1, 1);
    return r;
}

QTableWidget* newPlanTable(
    const QStringList& headers, QPushButton* applyButton, QWidget* parent, std::function<void(int)> applyRow)
{
    auto* table = new QTableWidget(0, int(headers.size()), parent);
    table->setHorizontalHeaderLabels(headers);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setSelectionMode(QAbstractItemView::SingleSelection);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->setWordWrap(false);
    table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table->horizontalHeader()->setStretchLastSection(true);
    applyButton->setEnabled(false);
    QObject::connect(table, &QTableWidget::itemSelectionChanged, applyButton,
        [table, applyButton] { applyButton->setEnabled(!table->selectionModel()->selectedRows().isEmpty()); });
    QObject::connect(table, &QTableWidget::cellDoubleClicked, parent, [applyRow](int row, int) { applyRow(row); });
    QObject::connect(applyButton, &QPushButton::clicked, parent, [table, applyRow] {
        const auto rows = table->selectionModel()->selectedRows();
        if (!rows.isEmpty())
            applyRow(rows.front().row());
    });
    return table;
}

} // namespace vramlab
