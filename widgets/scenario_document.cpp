// SPDX-License-Identifier: MIT
#include "scenario_document.h"

#include "parameter_descriptors.h"
#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/hf_import.h"
#include "vramlab/presets.h"
#include "vramlab/run_adaptation.h"
#include "vramlab/scenario_io.h"
#include "vramlab/scenario_name.h"

#include <QDir>
#include <QFileInfo>
#include <QUndoCommand>

namespace vramlab {

namespace {

/// One edit: the scenario before and after. Edits of the same key while a slider is
/// dragged merge, so the whole drag is one undo step.
class EditCommand : public QUndoCommand {
public:
    EditCommand(ScenarioDocument* doc, Scenario before, Scenario after, const QString& text, int mergeId)
        : QUndoCommand(text)
        , m_doc(doc)
        , m_before(std::move(before))
        , m_after(std::move(after))
        , m_mergeId(mergeId)
    {
    }
    void undo() override { m_doc->apply(m_before); }
    void redo() override { m_doc->apply(m_after); }
    int id() const override { return m_mergeId; }
    bool mergeWith(const QUndoCommand* other) override
    {
        if (other->id() != id())
            return false;
        m_after = static_cast<const EditCommand*>(other)->m_after;
        return true;
    }

private:
    ScenarioDocument* m_doc;
    Scenario m_before, m_after;
    int m_mergeId;
};

} // namespace

ScenarioDocument::ScenarioDocument(QObject* parent)
    : QObject(parent)
{
    m_scenario = defaultScenario();
    recompute();
}

ScenarioDocument::~ScenarioDocument()
{
    m_undo.blockSignals(true); // clearing the history on the way out is nobody's business
}

Scenario ScenarioDocument::defaultScenario()
{
    Scenario sc;
    sc.model = findPreset("llama-3-8b")->model;
    sc.run.sequenceLength = 4096;
    sc.run.gradientAccumulationSteps = 8;
    sc.run.parallelism.gpus = 8;
    sc.run.parallelism.zeroStage = 3;
    sc.run.gpu = findGpu("h100-sxm-80gb");
    sc.name = describeScenario(sc); // follows the settings until the user renames it
    return sc;
}

void ScenarioDocument::recompute()
{
    try {
        m_report = estimate(m_scenario, EstimateOptions { .recordTimeline = true, .replayAllocator = true });
        m_error.clear();
        m_errorKey.clear();
    } catch (const InputError& e) {
        m_report.reset();
        m_error = QString::fromStdString(e.what());
        m_errorKey = QString::fromStdString(e.keyPath());
    } catch (const SizeOverflow& e) {
        m_report.reset();
        m_error = QStringLiteral("the configuration is too large: ") + QString::fromUtf8(e.what());
        m_errorKey.clear();
    }
    m_serving.reset();
    m_servingError.clear();
    if (m_scenario.run.serving) {
        try {
            m_serving = vramlab::servingEstimate(m_scenario.model, m_scenario.run);
        } catch (const std::exception& e) { // InputError or SizeOverflow: the Serving page and the header say why
            m_servingError = QString::fromUtf8(e.what());
        }
    }
    emit changed();
}

void ScenarioDocument::apply(const Scenario& scenario)
{
    m_scenario = scenario;
    recompute();
}

QVariant ScenarioDocument::parameter(const QString& key) const
{
    const ParamDescriptor* d = findDescriptor(key);
    return d ? d->get(m_scenario) : QVariant();
}

void ScenarioDocument::setParameter(const QString& key, const QVariant& value, bool merge)
{
    const ParamDescriptor* d = findDescriptor(key);
    if (!d || d->get(m_scenario) == value)
        return;
    Scenario after = m_scenario;
    d->set(after, value);
    followSettings(m_scenario, after);
    // A merge id per key for drags; -1 (never merge) for discrete edits.
    const int mergeId = merge ? int(qHash(key) & 0x7fffffff) : -1;
    m_undo.push(new EditCommand(this, m_scenario, after, QStringLiteral("Change %1").arg(d->label.toLower()), mergeId));
}

void ScenarioDocument::replaceScenario(const Scenario& scenario, const QString& what)
{
    Scenario after = scenario;
    followSettings(m_scenario, after);
    m_undo.push(new EditCommand(this, m_scenario, after, what, -1));
}

void ScenarioDocument::rename(const QString& name)
{
    Scenario after = m_scenario;
    // An empty name hands the name back to the settings.
    after.name = name.trimmed().isEmpty() ? describeScenario(after) : name.trimmed().toStdString();
    if (after.name != m_scenario.name)
        m_undo.push(new EditCommand(this, m_scenario, after, QStringLiteral("Rename scenario"), -1));
}

namespace {

/// A scenario whose sizes overflow cannot become the document (every view would fail on
/// it); an invalid combination can: the window shows why and the user fixes it.
void refuseTooLarge(const Scenario& sc)
{
    try {
        (void)estimate(sc);
    } catch (const InputError&) {
    }
}

} // namespace

bool ScenarioDocument::open(const QString& path, QString* error, QString* notice)
{
    const std::string file = path.toStdString();
    try {
        const nlohmann::json doc = parseJsonText(readTextFile(file), file);
        Scenario sc;
        // A Hugging Face config.json has a model_type (or architectures); a scenario has a model.
        if (doc.is_object() && !doc.contains("model")
            && (doc.contains("model_type") || doc.contains("architectures"))) {
            const HfImport imported = importHfConfig(doc);
            sc = scenarioFromHf(imported, {});
            // A config without _name_or_path is named after its folder ("Qwen1.5-MoE-A2.7B").
            if (sc.model.name == imported.modelType && !QFileInfo(path).dir().dirName().isEmpty())
                sc.model.name = QFileInfo(path).dir().dirName().toStdString();
            // A new model under the same run: what still applies stays, and the result is a new
            // untitled document, so Save never writes the model over the scenario's file.
            sc.run = m_scenario.run;
            const std::vector<std::string> changes = adaptRunToModel(sc.model, sc.run);
            sc.name = describeScenario(sc); // named after the model, following the settings
            refuseTooLarge(sc);
            setFile(QString());
            replaceScenario(sc, QStringLiteral("Import %1").arg(QFileInfo(path).fileName()));
            if (notice) {
                *notice = QStringLiteral("Imported %1: the run settings are kept").arg(QFileInfo(path).fileName());
                for (const std::string& c : changes)
                    *notice += (c == changes.front() ? QStringLiteral(", except ") : QStringLiteral("; "))
                        + QString::fromStdString(c);
                *notice += QStringLiteral(". Not saved yet.");
            }
            return true;
        }
        sc = readScenario(doc);
        refuseTooLarge(sc);
        reset(sc, path);
        if (notice && sc.run.serving) // the other tabs draw one request's memory: say where the engine's is
            *notice = QStringLiteral("A serving scenario: the Serving tab shows the engine's budget, KV cache and "
                                     "concurrency; the other tabs one request's memory");
        return true;
    } catch (const InputError& e) {
        if (error)
            *error = QString::fromStdString(e.withFile(file).what());
    } catch (const SizeOverflow& e) {
        if (error)
            *error = path + QStringLiteral(": the model is too large to estimate (") + QString::fromUtf8(e.what())
                + QStringLiteral("); not opened");
    } catch (const std::exception& e) {
        if (error)
            *error = path + QStringLiteral(": ") + QString::fromUtf8(e.what());
    }
    return false;
}

bool ScenarioDocument::save(const QString& path, QString* error)
{
    try {
        Scenario sc = m_scenario;
        saveScenarioFile(path.toStdString(), sc);
        setFile(path);
        m_undo.setClean();
        emit changed();
        return true;
    } catch (const std::exception& e) {
        if (error)
            *error = QString::fromUtf8(e.what());
        return false;
    }
}

void ScenarioDocument::setFile(const QString& path)
{
    const QFileInfo info(path);
    m_filePath = path.isEmpty() ? QString() : info.absoluteFilePath();
    m_fileTime = info.exists() ? info.lastModified() : QDateTime();
    m_fileSize = info.exists() ? info.size() : -1;
}

bool ScenarioDocument::fileUnchanged() const
{
    if (m_filePath.isEmpty())
        return false;
    const QFileInfo info(m_filePath);
    return info.exists() && info.size() == m_fileSize && info.lastModified() == m_fileTime;
}

void ScenarioDocument::reset(const Scenario& scenario, const QString& path)
{
    m_undo.clear();
    setFile(path);
    m_scenario = scenario;
    recompute();
}

} // namespace vramlab
