// SPDX-License-Identifier: MIT
#pragma once
// Runs one of the project's programs as a user would, for the command-line tests.

#include <QProcess>
#include <QString>
#include <QStringList>

namespace vramlab::test {

struct Run {
    int code = -1; ///< -1 when the program crashed or did not finish
    QByteArray out, err;
};

inline Run runProgram(const QString& program, const QStringList& args)
{
    QProcess p;
    p.start(program, args);
    p.waitForFinished(60000);
    return { p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
        p.readAllStandardError() };
}

inline QString dataFile(const char* name)
{
    return QStringLiteral(VRAMLAB_TEST_DATA_DIR "/") + QString::fromUtf8(name);
}

} // namespace vramlab::test
