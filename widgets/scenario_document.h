// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/report.h"
#include "vramlab/scenario.h"
#include "vramlab/serving_model.h"

#include <QDateTime>
#include <QObject>
#include <QString>
#include <QUndoStack>
#include <QVariant>

#include <optional>

namespace vramlab {

/// The scenario being edited, its report, its file and its undo history. Every change
/// goes through here: the report is recomputed once per change and `changed()` tells
/// the views. An impossible combination keeps the scenario as the user set it and
/// reports why (error()), instead of fixing it silently.
class ScenarioDocument : public QObject {
    Q_OBJECT
public:
    explicit ScenarioDocument(QObject* parent = nullptr);
    ~ScenarioDocument() override;

    const Scenario& scenario() const { return m_scenario; }
    /// The report, or empty when the scenario is not a valid configuration.
    const std::optional<Report>& report() const { return m_report; }
    /// Why the scenario is not valid ("run.parallelism.gpus: expected a multiple ..."), or empty.
    const QString& error() const { return m_error; }
    /// The key the error names ("run.parallelism.gpus"), or empty.
    const QString& errorKey() const { return m_errorKey; }
    /// The serving engine's estimate of a run.mode "serving" scenario, computed once per change
    /// beside the report (the header and the Serving page both read it); empty for other
    /// scenarios or when the engine cannot be modelled (servingError() says why).
    const std::optional<ServingEstimate>& servingEstimate() const { return m_serving; }
    const QString& servingError() const { return m_servingError; }
    QUndoStack* undoStack() { return &m_undo; }
    /// The document's file, always absolute (a relative one would follow the working folder).
    const QString& filePath() const { return m_filePath; }
    /// The file still is what was opened or saved last (same size and time): saving to it
    /// cannot overwrite something else. False without a file.
    bool fileUnchanged() const;
    bool isModified() const { return !m_undo.isClean(); }

    /// Sets one parameter (a ParamDescriptor key) as an undoable step. `merge`: part of a
    /// continuing gesture (a slider drag) that undo should treat as one step.
    void setParameter(const QString& key, const QVariant& value, bool merge = false);
    QVariant parameter(const QString& key) const;

    /// Replaces the whole scenario as one undoable step (`what` names it in the Edit menu).
    void replaceScenario(const Scenario& scenario, const QString& what);
    /// Renames the scenario (one undo step); an empty name makes it follow the settings again.
    void rename(const QString& name);

    /// Opens a scenario file or a Hugging Face config.json. On failure the current scenario
    /// is untouched and `error` says what is wrong (file, key, expectation).
    /// Importing a config.json keeps the run (changing what the new model rules out) and
    /// leaves the document untitled; `notice` then says what was kept and changed.
    bool open(const QString& path, QString* error, QString* notice = nullptr);
    /// Saves atomically; on failure the old file is untouched.
    bool save(const QString& path, QString* error);
    /// Starts over on `scenario` with an empty history and no file.
    void reset(const Scenario& scenario, const QString& path = QString());

    /// Used by the undo commands: sets without recording.
    void apply(const Scenario& scenario);

    /// The scenario a new window starts with: Llama-3-8B on 8 H100s (resources/scenarios).
    static Scenario defaultScenario();

signals:
    void changed();

private:
    void recompute();
    void setFile(const QString& path);

    Scenario m_scenario;
    std::optional<Report> m_report;
    std::optional<ServingEstimate> m_serving;
    QString m_servingError;
    QString m_error;
    QString m_errorKey;
    QString m_filePath;
    QDateTime m_fileTime; ///< the file's modification time and size when opened or saved
    qint64 m_fileSize = -1;
    QUndoStack m_undo;
};

} // namespace vramlab
