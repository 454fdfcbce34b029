// SPDX-License-Identifier: MIT
#include "probe_runner.h"

#include "vramlab/errors.h"

#include <QByteArrayView>
#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

#include <algorithm>

#ifdef Q_OS_UNIX
#include <csignal>
#include <unistd.h>
#endif

namespace vramlab {

namespace {

constexpr int kDefaultTimeoutMs = 15 * 60 * 1000; // a bench of a large scenario takes minutes
/// A message quotes at most this much of the probe's stderr line (a flood stays readable).
constexpr qsizetype kMaxQuotedChars = 500;
/// ... and this much of a garbled stdout line.
constexpr qsizetype kMaxQuotedGarbageBytes = 80;

/// The first line of the probe's stderr (its one-line reason), or a fallback.
QString firstLine(const QByteArray& text, const QString& fallback)
{
    const QByteArray trimmed = text.trimmed();
    const qsizetype newline = trimmed.indexOf('\n');
    QString line = QString::fromUtf8(newline < 0 ? trimmed : trimmed.first(newline)).trimmed();
    if (line.size() > kMaxQuotedChars)
        line = line.first(kMaxQuotedChars) + QChar(0x2026); // …
    return line.isEmpty() ? fallback : line;
}

QString garbage(const QString& what)
{
    return ProbeRunner::tr("vramlab-probe printed something that is not its report (%1).").arg(what);
}

} // namespace

ProbeRunner::ProbeRunner(QObject* parent)
    : QObject(parent)
{
    m_timer.setSingleShot(true);
    m_timer.setInterval(kDefaultTimeoutMs);
    connect(&m_timer, &QTimer::timeout, this, [this] {
        fail(tr("vramlab-probe did not finish within %1 s and was stopped (is the GPU busy or hung?)")
                 .arg(m_timer.interval() / 1000.0, 0, 'g', 3));
    });
}

ProbeRunner::~ProbeRunner()
{
    // The window closing (the app's exit) ends the probe and whatever it started.
    killProcessGroup();
    if (m_process) {
        m_process->disconnect(this);
        m_process->kill();
        m_process->waitForFinished(2000);
    }
}

QString ProbeRunner::defaultProgram()
{
    const QString beside = QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("vramlab-probe"));
    if (QFileInfo(beside).isExecutable())
        return beside;
    const QString onPath = QStandardPaths::findExecutable(QStringLiteral("vramlab-probe"));
    return onPath.isEmpty() ? QStringLiteral("vramlab-probe") : onPath;
}

bool ProbeRunner::isRunning() const
{
    return m_process != nullptr;
}

void ProbeRunner::start(const QString& program, const QStringList& args)
{
    if (m_process)
        cancel();
    ++m_runId;
    m_program = program;
    m_stdout.clear();
    m_scannedBytes = 0;
    m_stderr.clear();
    m_peakStdoutBytes = m_peakStderrBytes = 0;
    m_report.reset();
    m_process = new QProcess(this);
    connect(m_process, &QProcess::readyReadStandardOutput, this, &ProbeRunner::readStdout);
    connect(m_process, &QProcess::readyReadStandardError, this, &ProbeRunner::readStderr);
    connect(m_process, &QProcess::finished, this, &ProbeRunner::onFinished);
    connect(m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart)
            fail(tr("vramlab-probe could not be started (%1): %2. Build it with a CUDA toolkit, or choose the program.")
                     .arg(m_program, m_process->errorString()));
    });
#ifdef Q_OS_UNIX
    // Its own process group, so that one kill also reaches what the probe starts.
    m_process->setChildProcessModifier([] { ::setpgid(0, 0); });
#endif
    m_timer.start();
    QProcess* process = m_process;
    process->start(program, args + QStringList { QStringLiteral("--json") });
#ifdef Q_OS_UNIX
    if (m_process == process && process->processId() > 0) {
        m_processGroup = process->processId();
        // The parent sets it too, so no kill can come before the child's setpgid (fails
        // harmlessly once the probe has started).
        ::setpgid(pid_t(m_processGroup), pid_t(m_processGroup));
    }
#endif
}

void ProbeRunner::cancel()
{
    if (m_process)
        fail(tr("Cancelled."));
}

void ProbeRunner::readStdout()
{
    const quint64 run = m_runId;
    while (m_process && m_process->bytesAvailable() > 0) {
        // At most one line of the cap and its newline in the buffer; the rest waits in
        // QProcess (one pipe's worth) until lines are consumed. Asking for no more than is
        // there keeps QIODevice::read from allocating the whole room each time.
        const qint64 room = kMaxStdoutLineBytes + 1 - m_stdout.size();
        m_stdout += m_process->read(std::min(m_process->bytesAvailable(), room));
        m_peakStdoutBytes = std::max(m_peakStdoutBytes, m_stdout.size());
        qsizetype lineStart = 0;
        qsizetype newline;
        while ((newline = m_stdout.indexOf('\n', m_scannedBytes)) >= 0) {
            const QByteArrayView line = QByteArrayView(m_stdout).sliced(lineStart, newline - lineStart);
            if (!handleLine(line) || m_runId != run)
                return; // garbage ended the run, or a slot ended or restarted it
            lineStart = m_scannedBytes = newline + 1;
        }
        // The parsed lines leave in one move per read: removing each from the front was
        // quadratic in the lines per read.
        m_stdout.remove(0, lineStart);
        m_scannedBytes = m_stdout.size(); // a long partial line is not searched again
        if (m_stdout.size() > kMaxStdoutLineBytes)
            return fail(garbage(tr("a line longer than %1 MiB").arg(kMaxStdoutLineBytes >> 20)));
    }
}

bool ProbeRunner::handleLine(QByteArrayView line)
{
    line = line.trimmed();
    if (line.isEmpty())
        return true;
    QString what;
    const nlohmann::json doc = nlohmann::json::parse(line.data(), line.data() + line.size(), nullptr, false);
    try {
        if (doc.is_discarded()) {
            what = tr("not JSON");
        } else if (const std::optional<ProbeProgress> p = readProbeProgress(doc)) {
            emit progressed(QString::fromStdString(p->phase), p->done, p->total);
            return true;
        } else if (doc.is_object() && doc.contains("probe_report")) {
            m_report = readProbeReport(doc, "vramlab-probe output");
            return true;
        } else {
            what = tr("neither progress nor a report");
        }
    } catch (const InputError& e) {
        what = QString::fromStdString(e.what());
    }
    const QByteArrayView quoted = line.first(std::min(line.size(), kMaxQuotedGarbageBytes));
    fail(garbage(QStringLiteral("%1: \"%2\"").arg(what, QString::fromUtf8(quoted))));
    return false;
}

void ProbeRunner::readStderr()
{
    if (!m_process)
        return;
    // One pipe read at a time: QProcess signals each.
    const QByteArray chunk = m_process->readAllStandardError();
    const qsizetype kept = std::min(chunk.size(), kMaxStderrBytes - m_stderr.size());
    m_stderr += chunk.first(kept);
    m_peakStderrBytes = std::max(m_peakStderrBytes, m_stderr.size());
    if (kept < chunk.size())
        fail(tr("vramlab-probe wrote more than %1 MiB to stderr and was stopped: %2")
                 .arg(QString::number(kMaxStderrBytes >> 20), firstLine(m_stderr, tr("no text"))));
}

void ProbeRunner::onFinished(int exitCode, QProcess::ExitStatus status)
{
    if (!m_process)
        return;
    const quint64 run = m_runId;
    readStdout();
    if (m_runId == run)
        readStderr();
    if (m_runId != run)
        return; // the last output was garbage or a flood
    const QByteArray& err = m_stderr;
    if (status != QProcess::NormalExit)
        return fail(
            tr("vramlab-probe crashed (%1). No measurement was kept.").arg(firstLine(err, m_process->errorString())));
    if (exitCode == 3 && !m_report)
        return fail(tr("No usable GPU: %1").arg(firstLine(err, tr("vramlab-probe exited with 3 and gave no reason"))));
    if (exitCode == 2)
        return fail(tr("vramlab-probe rejected its input: %1").arg(firstLine(err, tr("no reason given"))));
    if (exitCode != 0 && exitCode != 3)
        return fail(tr("vramlab-probe failed (exit %1): %2")
                        .arg(QString::number(exitCode), firstLine(err, tr("no reason given"))));
    if (!m_report)
        return fail(tr("vramlab-probe finished without a report."));
    // Exit 3 with a report: the bench ran but could not time GEMMs; keep what it measured.
    done(true, exitCode == 3 ? firstLine(err, QString()) : QString());
}

void ProbeRunner::fail(const QString& message)
{
    m_report.reset();
    done(false, message);
}

void ProbeRunner::done(bool ok, const QString& message)
{
    ++m_runId;
    m_timer.stop();
    killProcessGroup(); // also on success: nothing the probe left running outlives the run
    if (QProcess* p = m_process) {
        m_process = nullptr;
        p->disconnect(this);
        if (p->state() != QProcess::NotRunning) {
            p->kill();
            p->waitForFinished(2000);
        }
        p->deleteLater();
    }
    emit finished(ok, message);
}

void ProbeRunner::killProcessGroup()
{
#ifdef Q_OS_UNIX
    // SIGKILL: the probe keeps nothing worth saving, and the driver frees its GPU memory.
    if (m_processGroup > 0)
        ::kill(-pid_t(m_processGroup), SIGKILL);
#endif
    m_processGroup = 0;
}

} // namespace vramlab
