// SPDX-License-Identifier: MIT
#include "preset_picker.h"

#include "vramlab/parameter_tensors.h"
#include "vramlab/presets.h"

#include <QCompleter>
#include <QLineEdit>
#include <QListView>
#include <QStandardItemModel>
#include <QStyledItemDelegate>
#include <QTimer>

namespace vramlab {

namespace {

const QString kHeaderPrefix = QStringLiteral("family:"); // header data: never a preset key, nor "" (custom)

/// Indents the presets under their family headers in the popup.
class GroupDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;
    void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override
    {
        QStyleOptionViewItem o(option);
        if (!index.data(Qt::UserRole).toString().startsWith(kHeaderPrefix))
            o.rect.adjust(16, 0, 0, 0);
        QStyledItemDelegate::paint(painter, o, index);
    }
};

QString billions(Count n)
{
    return n >= 1'000'000'000 ? QString::number(double(n) / 1e9, 'f', 2) + QStringLiteral("B")
                              : QString::number(double(n) / 1e6, 'f', 0) + QStringLiteral("M");
}

} // namespace

PresetPicker::PresetPicker(QWidget* parent)
    : QComboBox(parent)
    , m_search(new QLineEdit)
{
    setItemDelegate(new GroupDelegate(this));
    auto* items = qobject_cast<QStandardItemModel*>(model());
    auto* completions = new QStandardItemModel(this);
    auto header = [&](const QString& family) {
        addItem(family, kHeaderPrefix + family);
        QStandardItem* item = items->item(count() - 1);
        item->setFlags(Qt::NoItemFlags); // shown, never chosen
        QFont bold = font();
        bold.setBold(true);
        item->setData(bold, Qt::FontRole);
        item->setData(family, kFamilyRole);
    };
    QString family;
    for (const Preset& p : presets()) {
        const QString f = QString::fromStdString(p.family);
        if (f != family)
            header(family = f);
        const QString name = QString::fromStdString(p.model.name);
        const QString key = QString::fromStdString(p.key);
        addItem(name, key);
        setItemData(count() - 1, f, kFamilyRole);
        setItemData(count() - 1,
            QStringLiteral("%1 parameters%2\n%3")
                .arg(billions(countParameters(p.model).total), p.publishedExact ? QString() : QStringLiteral(" (~)"),
                    QString::fromStdString(p.source)),
            Qt::ToolTipRole);
        auto* completion = new QStandardItem(name + QStringLiteral(" · ") + f);
        completion->setData(key, Qt::UserRole);
        completions->appendRow(completion);
    }
    header(QStringLiteral("Custom"));
    addItem(QStringLiteral("Custom shapes"), QString());
    setItemData(count() - 1, QStringLiteral("Custom"), kFamilyRole);
    setMaxVisibleItems(24);

    m_search->setObjectName(QStringLiteral("model.preset.search"));
    m_search->setPlaceholderText(QStringLiteral("Search presets (qwen, 7b, moe…)"));
    m_search->setClearButtonEnabled(true);
    m_search->setToolTip(QStringLiteral("Narrows the preset list; Enter picks the first match"));
    auto* completer = new QCompleter(completions, m_search);
    completer->setCaseSensitivity(Qt::CaseInsensitive);
    completer->setFilterMode(Qt::MatchContains);
    completer->setCompletionRole(Qt::DisplayRole);
    m_search->setCompleter(completer);
    connect(completer, qOverload<const QModelIndex&>(&QCompleter::activated), this,
        [this](const QModelIndex& i) { pickFromSearch(i.data(Qt::UserRole).toString()); });
    connect(m_search, &QLineEdit::textChanged, this, &PresetPicker::setFilter);
    connect(m_search, &QLineEdit::returnPressed, this, [this] {
        const int row = firstVisiblePreset();
        if (row >= 0)
            pickFromSearch(itemData(row).toString());
    });
}

bool PresetPicker::isFamilyHeader(int row) const
{
    return itemData(row).toString().startsWith(kHeaderPrefix);
}

PresetPicker::~PresetPicker()
{
    if (m_search && !m_search->parent())
        delete m_search.data();
}

int PresetPicker::setFilter(const QString& text)
{
    auto* list = qobject_cast<QListView*>(view());
    const QString needle = text.trimmed();
    int shown = 0;
    int headerRow = -1;
    bool headerNeeded = false;
    auto closeGroup = [&] {
        if (headerRow >= 0 && list)
            list->setRowHidden(headerRow, !headerNeeded);
    };
    for (int row = 0; row < count(); ++row) {
        if (isFamilyHeader(row)) {
            closeGroup();
            headerRow = row;
            headerNeeded = false;
            continue;
        }
        // "Name · Family · key": a completion's text matches the row it came from.
        const QString haystack = itemText(row) + QStringLiteral(" · ") + itemData(row, kFamilyRole).toString()
            + QStringLiteral(" · ") + itemData(row).toString();
        const bool match = needle.isEmpty() || haystack.contains(needle, Qt::CaseInsensitive);
        if (list)
            list->setRowHidden(row, !match);
        shown += match ? 1 : 0;
        headerNeeded = headerNeeded || match;
    }
    closeGroup();
    return shown;
}

int PresetPicker::firstVisiblePreset() const
{
    const auto* list = qobject_cast<const QListView*>(view());
    for (int row = 0; row < count(); ++row)
        if (!isFamilyHeader(row) && !(list && list->isRowHidden(row)) && !itemData(row).toString().isEmpty())
            return row;
    return -1;
}

void PresetPicker::pickFromSearch(const QString& key)
{
    const int row = findData(key);
    if (row < 0)
        return;
    setCurrentIndex(row);
    emit presetSearched(row);
    // After the completer has written its text into the field: empty it, so the list is whole again.
    QTimer::singleShot(0, m_search, [search = m_search] { search->clear(); });
}

} // namespace vramlab
