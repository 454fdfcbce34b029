// SPDX-License-Identifier: MIT
#include "breakdown_model.h"

#include "vramlab/report_text.h"

#include "chart_support.h"
#include "plot_theme.h"

#include <QFont>
#include <QIcon>
#include <QLocale>
#include <QPixmap>

namespace vramlab {

namespace {

/// internalId of a top-level row; a child's is its parent's row + 1.
constexpr quintptr kTopLevel = 0;

} // namespace

BreakdownModel::BreakdownModel(QObject* parent)
    : QAbstractItemModel(parent)
{
}

void BreakdownModel::setReport(const Report* r)
{
    beginResetModel();
    m_rows.clear();
    m_total = r ? r->total : 0;
    if (r) {
        for (const char* key : kComponentKeys) {
            const Component* c = r->component(key);
            if (!c)
                continue;
            const QString k = QString::fromLatin1(key);
            Row row { k, componentLabel(k), c->bytes, QString::fromStdString(c->formula), PlotTheme::componentColor(k),
                false, {} };
            if (k == QLatin1String("activations")) {
                const QString per = r->microBatchesInFlight > 1
                    ? QStringLiteral(" (per micro-batch; x%1 in flight)").arg(r->microBatchesInFlight)
                    : QString();
                for (const ActivationTensor& t : r->activations.tensors) {
                    const QString name = QString::fromStdString(t.name);
                    row.children.push_back(
                        { name, name + (t.count > 1 ? QStringLiteral(" x%1").arg(t.count) : QString()), t.total(),
                            QString::fromStdString(t.shapeText()) + per, QColor(), false, {} });
                }
            }
            if (k == QLatin1String("overhead"))
                for (const Component& part : r->overheadParts) {
                    const QString label = QString::fromUtf8(part.label.data(), qsizetype(part.label.size()));
                    row.children.push_back({ label, label, part.bytes, QString(), QColor(), false, {} });
                }
            m_rows.push_back(std::move(row));
        }
        Row total { QStringLiteral("total"), QStringLiteral("Total"), r->total, QString(), QColor(), true, {} };
        // Under the total: the three peaks a GPU run reports (the allocator replay's; none without it).
        for (const CounterRow& c : counterRows(*r)) {
            const QString label = QString::fromUtf8(c.label.data(), qsizetype(c.label.size()));
            total.children.push_back({ QString::fromUtf8(c.key.data(), qsizetype(c.key.size())), label, c.bytes,
                QString::fromUtf8(c.what.data(), qsizetype(c.what.size())), QColor(), false, {} });
        }
        m_rows.push_back(std::move(total));
    }
    endResetModel();
}

QModelIndex BreakdownModel::indexOfKey(const QString& key) const
{
    for (int i = 0; i < m_rows.size(); ++i)
        if (m_rows[i].key == key)
            return index(i, 0);
    return {};
}

const BreakdownModel::Row* BreakdownModel::rowAt(const QModelIndex& index) const
{
    if (!index.isValid())
        return nullptr;
    if (index.internalId() == kTopLevel)
        return &m_rows[index.row()];
    return &m_rows[int(index.internalId() - 1)].children[index.row()];
}

QModelIndex BreakdownModel::index(int row, int column, const QModelIndex& parent) const
{
    if (!hasIndex(row, column, parent))
        return {};
    if (!parent.isValid())
        return createIndex(row, column, kTopLevel);
    return createIndex(row, column, quintptr(parent.row()) + 1);
}

QModelIndex BreakdownModel::parent(const QModelIndex& child) const
{
    if (!child.isValid() || child.internalId() == kTopLevel)
        return {};
    return createIndex(int(child.internalId() - 1), 0, kTopLevel);
}

int BreakdownModel::rowCount(const QModelIndex& parent) const
{
    if (!parent.isValid())
        return int(m_rows.size());
    if (parent.column() != 0 || parent.internalId() != kTopLevel)
        return 0; // two levels: tensors and parts have no children
    return int(m_rows[parent.row()].children.size());
}

int BreakdownModel::columnCount(const QModelIndex&) const
{
    return ColumnCount;
}

QVariant BreakdownModel::data(const QModelIndex& index, int role) const
{
    const Row* row = rowAt(index);
    if (!row)
        return {};
    const int col = index.column();
    switch (role) {
    case Qt::DisplayRole:
        switch (col) {
        case ComponentColumn:
            return row->label;
        case SizeColumn:
            return bytesText(row->bytes);
        case BytesColumn:
            return QLocale(QLocale::English).toString(qlonglong(row->bytes));
        case ShareColumn:
            if (row->bold)
                return QStringLiteral("100%");
            return m_total > 0 ? QStringLiteral("%1%").arg(100.0 * double(row->bytes) / double(m_total), 0, 'f', 1)
                               : QString();
        default:
            return {};
        }
    case Qt::TextAlignmentRole:
        return col == ComponentColumn ? QVariant() : QVariant(int(Qt::AlignRight | Qt::AlignVCenter));
    case Qt::ToolTipRole:
        return col == ComponentColumn && !row->toolTip.isEmpty() ? QVariant(row->toolTip) : QVariant();
    case Qt::DecorationRole: {
        if (col != ComponentColumn || !row->swatch.isValid())
            return {};
        QPixmap swatch(12, 12);
        swatch.fill(row->swatch);
        return QIcon(swatch);
    }
    case Qt::FontRole: {
        if (!row->bold)
            return {};
        QFont bold;
        bold.setBold(true);
        return bold;
    }
    case KeyRole:
        return row->key;
    case BytesRole:
        return qlonglong(row->bytes);
    default:
        return {};
    }
}

QVariant BreakdownModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case ComponentColumn:
        return QStringLiteral("Component");
    case SizeColumn:
        return QStringLiteral("Size");
    case BytesColumn:
        return QStringLiteral("Bytes");
    case ShareColumn:
        return QStringLiteral("Share");
    default:
        return {};
    }
}

} // namespace vramlab
