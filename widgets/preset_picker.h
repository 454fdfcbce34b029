// SPDX-License-Identifier: MIT
#pragma once

#include <QComboBox>
#include <QLineEdit>
#include <QPointer>

namespace vramlab {

/// The model preset combo box: the presets under one header row per family (Llama, Mistral,
/// Qwen, …; headers are disabled, so they cannot be chosen), then "Custom shapes". Item data
/// is the preset key ("" for custom), so it is read and set like any choice combo. The search
/// field (searchField(), placed by the panel) narrows the list to the presets whose name, key
/// or family contains the text, completes as one types, and Enter picks the first match.
class PresetPicker : public QComboBox {
    Q_OBJECT
public:
    explicit PresetPicker(QWidget* parent = nullptr);
    /// Deletes the search field unless the panel has taken it into a layout (it then owns it).
    ~PresetPicker() override;

    QLineEdit* searchField() const { return m_search; }

    /// Hides the presets that do not contain `text` (case-insensitive; name, key or family)
    /// and the family headers left with none. Returns how many presets stay visible.
    int setFilter(const QString& text);
    /// The row of the first visible preset, or -1.
    int firstVisiblePreset() const;
    /// True for a family header row.
    bool isFamilyHeader(int row) const;

    static constexpr int kFamilyRole = Qt::UserRole + 1; ///< the family of a row (header or preset)

signals:
    /// A preset chosen from the search field (Enter, or a completion picked): its row.
    void presetSearched(int row);

private:
    void pickFromSearch(const QString& key);

    QPointer<QLineEdit> m_search; ///< parentless until placed; QPointer: a panel that owns it may delete it first
};

} // namespace vramlab
