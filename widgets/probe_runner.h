// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/probe_report.h"

#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTimer>

#include <optional>

namespace vramlab {

/// Runs `vramlab-probe ... --json` in the background and turns whatever it does into
/// one outcome: a report, or a message saying what went wrong (missing program, crash,
/// no GPU, bad input, garbled output, timeout, cancelled). Never blocks the event loop.
class ProbeRunner : public QObject {
    Q_OBJECT
public:
    explicit ProbeRunner(QObject* parent = nullptr);
    ~ProbeRunner() override;

    /// Starts `program args... --json`; a run already going is cancelled first.
    void start(const QString& program, const QStringList& args);
    void cancel();
    bool isRunning() const;
    /// A run taking longer is killed and reported as hanging.
    void setTimeoutMs(int ms) { m_timer.setInterval(ms); }
    int timeoutMs() const { return m_timer.interval(); }

    const std::optional<ProbeReport>& report() const { return m_report; }

    /// The program next to this executable, else on PATH, else the bare name.
    static QString defaultProgram();

signals:
    void progressed(const QString& phase, qint64 done, qint64 total);
    /// The run is over: `report()` holds the report when there is one; `message` says
    /// what went wrong or what the probe noted (empty on a clean success).
    void finished(bool ok, const QString& message);

private:
    void readLines();
    void onFinished(int exitCode, QProcess::ExitStatus status);
    void fail(const QString& message);
    void done(bool ok, const QString& message);

    QProcess* m_process = nullptr;
    QTimer m_timer;
    QString m_program;
    QByteArray m_pending;
    QString m_garbled;
    std::optional<ProbeReport> m_report;
};

} // namespace vramlab
