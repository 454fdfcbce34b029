// SPDX-License-Identifier: MIT
#pragma once

#include <QString>

#include <optional>

namespace vramlab {

/// One window's unsaved-work file in the data folder, `autosave-<pid>-<window>.json`.
/// Each window owns its own: a second window (or a second process) never offers another
/// live window's work as a crash, and only the owner removes its file. A file whose
/// owner is gone (its process ended, or its window was destroyed without closing) is
/// an orphan: the work a crash left behind.
class AutosaveFile {
public:
    AutosaveFile();
    ~AutosaveFile();
    AutosaveFile(const AutosaveFile&) = delete;
    AutosaveFile& operator=(const AutosaveFile&) = delete;

    /// This window's file.
    const QString& path() const { return m_path; }
    /// The folder of every window's file.
    static QString folder();
    /// The file a window `window` of process `pid` writes (tests make orphans with it).
    static QString pathFor(qint64 pid, int window);
    /// The newest orphan, if any (an `autosave.json` of older versions counts as one).
    static std::optional<QString> newestOrphan();

private:
    int m_window;
    QString m_path;
};

} // namespace vramlab
