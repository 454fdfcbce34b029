// SPDX-License-Identifier: MIT
#include "autosave_file.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSet>
#include <QStandardPaths>

#include <cerrno>
#include <csignal>

namespace vramlab {

namespace {

int g_nextWindow = 1;
QSet<int>& liveWindows()
{
    static QSet<int> windows;
    return windows;
}

bool processAlive(qint64 pid)
{
    // kill(pid, 0) delivers nothing: 0 or EPERM means a process with that id exists.
    return pid > 0 && (::kill(pid_t(pid), 0) == 0 || errno == EPERM);
}

bool ownerAlive(qint64 pid, int window)
{
    if (pid == QCoreApplication::applicationPid())
        return liveWindows().contains(window);
    return processAlive(pid);
}

} // namespace

AutosaveFile::AutosaveFile()
    : m_window(g_nextWindow++)
    , m_path(pathFor(QCoreApplication::applicationPid(), m_window))
{
    liveWindows().insert(m_window);
}

AutosaveFile::~AutosaveFile()
{
    liveWindows().remove(m_window);
}

QString AutosaveFile::folder()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
}

QString AutosaveFile::pathFor(qint64 pid, int window)
{
    return QDir(folder()).filePath(
        QStringLiteral("autosave-%1-%2.json").arg(QString::number(pid), QString::number(window)));
}

std::optional<QString> AutosaveFile::newestOrphan()
{
    static const QRegularExpression name(QStringLiteral("^autosave-(\\d+)-(\\d+)\\.json$"));
    const QFileInfoList files
        = QDir(folder()).entryInfoList({ QStringLiteral("autosave*.json") }, QDir::Files, QDir::Time);
    for (const QFileInfo& f : files) { // newest first
        const QRegularExpressionMatch m = name.match(f.fileName());
        const bool legacy = f.fileName() == QLatin1String("autosave.json");
        if ((legacy || m.hasMatch()) && (legacy || !ownerAlive(m.captured(1).toLongLong(), m.captured(2).toInt())))
            return f.absoluteFilePath();
    }
    return std::nullopt;
}

} // namespace vramlab
