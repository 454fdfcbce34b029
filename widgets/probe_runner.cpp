// SPDX-License-Identifier: MIT
#include "probe_runner.h"

#include "vramlab/errors.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

namespace vramlab {

namespace {

constexpr int kDefaultTimeoutMs = 15 * 60 * 1000; // a bench of a large scenario takes minutes
constexpr qsizetype kMaxLineBytes = qsizetype(kMaxProbeReportFileBytes);

/// The first line of the probe's stderr (its one-line reason), or a fallback.
QString firstLine(const QByteArray& text, const QString& fallback)
{
    const QString line = QString::fromUtf8(text).trimmed().section(QLatin1Char('\n'), 0, 0).trimmed();
    return line.isEmpty() ? fallback : line;
}

} // namespace

ProbeRunner::ProbeRunner(QObject* parent) : QObject(parent)
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

bool ProbeRunner::isRunning() const { return m_process != nullptr; }

void ProbeRunner::start(const QString& program, const QStringList& args)
{
    if (m_process)
        cancel();
    m_program = program;
    m_pending.clear();
    m_garbled.clear();
    m_report.reset();
    m_process = new QProcess(this);
    connect(m_process, &QProcess::readyReadStandardOutput, this, &ProbeRunner::readLines);
    connect(m_process, &QProcess::finished, this, &ProbeRunner::onFinished);
    connect(m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart)
            fail(tr("vramlab-probe could not be started (%1): %2. Build it with a CUDA toolkit, or choose the program.")
                     .arg(m_program, m_process->errorString()));
    });
    m_timer.start();
    m_process->start(program, args + QStringList{QStringLiteral("--json")});
}

void ProbeRunner::cancel()
{
    if (m_process)
        fail(tr("Cancelled."));
}

void ProbeRunner::readLines()
{
    if (!m_process)
        return;
    m_pending += m_process->readAllStandardOutput();
    qsizetype newline;
    while ((newline = m_pending.indexOf('\n')) >= 0) {
        const QByteArray line = m_pending.left(newline).trimmed();
        m_pending.remove(0, newline + 1);
        if (line.isEmpty() || !m_garbled.isEmpty())
            continue;
        const nlohmann::json doc = nlohmann::json::parse(line.constData(), line.constData() + line.size(), nullptr, false);
        try {
            if (doc.is_discarded())
                m_garbled = tr("not JSON");
            else if (const std::optional<ProbeProgress> p = readProbeProgress(doc))
                emit progressed(QString::fromStdString(p->phase), p->done, p->total);
            else if (doc.is_object() && doc.contains("probe_report"))
                m_report = readProbeReport(doc, "vramlab-probe output");
            else
                m_garbled = tr("neither progress nor a report");
        } catch (const InputError& e) {
            m_garbled = QString::fromStdString(e.what());
        }
        if (!m_garbled.isEmpty())
            m_garbled += QStringLiteral(": \"%1\"").arg(QString::fromUtf8(line.left(80)));
    }
    if (m_pending.size() > kMaxLineBytes && m_garbled.isEmpty()) {
        m_garbled = tr("a line longer than %1 bytes").arg(kMaxLineBytes);
        m_pending.clear();
    }
}

void ProbeRunner::onFinished(int exitCode, QProcess::ExitStatus status)
{
    if (!m_process)
        return;
    readLines();
    const QByteArray err = m_process->readAllStandardError();
    if (status != QProcess::NormalExit)
        return fail(tr("vramlab-probe crashed (%1). No measurement was kept.").arg(firstLine(err, m_process->errorString())));
    if (!m_garbled.isEmpty())
        return fail(tr("vramlab-probe printed something that is not its report (%1).").arg(m_garbled));
    if (exitCode == 3 && !m_report)
        return fail(tr("No usable GPU: %1").arg(firstLine(err, tr("vramlab-probe exited with 3 and gave no reason"))));
    if (exitCode == 2)
        return fail(tr("vramlab-probe rejected its input: %1").arg(firstLine(err, tr("no reason given"))));
    if (exitCode != 0 && exitCode != 3)
        return fail(tr("vramlab-probe failed (exit %1): %2").arg(exitCode).arg(firstLine(err, tr("no reason given"))));
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
    m_timer.stop();
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

} // namespace vramlab
