// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/probe_report.h"
#include "vramlab/scenario.h"

#include <QString>
#include <QTemporaryDir>
#include <QTimer>
#include <QWidget>

#include <optional>

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QPlainTextEdit;

namespace vramlab {

class ProbeChart;
class ProbeRunner;

/// The Probe tab: runs `vramlab-probe info|fit|bench` on the current scenario in the
/// background (progress, Cancel, a timeout), or imports a report made on another
/// machine, and shows measured beside predicted. Any failure of the probe is a message
/// in the tab; the rest of the window is never affected.
class ProbeView : public QWidget {
    Q_OBJECT
public:
    explicit ProbeView(QWidget* parent = nullptr);
    ~ProbeView() override;

    /// The scenario `fit` and `bench` run on (written to a temporary file per run).
    void setScenario(const Scenario& scenario);
    /// The probe program; by default the one chosen with "Probe program…" last time, else
    /// vramlab-probe next to this executable, else on PATH.
    void setProgram(const QString& path);
    const QString& program() const { return m_program; }
    void setTimeoutMs(int ms);

    /// Starts "info", "fit" or "bench".
    void run(const QString& command);
    void cancel();
    bool isRunning() const;
    /// Reads a report file; on failure the message says which key is wrong.
    bool importReport(const QString& path);

    const std::optional<ProbeReport>& report() const { return m_report; }
    QString message() const;
    ProbeChart* chart() const { return m_chart; }
    QString summaryText() const;

signals:
    /// A run ended (report shown or message set).
    void runFinished(bool ok);

private:
    void showReport(const ProbeReport& report);
    void showProgress(const QString& phase, qint64 done, qint64 total);
    void showPendingProgress();
    void setMessage(const QString& text, bool error);
    void updateButtons();

    ProbeRunner* m_runner;
    QComboBox* m_command;
    QPushButton* m_run;
    QPushButton* m_cancel;
    QPushButton* m_import;
    QPushButton* m_choose;
    QLabel* m_programLabel;
    QProgressBar* m_progress;
    QLabel* m_message;
    QPlainTextEdit* m_summary;
    ProbeChart* m_chart;
    QString m_program;
    Scenario m_scenario;
    QTemporaryDir m_tempDir;
    std::optional<ProbeReport> m_report;
    /// The latest progress not yet shown: the bar shows at most one per interval.
    struct Progress {
        QString phase;
        qint64 done = 0, total = 0;
    };
    std::optional<Progress> m_pendingProgress;
    QTimer m_progressThrottle;
};

} // namespace vramlab
