// SPDX-License-Identifier: MIT
#include "breakdown_table.h"

#include "chart_support.h"
#include "plot_theme.h"
#include "vramlab/text_escape.h"

#include <QHeaderView>
#include <QLocale>

namespace vramlab {

BreakdownTable::BreakdownTable(QWidget* parent)
    : QTreeWidget(parent)
{
    setColumnCount(4);
    setHeaderLabels(
        { QStringLiteral("Component"), QStringLiteral("Size"), QStringLiteral("Bytes"), QStringLiteral("Share") });
    header()->setSectionResizeMode(0, QHeaderView::Stretch);
    header()->setMinimumSectionSize(60);
    for (int c = 1; c < 4; ++c)
        header()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    setRootIsDecorated(true);
    setAlternatingRowColors(true);
    setUniformRowHeights(true);
}

void BreakdownTable::setReport(const Report* r)
{
    const bool wasExpanded = topLevelItemCount() > 4 && topLevelItem(4)->isExpanded();
    clear();
    if (!r)
        return;
    const QLocale en(QLocale::English);
    auto share = [&](Bytes b) {
        return r->total > 0 ? QStringLiteral("%1%").arg(100.0 * double(b) / double(r->total), 0, 'f', 1) : QString();
    };
    for (const char* key : kComponentKeys) {
        const Component* c = r->component(key);
        if (!c)
            continue;
        auto* item = new QTreeWidgetItem(this,
            { componentLabel(QString::fromLatin1(key)), bytesText(c->bytes), en.toString(qlonglong(c->bytes)),
                share(c->bytes) });
        item->setIcon(0, [&] {
            QPixmap swatch(12, 12);
            swatch.fill(PlotTheme::componentColor(QString::fromLatin1(key)));
            return QIcon(swatch);
        }());
        item->setToolTip(0, QString::fromStdString(c->formula));
        for (int col = 1; col < 4; ++col)
            item->setTextAlignment(col, Qt::AlignRight | Qt::AlignVCenter);
        if (QLatin1String(key) == QLatin1String("activations")) {
            const QString per = r->microBatchesInFlight > 1
                ? QStringLiteral(" (per micro-batch; x%1 in flight)").arg(r->microBatchesInFlight)
                : QString();
            for (const ActivationTensor& t : r->activations.tensors) {
                auto* child = new QTreeWidgetItem(item,
                    { QString::fromStdString(t.name) + (t.count > 1 ? QStringLiteral(" x%1").arg(t.count) : QString()),
                        bytesText(t.total()), en.toString(qlonglong(t.total())), share(t.total()) });
                child->setToolTip(0, QString::fromStdString(t.shapeText()) + per);
                for (int col = 1; col < 4; ++col)
                    child->setTextAlignment(col, Qt::AlignRight | Qt::AlignVCenter);
            }
            item->setExpanded(wasExpanded);
        }
        if (QLatin1String(key) == QLatin1String("overhead"))
            for (const Component& part : r->overheadParts)
                new QTreeWidgetItem(item,
                    { QString::fromUtf8(part.label.data(), int(part.label.size())), bytesText(part.bytes),
                        en.toString(qlonglong(part.bytes)), share(part.bytes) });
    }
    auto* total = new QTreeWidgetItem(this,
        { QStringLiteral("Total"), bytesText(r->total), en.toString(qlonglong(r->total)), QStringLiteral("100%") });
    QFont bold = total->font(0);
    bold.setBold(true);
    for (int col = 0; col < 4; ++col) {
        total->setFont(col, bold);
        if (col > 0)
            total->setTextAlignment(col, Qt::AlignRight | Qt::AlignVCenter);
    }
}

QString BreakdownTable::toCsv() const
{
    QString csv = QStringLiteral("component,bytes,share\n");
    for (int i = 0; i < topLevelItemCount(); ++i) {
        const QTreeWidgetItem* it = topLevelItem(i);
        auto field = [](const QString& s) { return QString::fromStdString(csvField(s.toStdString())); };
        csv += QStringLiteral("%1,%2,%3\n")
                   .arg(field(it->text(0)), field(QString(it->text(2)).remove(QLatin1Char(','))), field(it->text(3)));
    }
    return csv;
}

} // namespace vramlab
