// SPDX-License-Identifier: MIT
#pragma once

#include <QStringList>

namespace vramlab {

/// `vramlab --export OUT --chart KIND [--width W --height H --theme light|dark --page slide|a4|letter]
/// SCENARIO.json [MORE.json…]`:
/// writes OUT (format from its extension) without showing a window. Returns the exit
/// code: 0 written, 2 bad input (one line on stderr naming the file and what was expected).
/// Call with a QApplication alive (the offscreen platform when there is no display).
int runHeadlessExport(const QStringList& arguments);

/// Checks the raw arguments before Qt decodes them: 2 (and one line on stderr naming the
/// argument) when one is not valid UTF-8, else 0.
int checkExportArguments(int argc, char** argv);

/// True when the command line asks for an export (then no window is created).
bool wantsExport(int argc, char** argv);

} // namespace vramlab
