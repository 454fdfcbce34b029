// SPDX-License-Identifier: MIT
#include "vramlab/toml_reader.h"

#include "vramlab/errors.h"
#include "vramlab/text_escape.h"

#include <cctype>
#include <charconv>
#include <map>
#include <vector>

namespace vramlab {

namespace {

using nlohmann::json;

constexpr std::size_t kMaxDepth = 32; ///< nested tables, keys, arrays and inline tables

bool bareKeyChar(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

/// One pass over the text, line by line (TOML v1.0.0's grammar, less what training configs never use).
class Parser {
public:
    Parser(std::string_view text, const std::string& file)
        : m_text(text)
        , m_file(file)
    {
    }

    json parse()
    {
        if (m_text.size() > kMaxTomlFileBytes)
            fail("a TOML file of at most 1 MiB");
        if (!isValidUtf8(m_text))
            throw InputError("(file)", "UTF-8 text, as TOML is", m_file);
        json root = json::object();
        json* table = &root;
        std::vector<std::string> tablePath; // the current [header]
        for (;;) {
            skipBlank(true);
            if (atEnd())
                return root;
            if (peek() == '[') {
                ++m_pos;
                if (peek() == '[')
                    fail("a [table]; arrays of tables ([[...]]) are not read");
                skipBlank(false);
                tablePath = keyPath();
                skipBlank(false);
                expect(']', "']' closing the table header");
                table = &header(root, tablePath);
                endOfLine();
            } else {
                const std::vector<std::string> path = keyPath();
                skipBlank(false);
                expect('=', "'=' after the key");
                skipBlank(false);
                if (tablePath.size() + path.size() > kMaxDepth)
                    fail("keys nested at most 32 deep");
                assign(*table, tablePath, path, value(0), true);
                endOfLine();
            }
        }
    }

private:
    [[noreturn]] void fail(const std::string& expected) const
    {
        throw InputError("line " + std::to_string(m_line), expected, m_file);
    }
    bool atEnd() const { return m_pos >= m_text.size(); }
    /// What TOML allows in no string or comment: U+0000 to U+001F but tab, and DEL.
    static bool controlChar(char c) { return (static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7F; }
    char peek(std::size_t ahead = 0) const { return m_pos + ahead < m_text.size() ? m_text[m_pos + ahead] : '\0'; }
    void expect(char c, const char* what)
    {
        if (peek() != c)
            fail(std::string("expected ") + what);
        ++m_pos;
    }

    /// Spaces and tabs, comments, and with `newlines` line ends too.
    void skipBlank(bool newlines)
    {
        while (!atEnd()) {
            const char c = peek();
            if (c == ' ' || c == '\t') {
                ++m_pos;
            } else if (c == '#') {
                while (!atEnd() && peek() != '\n') {
                    if (controlChar(peek()) && !(peek() == '\r' && peek(1) == '\n'))
                        fail("no control characters in a comment");
                    ++m_pos;
                }
            } else if (newlines && (c == '\n' || (c == '\r' && peek(1) == '\n'))) {
                m_pos += c == '\r' ? 2 : 1;
                ++m_line;
            } else {
                return;
            }
        }
    }

    void endOfLine()
    {
        skipBlank(false);
        if (atEnd())
            return;
        if (peek() == '\r' && peek(1) == '\n')
            ++m_pos;
        if (peek() != '\n')
            fail("the end of the line after the value (one key = value per line)");
        ++m_pos;
        ++m_line;
    }

    std::vector<std::string> keyPath()
    {
        std::vector<std::string> path;
        for (;;) {
            const char c = peek();
            if (c == '"' || c == '\'') {
                path.push_back(c == '"' ? basicString() : literalString());
            } else {
                const std::size_t start = m_pos;
                while (bareKeyChar(peek()))
                    ++m_pos;
                if (m_pos == start)
                    fail("a key (letters, digits, '_' and '-', or a quoted string)");
                path.emplace_back(m_text.substr(start, m_pos - start));
            }
            skipBlank(false);
            if (peek() != '.')
                return path;
            if (path.size() >= kMaxDepth)
                fail("keys of at most 32 dotted parts");
            ++m_pos;
            skipBlank(false);
        }
    }

    /// How a table came to be, for TOML's rules on defining it again (as Python's tomllib applies them): a [header]
    /// defines a table once (its implicit parents may get their own header later); dotted keys define the tables
    /// they pass through, which a header may then not define, and may not pass through a header's table; an inline
    /// table is closed.
    enum class Made { Header, Parent, Dotted, Inline };
    static std::string joined(const std::vector<std::string>& path, std::size_t n)
    {
        std::string key;
        for (std::size_t i = 0; i < n; ++i)
            key.append(i ? "\x1f" : "").append(path[i]); // not "." : ["a.b"] is one key
        return key;
    }
    static std::string shown(const std::vector<std::string>& path, std::size_t n)
    {
        std::string text;
        for (std::size_t i = 0; i < n; ++i)
            text.append(i ? "." : "").append(path[i]);
        return text;
    }

    json& header(json& root, const std::vector<std::string>& path)
    {
        if (path.size() > kMaxDepth)
            fail("tables nested at most 32 deep");
        json* at = &root;
        for (std::size_t i = 1; i <= path.size(); ++i) {
            json& next = (*at)[path[i - 1]];
            if (next.is_null())
                next = json::object();
            else if (!next.is_object())
                fail("a table at [" + shown(path, path.size()) + "]; " + shown(path, i) + " is already a value");
            const auto [it, fresh] = m_made.try_emplace(joined(path, i), i < path.size() ? Made::Parent : Made::Header);
            if (!fresh && it->second == Made::Inline)
                fail("a new table; " + shown(path, i) + " is an inline table, which cannot be extended");
            if (!fresh && i == path.size()) {
                if (it->second != Made::Parent)
                    fail("each table once; [" + shown(path, i) + "] is already defined"
                        + (it->second == Made::Dotted ? " by dotted keys" : ""));
                it->second = Made::Header;
            }
            at = &next;
        }
        return *at;
    }

    /// `table` (at `prefix`, empty inside inline tables) gets `path` = `v`; `track`: follow TOML's rules above.
    void assign(
        json& table, const std::vector<std::string>& prefix, const std::vector<std::string>& path, json v, bool track)
    {
        std::vector<std::string> full = prefix;
        json* at = &table;
        for (std::size_t i = 0; i + 1 < path.size(); ++i) {
            full.push_back(path[i]);
            json& next = (*at)[path[i]];
            if (next.is_null())
                next = json::object();
            else if (!next.is_object())
                fail("a table at \"" + shown(full, full.size()) + "\"; it is already a value");
            if (track) {
                const auto [it, fresh] = m_made.try_emplace(joined(full, full.size()), Made::Dotted);
                if (!fresh && (it->second == Made::Header || it->second == Made::Inline))
                    fail("a new key; dotted keys cannot add to " + shown(full, full.size())
                        + (it->second == Made::Inline ? ", an inline table" : ", a table defined by a [header]"));
                it->second = Made::Dotted;
            }
            at = &next;
        }
        if (at->contains(path.back()))
            fail("each key once; \"" + path.back() + "\" is defined twice");
        full.push_back(path.back());
        if (track && v.is_object())
            closeInline(full, v);
        (*at)[path.back()] = std::move(v);
    }

    /// An inline table and every table inside it are closed to later keys and headers.
    void closeInline(std::vector<std::string>& path, const json& v)
    {
        m_made[joined(path, path.size())] = Made::Inline;
        for (const auto& [k, child] : v.items())
            if (child.is_object()) {
                path.push_back(k);
                closeInline(path, child);
                path.pop_back();
            }
    }

    json value(std::size_t depth)
    {
        if (depth >= kMaxDepth)
            fail("arrays and inline tables nested at most 32 deep");
        const char c = peek();
        if (c == '"') {
            if (peek(1) == '"' && peek(2) == '"')
                fail("a one-line string; multi-line strings (\"\"\") are not read");
            return basicString();
        }
        if (c == '\'') {
            if (peek(1) == '\'' && peek(2) == '\'')
                fail("a one-line string; multi-line literal strings (''') are not read");
            return literalString();
        }
        if (c == '[')
            return array(depth);
        if (c == '{')
            return inlineTable(depth);
        return scalar();
    }

    std::string basicString()
    {
        ++m_pos; // the opening quote
        std::string out;
        for (;;) {
            if (atEnd() || peek() == '\n')
                fail("a string closed by '\"' on its line");
            const char c = m_text[m_pos++];
            if (c == '"')
                return out;
            if (controlChar(c))
                fail("no control characters in a string (write them as escapes)");
            if (c != '\\') {
                out += c;
                continue;
            }
            const char e = atEnd() ? '\0' : m_text[m_pos++];
            switch (e) {
            case 'b':
                out += '\b';
                break;
            case 't':
                out += '\t';
                break;
            case 'n':
                out += '\n';
                break;
            case 'f':
                out += '\f';
                break;
            case 'r':
                out += '\r';
                break;
            case '"':
                out += '"';
                break;
            case '\\':
                out += '\\';
                break;
            case 'u':
            case 'U': {
                const std::size_t digits = e == 'u' ? 4 : 8;
                unsigned long cp = 0;
                const char* first = m_text.data() + m_pos;
                if (m_pos + digits > m_text.size()
                    || std::from_chars(first, first + digits, cp, 16).ptr != first + digits
                    || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
                    fail("a Unicode escape of " + std::to_string(digits) + " hexadecimal digits (a scalar value)");
                m_pos += digits;
                appendUtf8(out, static_cast<std::uint32_t>(cp));
                break;
            }
            default:
                fail("an escape among \\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX \\UXXXXXXXX");
            }
        }
    }

    std::string literalString()
    {
        ++m_pos;
        const std::size_t start = m_pos;
        while (!atEnd() && peek() != '\'' && peek() != '\n') {
            if (controlChar(peek()))
                fail("no control characters in a literal string");
            ++m_pos;
        }
        if (peek() != '\'')
            fail("a literal string closed by ' on its line");
        std::string out(m_text.substr(start, m_pos - start));
        ++m_pos;
        return out;
    }

    json array(std::size_t depth)
    {
        ++m_pos;
        json out = json::array();
        for (;;) {
            skipBlank(true);
            if (peek() == ']') {
                ++m_pos;
                return out;
            }
            if (atEnd())
                fail("']' closing the array");
            out.push_back(value(depth + 1));
            skipBlank(true);
            if (peek() == ',')
                ++m_pos;
            else if (peek() != ']')
                fail("',' or ']' after an array element");
        }
    }

    json inlineTable(std::size_t depth)
    {
        ++m_pos;
        json out = json::object();
        skipBlank(false);
        if (peek() == '}') {
            ++m_pos;
            return out;
        }
        for (;;) {
            const std::vector<std::string> path = keyPath();
            skipBlank(false);
            expect('=', "'=' after the key");
            skipBlank(false);
            assign(out, {}, path, value(depth + 1), false);
            skipBlank(false);
            if (peek() == '}') {
                ++m_pos;
                return out;
            }
            expect(',', "',' or '}' in an inline table (on one line)");
            skipBlank(false);
        }
    }

    /// true, false, an integer or a float.
    json scalar()
    {
        const std::size_t start = m_pos;
        while (!atEnd() && (bareKeyChar(peek()) || peek() == '+' || peek() == '.' || peek() == ':'))
            ++m_pos;
        const std::string_view token = m_text.substr(start, m_pos - start);
        if (token.empty())
            fail("a value: a string, a number, true, false, an array or an inline table");
        if (token == "true" || token == "false")
            return token == "true";
        if (token.find(':') != std::string_view::npos
            || (token.size() >= 10 && token[4] == '-' && token[7] == '-')) // 1979-05-27
            fail("a string, number or boolean; dates and times are not read");
        std::string digits; // without the underscores TOML allows between digits
        for (std::size_t i = 0; i < token.size(); ++i) {
            if (token[i] != '_') {
                digits += token[i];
                continue;
            }
            const bool between = i > 0 && i + 1 < token.size() && std::isdigit(static_cast<unsigned char>(token[i - 1]))
                && std::isdigit(static_cast<unsigned char>(token[i + 1]));
            if (!between)
                fail("'_' only between two digits of a number");
        }
        std::string_view d = digits;
        const bool sign = !d.empty() && (d.front() == '+' || d.front() == '-');
        const std::string_view body = sign ? d.substr(1) : d;
        if (body.starts_with("0x") || body.starts_with("0o") || body.starts_with("0b"))
            fail("a decimal number; hexadecimal, octal and binary integers are not read");
        if (body == "inf" || body == "nan")
            fail("a finite number");
        const bool isFloat = body.find_first_of(".eE") != std::string_view::npos;
        const char* first = d.data() + (d.front() == '+' ? 1 : 0);
        const char* last = d.data() + d.size();
        if (body.empty() || !std::isdigit(static_cast<unsigned char>(body.front())))
            fail("a value: a string, a number, true, false, an array or an inline table; got \"" + std::string(token)
                + "\"");
        if (!isFloat) {
            if (body.size() > 1 && body.front() == '0')
                fail("a decimal integer without leading zeros");
            std::int64_t n = 0;
            const auto [end, ec] = std::from_chars(first, last, n);
            if (ec != std::errc() || end != last)
                fail("an integer that fits in 64 bits; got \"" + std::string(token) + "\"");
            return n;
        }
        // TOML's float: an integer part without leading zeros, then a fraction of at least one digit and/or an
        // exponent ("1." and "01.5" are not floats).
        const std::size_t dot = body.find('.'), exp = body.find_first_of("eE");
        const std::string_view whole = body.substr(0, std::min(dot, exp));
        const bool wholeOk = !whole.empty() && (whole == "0" || whole.front() != '0')
            && whole.find_first_not_of("0123456789") == std::string_view::npos;
        const std::string_view frac = dot == std::string_view::npos
            ? std::string_view()
            : body.substr(dot + 1, std::min(exp, body.size()) - dot - 1);
        const bool fracOk = dot == std::string_view::npos
            || (dot < exp && !frac.empty() && frac.find_first_not_of("0123456789") == std::string_view::npos);
        if (!wholeOk || !fracOk)
            fail("a float with digits on both sides of '.' and no leading zeros; got \"" + std::string(token) + "\"");
        double x = 0;
        const auto [end, ec] = std::from_chars(first, last, x);
        if (ec != std::errc() || end != last)
            fail("a finite float; got \"" + std::string(token) + "\"");
        return x;
    }

    std::string_view m_text;
    const std::string& m_file;
    std::map<std::string, Made> m_made; ///< every table by its joined path
    std::size_t m_pos = 0;
    int m_line = 1;
};

} // namespace

json parseTomlText(std::string_view text, const std::string& file)
{
    return Parser(text, file).parse();
}

} // namespace vramlab
