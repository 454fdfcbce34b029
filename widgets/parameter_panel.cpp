// SPDX-License-Identifier: MIT
#include "parameter_panel.h"

#include "parameter_descriptors.h"
#include "preset_picker.h"
#include "scenario_document.h"
#include "vramlab/errors.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QGridLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScopedValueRollback>
#include <QSettings>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>

#include <cmath>
#include <utility>

namespace vramlab {

namespace {

/// The combo box's item for a value; a value the fixed list lacks (a file's {"every": 3}) is added as it is, so the
/// panel never shows another setting than the scenario's.
int comboIndex(QComboBox* combo, const QString& value)
{
    int i = combo->findData(value);
    if (i < 0 && !value.isEmpty()) {
        combo->addItem(value, value);
        i = combo->count() - 1;
    }
    return std::max(0, i);
}
constexpr int kSliderSteps = 1000;

bool logScale(const ParamDescriptor& d)
{
    return d.kind == ParamDescriptor::Kind::LogInteger
        || (d.kind == ParamDescriptor::Kind::Real && d.min > 0 && d.max / d.min >= 100);
}
bool hasSlider(const ParamDescriptor& d)
{
    // An optional key's "auto" is below the slider's range: the spin box alone reaches it.
    return d.unsetText.isEmpty() && (d.kind == ParamDescriptor::Kind::Integer || logScale(d));
}

/// A section of rarely used keys: a header button that folds it, closed unless the user
/// opened it last time (QSettings), so the common case scrolls no further.
QGridLayout* collapsibleSection(const QString& group, QGroupBox* box)
{
    auto* header = new QToolButton;
    header->setObjectName(QStringLiteral("section:") + group);
    header->setText(group);
    header->setCheckable(true);
    header->setAutoRaise(true);
    header->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    auto* body = new QWidget;
    auto* grid = new QGridLayout(body);
    grid->setContentsMargins(0, 0, 0, 0);
    auto* layout = new QVBoxLayout(box);
    layout->setContentsMargins(4, 2, 4, 2); // closed, a section is one line high
    layout->setSpacing(2);
    layout->addWidget(header);
    layout->addWidget(body);
    const QString setting = QStringLiteral("parameters/expanded/") + group;
    const auto show = [header, body](bool open) {
        header->setArrowType(open ? Qt::DownArrow : Qt::RightArrow);
        body->setVisible(open);
    };
    const bool open = QSettings().value(setting, false).toBool();
    header->setChecked(open);
    show(open);
    QObject::connect(header, &QToolButton::toggled, body, [show, setting](bool on) {
        show(on);
        QSettings().setValue(setting, on);
    });
    return grid;
}
} // namespace

std::vector<double> ParameterPanel::sizeStops(const ParamDescriptor& d)
{
    // What people try: 1, 2, 3, then powers of two and the halves between (4, 6, 8, 12, ...).
    std::vector<double> stops { d.min };
    for (double p = 1; p <= d.max; p *= 2)
        for (double v : { p, p * 1.5 })
            if ((v == std::round(v)) && v > stops.back() && v < d.max)
                stops.push_back(v);
    if (d.max > stops.back())
        stops.push_back(d.max);
    return stops;
}

int ParameterPanel::sliderSteps(const ParamDescriptor& d)
{
    switch (d.kind) {
    case ParamDescriptor::Kind::Integer:
        return int(d.max - d.min);
    case ParamDescriptor::Kind::LogInteger:
        return int(sizeStops(d).size()) - 1;
    default:
        return kSliderSteps;
    }
}

int ParameterPanel::sliderPosition(const ParamDescriptor& d, double v)
{
    v = std::clamp(v, d.min, d.max);
    if (d.kind == ParamDescriptor::Kind::Integer)
        return int(std::lround(v - d.min));
    if (d.kind == ParamDescriptor::Kind::LogInteger) { // the nearest stop, by ratio
        const std::vector<double> stops = sizeStops(d);
        const auto above = std::lower_bound(stops.begin(), stops.end(), v);
        if (above == stops.begin())
            return 0;
        if (above == stops.end())
            return int(stops.size()) - 1;
        const int i = int(above - stops.begin());
        return v / stops[size_t(i - 1)] < *above / v ? i - 1 : i;
    }
    const double f = logScale(d) ? std::log(v / d.min) / std::log(d.max / d.min) : (v - d.min) / (d.max - d.min);
    return int(std::lround(f * kSliderSteps));
}

double ParameterPanel::sliderValue(const ParamDescriptor& d, int position)
{
    if (d.kind == ParamDescriptor::Kind::Integer)
        return d.min + position;
    if (d.kind == ParamDescriptor::Kind::LogInteger) {
        // One stop a position: a drag moves a stop every few pixels, an arrow key one stop
        // (8,192 -> 12,288 -> 16,384), never 8k -> 49k (issue 16).
        const std::vector<double> stops = sizeStops(d);
        return stops[size_t(std::clamp(position, 0, int(stops.size()) - 1))];
    }
    const double f = double(position) / kSliderSteps;
    const double v = logScale(d) ? d.min * std::pow(d.max / d.min, f) : d.min + f * (d.max - d.min);
    return std::round(v * std::pow(10.0, d.decimals)) / std::pow(10.0, d.decimals);
}

ParameterPanel::ParameterPanel(ScenarioDocument* document, QWidget* parent)
    : QWidget(parent)
    , m_doc(document)
    , m_error(new QLabel)
{
    auto* outer = new QVBoxLayout(this);
    m_error->setWordWrap(true);
    m_error->setTextFormat(Qt::PlainText); // the error echoes values from the file
    m_error->setStyleSheet(
        QStringLiteral("QLabel { color: white; background: #b8251a; padding: 6px; border-radius: 3px; }"));
    m_error->setVisible(false);
    outer->addWidget(m_error);

    QHash<QString, QGridLayout*> groups;
    for (const ParamDescriptor& d : parameterDescriptors()) {
        QGridLayout* grid = groups.value(d.group);
        if (!grid) {
            auto* box = new QGroupBox(d.advanced ? QString() : d.group);
            grid = d.advanced ? collapsibleSection(d.group, box) : new QGridLayout(box);
            if (d.advanced)
                m_headers.insert(d.group, box->findChild<QToolButton*>());
            grid->setColumnStretch(1, 1);
            outer->addWidget(box);
            groups.insert(d.group, grid);
            m_sections.insert(d.group, box);
        }
        if (d.key == QLatin1String("model.parameters_b")) { // after the preset picker: the other way to a model
            auto* import = new QPushButton(QStringLiteral("From config.json…"));
            import->setObjectName(QStringLiteral("importConfig"));
            import->setToolTip(
                QStringLiteral("Read a Hugging Face config.json (Llama, SmolLM2, Mistral, Mixtral, Qwen2/3 and their "
                               "MoE, Gemma 1-3, GPT-2, Phi-3/4, DeepSeek-V2/V3, StarCoder2, Granite, OLMo-2); you "
                               "can also drop one on the window"));
            connect(import, &QPushButton::clicked, this, &ParameterPanel::importConfigRequested);
            grid->addWidget(import, grid->rowCount(), 1, 1, 2);
        }
        const int row = grid->rowCount();
        auto* label = new QLabel(d.label);
        label->setWordWrap(true); // "Gradient accumulation steps" takes two lines in a narrow dock
        label->setToolTip(d.tooltip);
        grid->addWidget(label, row, 0);
        m_labels.insert(d.key, label);
        QWidget* editor = nullptr;
        switch (d.kind) {
        case ParamDescriptor::Kind::Integer:
        case ParamDescriptor::Kind::LogInteger: {
            auto* spin = new QSpinBox;
            spin->setRange(int(d.min) - !d.unsetText.isEmpty(), int(std::min(d.max, 2e9)));
            spin->setSpecialValueText(d.unsetText); // at min - 1: the key unset
            spin->setGroupSeparatorShown(true);
            spin->setKeyboardTracking(false);
            connect(spin, &QSpinBox::valueChanged, this,
                [this, &d](int v) { edit(d, QVariant::fromValue<qlonglong>(v), false); });
            editor = spin;
            break;
        }
        case ParamDescriptor::Kind::Real: {
            auto* spin = new QDoubleSpinBox;
            spin->setRange(d.min - !d.unsetText.isEmpty(), d.max);
            spin->setSpecialValueText(d.unsetText);
            spin->setDecimals(d.decimals);
            spin->setKeyboardTracking(false);
            spin->setSingleStep(d.max <= 1 ? 0.05 : 1);
            connect(spin, &QDoubleSpinBox::valueChanged, this, [this, &d](double v) { edit(d, v, false); });
            editor = spin;
            break;
        }
        case ParamDescriptor::Kind::Choice: {
            if (d.key == QLatin1String("model.preset")) { // grouped by family, with a search field above
                auto* picker = new PresetPicker;
                grid->addWidget(picker->searchField(), row, 1, 1, 2);
                connect(picker, &QComboBox::activated, this,
                    [this, &d, picker](int i) { edit(d, picker->itemData(i), false); });
                connect(picker, &PresetPicker::presetSearched, this,
                    [this, &d, picker](int i) { edit(d, picker->itemData(i), false); });
                editor = picker;
                break;
            }
            auto* combo = new QComboBox;
            // The longest choice ("ZeRO-3 / FSDP full shard…") would set the panel's, hence the
            // window's, minimum width: the field elides, its list still shows every choice whole.
            combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
            combo->setMinimumContentsLength(12);
            for (int i = 0; i < d.choices.size(); ++i)
                combo->addItem(d.choiceLabels.value(i, d.choices[i]), d.choices[i]);
            connect(
                combo, &QComboBox::activated, this, [this, &d, combo](int i) { edit(d, combo->itemData(i), false); });
            editor = combo;
            break;
        }
        case ParamDescriptor::Kind::Toggle: {
            auto* check = new QCheckBox;
            connect(check, &QCheckBox::toggled, this, [this, &d](bool on) { edit(d, on, false); });
            editor = check;
            break;
        }
        case ParamDescriptor::Kind::Text: {
            auto* line = new QLineEdit;
            connect(line, &QLineEdit::editingFinished, this, [this, &d, line] { edit(d, line->text(), false); });
            editor = line;
            break;
        }
        }
        editor->setToolTip(d.tooltip);
        editor->setObjectName(d.key);
        guardWheel(editor);
        m_editors.insert(d.key, editor);
        if (hasSlider(d)) {
            auto* slider = new QSlider(Qt::Horizontal);
            slider->setRange(0, sliderSteps(d));
            if (d.kind == ParamDescriptor::Kind::LogInteger)
                slider->setPageStep(2); // two stops: a doubling
            slider->setToolTip(d.tooltip);
            slider->setObjectName(d.key + QStringLiteral(".slider"));
            guardWheel(slider);
            connect(slider, &QSlider::valueChanged, this, [this, &d, slider](int pos) {
                const double v = sliderValue(d, pos);
                const QVariant value = d.kind == ParamDescriptor::Kind::Real
                    ? QVariant(v)
                    : QVariant::fromValue<qlonglong>(qlonglong(v));
                if (slider->isSliderDown())
                    editLater(d, value); // a drag: one undo step, one estimate per event-loop turn
                else
                    edit(d, value, false);
            });
            connect(slider, &QSlider::sliderReleased, this, &ParameterPanel::applyPending);
            grid->addWidget(slider, row, 1);
            grid->addWidget(editor, row, 2);
            m_sliders.insert(d.key, slider);
        } else {
            // The preset picker's search field took its row: the combo goes below it.
            const int editorRow = d.key == QLatin1String("model.preset") ? row + 1 : row;
            grid->addWidget(editor, editorRow, 1, 1, 2);
        }
        if (!d.unit.isEmpty()) {
            auto* unit = new QLabel(d.unit);
            grid->addWidget(unit, row, 3);
            m_units.insert(d.key, unit);
        }
    }
    outer->addStretch();
    connect(m_doc, &ScenarioDocument::changed, this, &ParameterPanel::refresh);
    refresh();
}

void ParameterPanel::guardWheel(QWidget* control)
{
    // Scrolling the panel must not change what the cursor passes over (AdamW -> SGD):
    // a control takes the wheel only once it has focus (a click or Tab).
    control->setFocusPolicy(Qt::StrongFocus);
    control->installEventFilter(this);
}

bool ParameterPanel::eventFilter(QObject* watched, QEvent* event)
{
    if (event->type() == QEvent::Wheel && !static_cast<QWidget*>(watched)->hasFocus()) {
        event->ignore(); // ignored: QApplication passes it on to the scroll area
        return true;
    }
    return QWidget::eventFilter(watched, event);
}

void ParameterPanel::highlight(const QStringList& keys)
{
    m_highlighted = keys;
    restyleLabels();
}

void ParameterPanel::restyleLabels()
{
    // Amber with black text reads on the light and the dark palette and on a projector; the
    // control an error names is marked red, like the error above the panel (issue 16).
    const QString marked = QStringLiteral(
        "QLabel { background: #ffc845; color: black; font-weight: bold; border-radius: 3px; padding: 1px 4px; }");
    const QString invalid = QStringLiteral(
        "QLabel { background: #b8251a; color: white; font-weight: bold; border-radius: 3px; padding: 1px 4px; }");
    // "run.finetune.targets[2]" names the targets' control.
    const QString errorKey = m_doc->errorKey().section(QLatin1Char('['), 0, 0);
    for (auto it = m_labels.cbegin(); it != m_labels.cend(); ++it) {
        const QString& style = it.key() == errorKey ? invalid : m_highlighted.contains(it.key()) ? marked : QString();
        if (it.value()->styleSheet() != style) // a new style sheet re-polishes the label
            it.value()->setStyleSheet(style);
    } // A closed section says it holds the control the error names.
    const ParamDescriptor* named = findDescriptor(errorKey);
    for (auto it = m_headers.cbegin(); it != m_headers.cend(); ++it) {
        const bool holds = named && named->group == it.key();
        const QString style = QStringLiteral("QToolButton { font-weight: bold; border: none; %1 }")
                                  .arg(holds ? QStringLiteral("color: #b8251a;") : QString());
        if (it.value()->styleSheet() != style)
            it.value()->setStyleSheet(style);
    }
}

void ParameterPanel::edit(const ParamDescriptor& d, const QVariant& value, bool merge)
{
    if (m_refreshing)
        return;
    if (m_pending == &d) // this edit is newer than the drag position still waiting
        m_pending = nullptr;
    else if (m_pending)
        applyPending(); // another control's edit comes after the drag's, as the user made them
    m_doc->setParameter(d.key, value, merge);
}

void ParameterPanel::editLater(const ParamDescriptor& d, const QVariant& value)
{
    if (m_refreshing)
        return;
    if (m_pending && m_pending != &d)
        applyPending();
    // Mouse moves arrive faster than a page redraws: each turn of the event loop computes
    // and draws only the latest position, so a drag never queues up stale work.
    const bool scheduled = m_pending != nullptr;
    m_pending = &d;
    m_pendingValue = value;
    if (!scheduled)
        QMetaObject::invokeMethod(this, &ParameterPanel::applyPending, Qt::QueuedConnection);
}

void ParameterPanel::applyPending()
{
    if (!m_pending)
        return;
    const ParamDescriptor& d = *std::exchange(m_pending, nullptr);
    edit(d, std::exchange(m_pendingValue, QVariant()), true); // the drag merges into one undo step
}

void ParameterPanel::refresh()
{
    // Reset however refresh() ends: left set, every control would stop answering.
    const QScopedValueRollback<bool> refreshing(m_refreshing, true);
    const Scenario& sc = m_doc->scenario();
    QHash<QString, bool> applying; // per advanced group: whether any of its controls applies
    for (const ParamDescriptor& d : parameterDescriptors()) {
        QVariant v;
        try {
            v = d.get(sc);
        } catch (const SizeOverflow&) { // a derived figure (the model's size) beyond 2^63: the error says why
            continue;
        }
        QWidget* e = m_editors.value(d.key);
        const QSignalBlocker block(e);
        if (auto* spin = qobject_cast<QSpinBox*>(e))
            spin->setValue(int(v.toLongLong()));
        else if (auto* dspin = qobject_cast<QDoubleSpinBox*>(e))
            dspin->setValue(v.toDouble());
        else if (auto* combo = qobject_cast<QComboBox*>(e))
            combo->setCurrentIndex(comboIndex(combo, v.toString()));
        else if (auto* check = qobject_cast<QCheckBox*>(e))
            check->setChecked(v.toBool());
        else if (auto* line = qobject_cast<QLineEdit*>(e); line && !line->hasFocus()) // not while typing
            line->setText(v.toString());
        if (QSlider* s = m_sliders.value(d.key); s && !s->isSliderDown()) {
            const QSignalBlocker blockSlider(s);
            s->setValue(sliderPosition(d, v.toDouble()));
        }
        const bool on = d.applies(sc);
        // A rarely used key's row leaves where it does not apply; a common one stays, greyed.
        QWidget* row[] = { e, m_sliders.value(d.key), m_labels.value(d.key), m_units.value(d.key) };
        for (QWidget* w : row)
            if (w && d.advanced)
                w->setVisible(on);
            else if (w)
                w->setEnabled(on);
        if (d.advanced)
            applying[d.group] |= on;
    }
    for (auto it = applying.cbegin(); it != applying.cend(); ++it) // a section with no row left goes too
        m_sections.value(it.key())->setVisible(it.value());
    // A serving scenario the engine models is valid even where the one-request report is refused (hybrid
    // state-space models): the header and the Serving tab have its answer.
    m_error->setVisible(!m_doc->error().isEmpty() && !m_doc->servingEstimate());
    m_error->setText(QStringLiteral("Not a valid configuration: ") + m_doc->error());
    restyleLabels();
}

} // namespace vramlab
