// SPDX-License-Identifier: MIT
// `vramlab --export …` as the export tests run it: no display at all, exit code and output.
#pragma once

#include <QFile>
#include <QProcess>
#include <QStringList>

namespace vramlab::test {

struct Run {
    int code = -1;
    QByteArray out, err;
};

/// The desktop program (VRAMLAB_GUI) with `args` and no display variables.
inline Run headless(const QStringList& args)
{
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char* var : { "DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM" })
        env.remove(QString::fromLatin1(var));
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(VRAMLAB_GUI), args);
    p.waitForFinished(60000);
    return { p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
        p.readAllStandardError() };
}

inline QByteArray slurp(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

} // namespace vramlab::test
