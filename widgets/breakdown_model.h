// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/report.h"

#include <QAbstractItemModel>
#include <QColor>
#include <QStringList>
#include <QVector>

namespace vramlab {

/// The breakdown as a tree: one row per component (component, size, bytes, share), the
/// activations expanding into every saved tensor and the overhead into its parts, then the
/// total. Rows are found by their key (KeyRole), never by position.
class BreakdownModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { ComponentColumn, SizeColumn, BytesColumn, ShareColumn, ColumnCount };
    enum Role {
        KeyRole = Qt::UserRole + 1, ///< "weights", ..., "overhead", "total"; a child: its tensor or part name
        BytesRole, ///< the row's bytes (qlonglong)
    };

    explicit BreakdownModel(QObject* parent = nullptr);

    /// Rebuilds the rows from `report` (nullptr: no rows).
    void setReport(const Report* report);
    /// The top-level row of a component key ("activations", "total"), or an invalid index.
    QModelIndex indexOfKey(const QString& key) const;

    QModelIndex index(int row, int column, const QModelIndex& parent = QModelIndex()) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row {
        QString key;
        QString label;
        Bytes bytes = 0;
        QString toolTip;
        QColor swatch; ///< invalid: no swatch
        bool bold = false;
        QVector<Row> children;
    };
    const Row* rowAt(const QModelIndex& index) const;

    QVector<Row> m_rows;
    Bytes m_total = 0;
};

} // namespace vramlab
