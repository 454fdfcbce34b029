// SPDX-License-Identifier: MIT
#include "vramlab/text_escape.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace vramlab {

std::string markdownEscape(std::string_view text)
{
    std::string out;
    out.reserve(text.size() + text.size() / 4);
    for (char c : text) {
        if (c == '\n' || c == '\r') {
            out += ' '; // a newline would end the heading, item or table row
            continue;
        }
        if (std::string_view("\\`*_{}[]()#+-.!|<>").find(c) != std::string_view::npos)
            out += '\\';
        out += c;
    }
    return out;
}

std::string markdownLinkTarget(std::string_view path)
{
    static const char* const kHex = "0123456789ABCDEF";
    std::string out;
    for (char ch : path) {
        const auto c = static_cast<unsigned char>(ch);
        const bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '/'
            || c == '.' || c == '_' || c == '~' || c == '-';
        if (plain) {
            out += ch;
        } else {
            out += '%';
            out += kHex[c >> 4];
            out += kHex[c & 15];
        }
    }
    return out;
}

namespace {

/// A number a spreadsheet reads as a number: only these may start with '-' or '+' unquoted.
bool isNumber(std::string_view s)
{
    if (s.empty())
        return false;
    std::string_view digits = s;
    if (digits.front() == '+' || digits.front() == '-')
        digits.remove_prefix(1);
    if (digits.empty() || !((digits.front() >= '0' && digits.front() <= '9') || digits.front() == '.'))
        return false;
    double v = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    return ec == std::errc() && ptr == digits.data() + digits.size() && std::isfinite(v);
}

} // namespace

std::string csvField(std::string_view text)
{
    std::string s(text);
    if (!s.empty() && std::string_view("=+-@\t\r").find(s.front()) != std::string_view::npos && !isNumber(s))
        s.insert(s.begin(), '\'');
    if (s.find_first_of(",\"\r\n") == std::string::npos)
        return s;
    std::string out = "\"";
    for (char c : s)
        out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

namespace {

/// Length of the well-formed UTF-8 sequence at `i` (1 to 4), or 0 where the bytes there are
/// not one (a stray continuation, an overlong form, a surrogate, beyond U+10FFFF, cut short).
std::size_t utf8Length(std::string_view s, std::size_t i)
{
    const auto b = static_cast<unsigned char>(s[i]);
    const std::size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size() || (n == 2 && b < 0xC2))
        return 0;
    for (std::size_t k = 1; k < n; ++k)
        if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80)
            return 0;
    const auto b1 = n > 1 ? static_cast<unsigned char>(s[i + 1]) : 0;
    if ((n == 3 && b == 0xE0 && b1 < 0xA0) || (n == 3 && b == 0xED && b1 >= 0xA0) || (n == 4 && b == 0xF0 && b1 < 0x90)
        || (n == 4 && (b > 0xF4 || (b == 0xF4 && b1 >= 0x90))))
        return 0;
    return n;
}

} // namespace

bool isValidUtf8(std::string_view bytes)
{
    for (std::size_t i = 0; i < bytes.size();) {
        const std::size_t n = utf8Length(bytes, i);
        if (n == 0)
            return false;
        i += n;
    }
    return true;
}

std::string printableText(std::string_view text, std::size_t maxBytes)
{
    static constexpr char kHex[] = "0123456789abcdef", kHexUpper[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(std::min(text.size(), maxBytes) + 8);
    for (std::size_t i = 0; i < text.size();) {
        std::string piece;
        const std::size_t n = utf8Length(text, i);
        const auto b = static_cast<unsigned char>(text[i]);
        if (n == 0) {
            piece = std::string("\\x") + kHexUpper[b >> 4] + kHexUpper[b & 0xF];
        } else if (n == 1 && (b < 0x20 || b == 0x7F)) {
            piece = b == '\n' ? "\\n"
                : b == '\t'   ? "\\t"
                : b == '\r'   ? "\\r"
                              : std::string("\\u00") + kHex[b >> 4] + kHex[b & 0xF];
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

void appendUtf8(std::string& out, std::uint32_t cp)
{
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

} // namespace vramlab
