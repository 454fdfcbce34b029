// SPDX-License-Identifier: MIT
#pragma once
// Escaping user strings (scenario, model and GPU names, unknown keys, file names) for the
// text formats the reports are written in, so a name can never forge Markdown or a formula.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace vramlab {

/// Markdown text: backslash before \ ` * _ { } [ ] ( ) # + - . ! | < > and newlines (CR, LF)
/// as spaces, so the string reads as itself in a heading, a list or a table cell.
std::string markdownEscape(std::string_view text);

/// A relative path as a Markdown link destination: bytes outside [A-Za-z0-9/._~-] are
/// percent-encoded, so spaces, parentheses and angle brackets cannot end the link.
std::string markdownLinkTarget(std::string_view path);

/// One CSV text field. A text cell starting with = + - @ tab or CR gets a leading single
/// quote (OWASP's advice against formula injection in spreadsheet tools); a number, even a
/// negative one, stays as it is. Quoted when it holds a comma, quote, CR or LF.
std::string csvField(std::string_view text);

/// Whether `bytes` is well-formed UTF-8 (no overlongs, surrogates or code points > U+10FFFF).
bool isValidUtf8(std::string_view bytes);

/// Appends one Unicode scalar value (at most 0x10FFFF, no surrogate) as UTF-8.
void appendUtf8(std::string& out, std::uint32_t codePoint);

/// Text from a file or an argument made safe to echo in one line: control characters and
/// escape sequences shown escaped (\n, \u001b, C1 controls too), bytes that are not UTF-8
/// as \xFF, and cut at `maxBytes` (on a character boundary) with "…". Idempotent, so a
/// re-wrapped error is not escaped twice.
std::string printableText(std::string_view text, std::size_t maxBytes = 300);

} // namespace vramlab
