// SPDX-License-Identifier: MIT
#include "vramlab/toml_reader.h"

#include "vramlab/errors.h"
#include "vramlab/text_escape.h"

#include <cctype>
#include <charconv>
#include <set>
#include <vector>

namespace vramlab {

namespace {

using nlohmann::json;

constexpr int kMaxDepth = 32; ///< nested arrays and inline tables

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
        std::set<std::string> headers; // tables given a [header]: TOML forbids a second one
        for (;;) {
            skipBlank(true);
            if (atEnd())
                return root;
            if (peek() == '[') {
                ++m_pos;
                if (peek() == '[')
                    fail("a [table]; arrays of tables ([[...]]) are not read");
                skipBlank(false);
                const std::vector<std::string> path = keyPath();
                skipBlank(false);
                expect(']', "']' closing the table header");
                std::string dotted;
                for (const std::string& k : path)
                    dotted.append(dotted.empty() ? "" : ".").append(k);
                if (!headers.insert(dotted).second)
                    fail("each table once; [" + dotted + "] is defined twice");
                table = &root;
                for (const std::string& k : path) {
                    json& next = (*table)[k];
                    if (next.is_null())
                        next = json::object();
                    else if (!next.is_object())
                        fail("a table at [" + dotted + "]; \"" + k + "\" is already a value");
                    table = &next;
                }
                endOfLine();
            } else {
                const std::vector<std::string> path = keyPath();
                skipBlank(false);
                expect('=', "'=' after the key");
                skipBlank(false);
                assign(*table, path, value(0));
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
                while (!atEnd() && peek() != '\n')
                    ++m_pos;
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
            ++m_pos;
            skipBlank(false);
        }
    }

    void assign(json& table, const std::vector<std::string>& path, json v)
    {
        json* at = &table;
        for (std::size_t i = 0; i + 1 < path.size(); ++i) {
            json& next = (*at)[path[i]];
            if (next.is_null())
                next = json::object();
            else if (!next.is_object())
                fail("a table at \"" + path[i] + "\"; it is already a value");
            at = &next;
        }
        if (at->contains(path.back()))
            fail("each key once; \"" + path.back() + "\" is defined twice");
        (*at)[path.back()] = std::move(v);
    }

    json value(int depth)
    {
        if (depth > kMaxDepth)
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
            if (static_cast<unsigned char>(c) < 0x20 && c != '\t')
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
        while (!atEnd() && peek() != '\'' && peek() != '\n')
            ++m_pos;
        if (peek() != '\'')
            fail("a literal string closed by ' on its line");
        std::string out(m_text.substr(start, m_pos - start));
        ++m_pos;
        return out;
    }

    json array(int depth)
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

    json inlineTable(int depth)
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
            assign(out, path, value(depth + 1));
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
        double x = 0;
        const auto [end, ec] = std::from_chars(first, last, x);
        if (ec != std::errc() || end != last)
            fail("a finite float; got \"" + std::string(token) + "\"");
        return x;
    }

    std::string_view m_text;
    const std::string& m_file;
    std::size_t m_pos = 0;
    int m_line = 1;
};

} // namespace

json parseTomlText(std::string_view text, const std::string& file)
{
    return Parser(text, file).parse();
}

} // namespace vramlab
