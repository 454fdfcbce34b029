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
/// no GPU, bad input, garbled output, a flood of output, timeout, cancelled). Never
/// blocks the event loop; its buffers never exceed the caps below. On Unix the probe
/// runs in its own process group, killed whole when the run ends (anything the probe
/// started in the background included).
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

    /// The longest stdout line (a report is one line, as long as the reader's file cap)
    /// and the most stderr kept (the probe writes one line there); more stops the probe.
    static constexpr qsizetype kMaxStdoutLineBytes = qsizetype(kMaxProbeReportFileBytes);
    static constexpr qsizetype kMaxStderrBytes = 1024 * 1024;
    /// The most bytes the buffers held during the last run (tests check the caps).
    qsizetype peakStdoutBufferBytes() const { return m_peakStdoutBytes; }
    qsizetype peakStderrBufferBytes() const { return m_peakStderrBytes; }

    /// The program next to this executable, else on PATH, else the bare name.
    static QString defaultProgram();

signals:
    void progressed(const QString& phase, qint64 done, qint64 total);
    /// The run is over: `report()` holds the report when there is one; `message` says
    /// what went wrong or what the probe noted (empty on a clean success).
    void finished(bool ok, const QString& message);

private:
    void readStdout();
    void readStderr();
    /// Handles one complete stdout line; false when it was garbage (the run is then over).
    bool handleLine(QByteArrayView line);
    void onFinished(int exitCode, QProcess::ExitStatus status);
    void fail(const QString& message);
    void done(bool ok, const QString& message);
    void killProcessGroup();

    QProcess* m_process = nullptr;
    qint64 m_processGroup = 0; ///< the probe's pid, its group's id; 0 when none
    quint64 m_runId = 0; ///< changes when a run starts or ends (slots may re-enter)
    QTimer m_timer;
    QString m_program;
    QByteArray m_stdout; ///< the unfinished last line of stdout
    qsizetype m_scannedBytes = 0; ///< how much of m_stdout has no newline
    QByteArray m_stderr; ///< stderr, up to kMaxStderrBytes
    std::optional<ProbeReport> m_report;
    qsizetype m_peakStdoutBytes = 0;
    qsizetype m_peakStderrBytes = 0;
};

} // namespace vramlab
