// SPDX-License-Identifier: MIT
#include "vramlab/errors.h"

#include <algorithm>

namespace vramlab {

namespace {

// Lengths of what an error may echo: enough for any real path, key or expectation.
constexpr std::size_t kMaxFileBytes = 400;
constexpr std::size_t kMaxKeyPathBytes = 200;
constexpr std::size_t kMaxExpectedBytes = 600;

/// Length of the valid UTF-8 sequence at `i`, or 0 when the bytes there are not one.
std::size_t utf8Length(std::string_view s, std::size_t i)
{
    const auto b = static_cast<unsigned char>(s[i]);
    std::size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size() || (n == 2 && b < 0xC2))
        return 0;
    for (std::size_t k = 1; k < n; ++k)
        if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80)
            return 0;
    const auto b1 = static_cast<unsigned char>(s[i + 1 < s.size() ? i + 1 : i]);
    if ((n == 3 && b == 0xE0 && b1 < 0xA0) || (n == 3 && b == 0xED && b1 >= 0xA0) || (n == 4 && b == 0xF0 && b1 < 0x90) ||
        (n == 4 && (b > 0xF4 || (b == 0xF4 && b1 >= 0x90))))
        return 0; // overlong, surrogate or beyond U+10FFFF
    return n;
}

} // namespace

std::string printableText(std::string_view text, std::size_t maxBytes)
{
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(std::min(text.size(), maxBytes) + 8);
    for (std::size_t i = 0; i < text.size();) {
        std::string piece;
        const std::size_t n = utf8Length(text, i);
        const auto b = static_cast<unsigned char>(text[i]);
        if (n == 0) {
            piece = std::string("\\x") + kHex[b >> 4] + kHex[b & 0xF];
        } else if (n == 1 && (b < 0x20 || b == 0x7F)) {
            piece = b == '\n' ? "\\n" : b == '\t' ? "\\t" : b == '\r' ? "\\r" : std::string("\\u00") + kHex[b >> 4] + kHex[b & 0xF];
        } else if (n == 2 && b == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) {
            const auto c = static_cast<unsigned char>(text[i + 1]); // C1 controls (U+0080..U+009F): CSI and friends
            piece = std::string("\\u00") + kHex[c >> 4] + kHex[c & 0xF];
        } else {
            piece.assign(text.substr(i, n));
        }
        if (out.size() + piece.size() > maxBytes) {
            out += "…";
            return out;
        }
        out += piece;
        i += n == 0 ? 1 : n;
    }
    return out;
}

InputError::InputError(std::string keyPath, std::string expected, std::string file)
    : std::runtime_error(compose(printableText(file, kMaxFileBytes), printableText(keyPath, kMaxKeyPathBytes),
                                 printableText(expected, kMaxExpectedBytes)))
    , m_keyPath(printableText(keyPath, kMaxKeyPathBytes))
    , m_expected(printableText(expected, kMaxExpectedBytes))
    , m_file(printableText(file, kMaxFileBytes))
{
}

InputError InputError::withFile(const std::string& file) const
{
    return InputError(m_keyPath, m_expected, m_file.empty() ? file : m_file);
}

std::string InputError::compose(const std::string& file, const std::string& keyPath, const std::string& expected)
{
    std::string msg;
    if (!file.empty())
        msg += file + ": ";
    if (!keyPath.empty())
        msg += keyPath + ": ";
    return msg + expected;
}

} // namespace vramlab
