// SPDX-License-Identifier: MIT
#pragma once

#include <QHash>
#include <QStringList>
#include <QWidget>

#include <vector>

class QSlider;
class QLabel;
class QToolButton;

namespace vramlab {

class ScenarioDocument;
struct ParamDescriptor;

/// Every parameter of the scenario as a slider, spin box, combo box or check box, built
/// from parameterDescriptors(), grouped in sections, with units and tooltips. Edits go to
/// the document as undoable steps (a slider drag is one step); controls that do not apply
/// to the current mode are disabled, and an impossible combination is shown, not fixed.
class ParameterPanel : public QWidget {
    Q_OBJECT
public:
    explicit ParameterPanel(ScenarioDocument* document, QWidget* parent = nullptr);

    /// The value editor of a parameter (QSpinBox, QDoubleSpinBox, QComboBox or QCheckBox).
    QWidget* editor(const QString& key) const { return m_editors.value(key); }
    /// The slider of a parameter, if it has one.
    QSlider* slider(const QString& key) const { return m_sliders.value(key); }

    /// Marks the controls of these parameter keys (a lesson step points at them); empty clears.
    void highlight(const QStringList& keys);
    const QStringList& highlighted() const { return m_highlighted; }
    /// The label of `key`'s control (its colour says highlighted or invalid), or null.
    QLabel* label(const QString& key) const { return m_labels.value(key); }

    /// Slider position <-> value for a descriptor (log2 scale for sizes).
    static int sliderPosition(const ParamDescriptor& d, double value);
    static double sliderValue(const ParamDescriptor& d, int position);
    /// The slider's last position (its range starts at 0).
    static int sliderSteps(const ParamDescriptor& d);
    /// A size slider's stops (LogInteger): min, 1, 2, 3, then powers of two and their
    /// halves (4, 6, 8, 12, ...) up to max.
    static std::vector<double> sizeStops(const ParamDescriptor& d);

signals:
    /// The "From config.json…" button: the window asks for the file and imports it.
    void importConfigRequested();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void guardWheel(QWidget* control);
    void refresh();
    void edit(const ParamDescriptor& d, const QVariant& value, bool merge);
    /// A slider drag: keeps only the latest position and computes it once per event-loop turn.
    void editLater(const ParamDescriptor& d, const QVariant& value);
    /// Applies the drag position still waiting, if any.
    void applyPending();

    ScenarioDocument* m_doc;
    QHash<QString, QWidget*> m_editors;
    QHash<QString, QSlider*> m_sliders;
    QHash<QString, QLabel*> m_labels;
    QHash<QString, QLabel*> m_units;
    QHash<QString, QWidget*> m_sections; ///< each group's box
    QHash<QString, QToolButton*> m_headers; ///< the fold button of each section of rarely used keys
    QLabel* m_error;
    QStringList m_highlighted;
    void restyleLabels(); ///< lesson highlights amber, the control the error names red
    bool m_refreshing = false;
    const ParamDescriptor* m_pending = nullptr; ///< a dragged slider's latest value, not applied yet
    QVariant m_pendingValue;
};

} // namespace vramlab
