// SPDX-License-Identifier: MIT
#pragma once
// The one policy for every file VRAM Lab writes (scenarios, imports, autosave, exports):
// atomic replace, the old file kept on any failure, and nothing replaced that should not be.

#include <string>

namespace vramlab {

/// The file a save to `path` really writes, after checking it may be replaced: a symbolic
/// link is followed to its target (a dangling link: the path it names), so the link stays a
/// link; an existing target that is not a regular file (folder, device, FIFO, socket) or
/// has no write bit for anyone ("read-only", checked on the mode bits so it holds for root
/// too) is refused. Throws InputError naming `path`; an empty path is refused too.
std::string saveTarget(const std::string& path);

/// Removes leftovers of a killed save next to `target`: "<name>.tmp-<pid>" (a file, or a
/// folder of a Markdown export) whose pid is not a running process. Never throws.
void removeStaleTemporaries(const std::string& target);

/// The temporary name this process uses beside `target` ("<target>.tmp-<pid>").
std::string temporaryPathFor(const std::string& target);

/// fsync()s the folder holding `path`, so a rename into it survives a power cut.
void syncFolderOf(const std::string& path);

/// Writes `text` to `path` atomically under saveTarget()'s rules: a temporary in the same
/// folder, written, fsync()ed and renamed over the target (keeping its permissions), then
/// the folder fsync()ed. A failed write leaves the old file untouched and no temporary.
void writeFileAtomically(const std::string& path, const std::string& text);

} // namespace vramlab
