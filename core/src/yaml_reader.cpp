// SPDX-License-Identifier: MIT
#include "vramlab/yaml_reader.h"

#include "vramlab/errors.h"
#include "vramlab/text_escape.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <regex>
#include <vector>

namespace vramlab {

namespace {

using nlohmann::json;

constexpr int kMaxDepth = 32; ///< nested mappings, sequences and flow collections

bool isSpace(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}
bool isDigit(char c)
{
    return c >= '0' && c <= '9';
}

struct Line {
    std::size_t start = 0; ///< offset of the line in the text
    int indent = 0; ///< leading spaces (a "- " item's content: its column)
    std::string_view text; ///< after the indentation, without the line break
    int number = 0;
    bool tabIndent = false; ///< a tab before the text: YAML never indents with tabs
};

bool isBlank(const Line& l)
{
    return l.text.empty() || l.text.front() == '#';
}
bool isSeqItem(std::string_view t)
{
    return !t.empty() && t.front() == '-' && (t.size() == 1 || isSpace(t[1]));
}
bool isDocMarker(const Line& l)
{
    return l.indent == 0 && (l.text.starts_with("---") || l.text.starts_with("..."))
        && (l.text.size() == 3 || isSpace(l.text[3]));
}

std::string_view trimmedRight(std::string_view s)
{
    while (!s.empty() && isSpace(s.back()))
        s.remove_suffix(1);
    return s;
}

/// Block structure line by line (indentation), flow collections and quoted strings character by character over the
/// whole text: the YAML 1.1 that PyYAML reads, less what configs never hold (see the header).
class Parser {
public:
    Parser(std::string_view text, const std::string& file)
        : m_text(text)
        , m_file(file)
    {
    }

    json parse()
    {
        if (m_text.size() > kMaxYamlFileBytes)
            fail(1, "a YAML file of at most 1 MiB");
        if (!isValidUtf8(m_text))
            throw InputError("(file)", "UTF-8 text", m_file);
        splitLines();
        skipBlankLines();
        if (m_i < m_lines.size() && m_lines[m_i].text.starts_with('%'))
            fail(cur().number, "no directives (%YAML, %TAG): plain data");
        if (m_i < m_lines.size() && isDocMarker(cur()) && cur().text.starts_with("---")) {
            const std::size_t after = cur().text.find_first_not_of(" \t\r", 3);
            if (after != std::string_view::npos && cur().text[after] != '#')
                fail(cur().number, "'---' alone on its line");
            ++m_i;
            skipBlankLines();
        }
        json root;
        if (m_i < m_lines.size() && !isDocMarker(cur())) {
            checkTabs(cur());
            root = block(cur().indent, -1, 0);
        }
        skipBlankLines();
        if (m_i < m_lines.size() && isDocMarker(cur()) && cur().text.starts_with("...")) {
            ++m_i;
            skipBlankLines();
        }
        if (m_i < m_lines.size()) {
            if (isDocMarker(cur()))
                fail(cur().number, "one YAML document; a second document ('---') is not read");
            fail(cur().number, "the end of the document: a line indented less than the first key");
        }
        return root;
    }

private:
    [[noreturn]] void fail(int line, const std::string& expected) const
    {
        throw InputError("line " + std::to_string(line), expected, m_file);
    }
    const Line& cur() const { return m_lines[m_i]; }
    /// PyYAML's scanner reads no tab outside quoted strings, comments and block scalars ("found character '\\t'
    /// that cannot start any token"), separators included.
    void noTab(char c, int line) const
    {
        if (c == '\t')
            fail(line,
                "spaces, not a tab (YAML as PyYAML reads it has tabs only in quotes, comments and block scalars)");
    }
    void checkTabs(const Line& l) const
    {
        if (l.tabIndent)
            fail(l.number, "spaces for indentation (YAML does not allow tabs there)");
    }

    void splitLines()
    {
        std::size_t pos = m_text.starts_with("\xEF\xBB\xBF") ? 3 : 0; // a byte-order mark, as PyYAML skips it
        int number = 1;
        while (pos <= m_text.size()) {
            const std::size_t nl = std::min(m_text.find('\n', pos), m_text.size());
            std::string_view raw = m_text.substr(pos, nl - pos);
            if (raw.ends_with('\r'))
                raw.remove_suffix(1);
            for (char c : raw)
                if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7F)
                    fail(number, "no control characters (tab, line feed and carriage return only)");
            Line l;
            l.start = pos;
            l.number = number;
            std::size_t i = 0;
            while (i < raw.size() && raw[i] == ' ')
                ++i;
            l.indent = static_cast<int>(i);
            while (i < raw.size() && (raw[i] == ' ' || raw[i] == '\t')) {
                l.tabIndent = true;
                ++i;
            }
            l.text = raw.substr(i);
            if (l.text.empty())
                l.tabIndent = false;
            m_lines.push_back(l);
            ++number;
            if (nl == m_text.size())
                break;
            pos = nl + 1;
        }
        if (m_text.ends_with('\n') && m_lines.size() > 1)
            m_lines.pop_back(); // the empty text after the last line break is no line
    }

    void skipBlankLines()
    {
        while (m_i < m_lines.size() && isBlank(cur())) {
            const std::string_view raw = m_text.substr(cur().start, lineEnd(m_i) - cur().start);
            for (char c : raw.substr(0, raw.find('#')))
                noTab(c, cur().number);
            ++m_i;
        }
    }

    /// The node whose first line is the current one, at column `n`, inside a parent at column `parent`.
    json block(int n, int parent, int depth)
    {
        if (depth >= kMaxDepth)
            fail(cur().number, "mappings and lists nested at most 32 deep");
        if (isSeqItem(cur().text))
            return sequence(n, depth);
        if (keyOf(cur().text))
            return mapping(n, depth);
        return value(cur().text, parent, depth);
    }

    struct Key {
        std::string name;
        std::size_t rest = 0; ///< offset in the line's text just after the ':'
    };

    /// The key of a "key: value" line, or nothing when the line is a value.
    std::optional<Key> keyOf(std::string_view t)
    {
        if (t.empty())
            return std::nullopt;
        const char c = t.front();
        const int line = lineAt(offsetOf(t));
        if (c == '?' && (t.size() == 1 || isSpace(t[1])))
            fail(line, "plain keys; complex keys ('? ') are not read");
        if (c == '&' || c == '*' || c == '!')
            fail(line, "plain data: no anchors (&), aliases (*) or tags (!, which can construct objects)");
        if (c == '"' || c == '\'') {
            const std::size_t savedPos = m_pos;
            const int savedLine = m_line;
            m_pos = offsetOf(t);
            m_line = line;
            std::string name = c == '"' ? doubleQuoted() : singleQuoted();
            const bool oneLine = m_line == line;
            while (m_pos < m_text.size() && isSpace(m_text[m_pos]) && m_text[m_pos] != '\r') {
                noTab(m_text[m_pos], line);
                ++m_pos;
            }
            const bool colon = oneLine && m_pos < m_text.size() && m_text[m_pos] == ':'
                && (m_pos + 1 == m_text.size() || isSpace(m_text[m_pos + 1]) || m_text[m_pos + 1] == '\n');
            const std::size_t rest = m_pos + 1 - offsetOf(t);
            m_pos = savedPos;
            m_line = savedLine;
            if (!colon)
                return std::nullopt;
            return Key { std::move(name), rest };
        }
        if (c == '[' || c == '{' || c == '|' || c == '>' || isSeqItem(t))
            return std::nullopt;
        if (c == ',' || c == ']' || c == '}' || c == '%' || c == '@' || c == '`')
            fail(line, std::string("a key; '") + c + "' cannot start a plain key (quote it)");
        for (std::size_t i = 0; i < t.size(); ++i) {
            if (t[i] == '#' && i > 0 && isSpace(t[i - 1]))
                break;
            noTab(t[i], line);
            if (t[i] == ':' && (i + 1 == t.size() || isSpace(t[i + 1]))) {
                const std::string_view name = trimmedRight(t.substr(0, i));
                if (name.empty())
                    fail(line, "a key before ':'");
                if (name == "<<")
                    fail(line, "plain keys; merge keys (<<) are not read");
                return Key { std::string(name), i + 1 };
            }
        }
        return std::nullopt;
    }

    json mapping(int n, int depth)
    {
        json obj = json::object();
        for (;;) {
            skipBlankLines();
            if (m_i >= m_lines.size() || cur().indent < n || isDocMarker(cur()))
                return obj;
            const Line& l = cur();
            checkTabs(l);
            if (l.indent > n)
                fail(l.number,
                    "a key indented as the one before it (" + std::to_string(n) + " spaces), or a value after ':'");
            if (isSeqItem(l.text))
                fail(l.number, "a key: value line; a '- ' item cannot follow keys at their indentation");
            std::optional<Key> key = keyOf(l.text);
            if (!key)
                fail(l.number, "a key followed by ':' (one key: value per line)");
            if (obj.contains(key->name))
                fail(l.number, "each key once; \"" + key->name + "\" is given twice");
            json v = value(l.text.substr(key->rest), n, depth + 1);
            obj[key->name] = std::move(v);
        }
    }

    json sequence(int n, int depth)
    {
        json arr = json::array();
        for (;;) {
            skipBlankLines();
            if (m_i >= m_lines.size() || cur().indent < n || isDocMarker(cur()))
                return arr;
            Line& l = m_lines[m_i];
            checkTabs(l);
            if (l.indent > n)
                fail(l.number, "a '- ' item indented as the one before it (" + std::to_string(n) + " spaces)");
            if (!isSeqItem(l.text))
                return arr;
            std::size_t k = 1;
            while (k < l.text.size() && isSpace(l.text[k]))
                noTab(l.text[k++], l.number);
            const std::string_view content = l.text.substr(k);
            if (content.empty() || content.front() == '#') {
                ++m_i;
                arr.push_back(nested(n, depth + 1, false));
                continue;
            }
            // The item's content as if it began its own line at its column: "- key: v" starts a mapping there.
            l.indent = n + static_cast<int>(k);
            l.text = content;
            arr.push_back(block(l.indent, n, depth + 1));
        }
    }

    /// The value of a key (or item) whose line holds nothing after it: a node on the lines below, more indented
    /// than `parent`, or a list at the key's own column (`compactList`), or null.
    json nested(int parent, int depth, bool compactList)
    {
        if (depth >= kMaxDepth)
            fail(m_i < m_lines.size() ? cur().number : m_lines.back().number,
                "mappings and lists nested at most 32 deep");
        skipBlankLines();
        if (m_i >= m_lines.size() || isDocMarker(cur()))
            return nullptr;
        checkTabs(cur());
        if (cur().indent > parent)
            return block(cur().indent, parent, depth);
        if (compactList && cur().indent == parent && isSeqItem(cur().text))
            return sequence(parent, depth);
        return nullptr;
    }

    /// A value starting at `rest` (a suffix of the current line), in a node at column `parent`.
    json value(std::string_view rest, int parent, int depth)
    {
        std::size_t pos = offsetOf(rest);
        const std::size_t end = lineEnd(m_i);
        const int line = cur().number;
        while (pos < end && isSpace(m_text[pos]))
            noTab(m_text[pos++], line);
        if (pos == end || m_text[pos] == '#') {
            ++m_i;
            return nested(parent, depth, true);
        }
        const char c = m_text[pos];
        const char next = pos + 1 < end ? m_text[pos + 1] : ' ';
        if (c == '&' || c == '*' || c == '!')
            fail(line, "plain data: no anchors (&), aliases (*) or tags (!, which can construct objects)");
        if (c == '%' || c == '@' || c == '`' || c == ',' || c == ']' || c == '}')
            fail(line, std::string("a value; '") + c + "' cannot start a plain value (quote it)");
        if ((c == '-' || c == '?') && isSpace(next))
            fail(line, "a value; '- ' items and '? ' keys begin their own line");
        if (c == '|' || c == '>')
            return blockScalar(pos, parent);
        if (c == '[' || c == '{' || c == '"' || c == '\'') {
            m_pos = pos;
            m_line = line;
            json v = flowNode(depth);
            endOfNode();
            return v;
        }
        return plain(pos, parent);
    }

    /// A plain scalar: to the end of its line (or a comment), folded with the more indented lines below.
    json plain(std::size_t pos, int parent)
    {
        const int first = cur().number;
        std::string text(segment(pos, lineEnd(m_i), first));
        bool comment = m_segmentHadComment;
        ++m_i;
        int emptyLines = 0;
        while (!comment && m_i < m_lines.size()) {
            const Line& l = cur();
            if (l.text.empty()) {
                ++emptyLines;
                ++m_i;
                continue;
            }
            if (l.text.front() == '#' || l.indent <= parent || isDocMarker(l))
                break;
            checkTabs(l);
            text += emptyLines ? std::string(static_cast<std::size_t>(emptyLines), '\n') : std::string(" ");
            text += segment(offsetOf(l.text), lineEnd(m_i), l.number);
            comment = m_segmentHadComment;
            emptyLines = 0;
            ++m_i;
        }
        return resolve(text, first);
    }

    /// One line's part of a plain scalar, up to a comment; a ": " inside is not a value (PyYAML: "mapping values
    /// are not allowed here").
    std::string_view segment(std::size_t from, std::size_t to, int line)
    {
        m_segmentHadComment = false;
        std::size_t i = from;
        for (; i < to; ++i) {
            if (m_text[i] == '#' && i > from && isSpace(m_text[i - 1])) {
                m_segmentHadComment = true;
                break;
            }
            noTab(m_text[i], line);
            if (m_text[i] == ':' && (i + 1 == to || isSpace(m_text[i + 1])))
                fail(line, "one value; \": \" inside a plain value starts a mapping here (quote the value)");
        }
        return trimmedRight(m_text.substr(from, i - from));
    }

    /// A literal (|) or folded (>) block scalar with its chomping (- +) and indentation (1-9) indicators.
    json blockScalar(std::size_t pos, int parent)
    {
        const int line = cur().number;
        const bool literal = m_text[pos] == '|';
        char chomp = ' ';
        int explicitIndent = 0;
        std::size_t i = pos + 1;
        const std::size_t end = lineEnd(m_i);
        for (int k = 0; k < 2 && i < end; ++k) {
            if ((m_text[i] == '-' || m_text[i] == '+') && chomp == ' ')
                chomp = m_text[i++];
            else if (m_text[i] >= '1' && m_text[i] <= '9' && explicitIndent == 0)
                explicitIndent = m_text[i++] - '0';
        }
        const std::size_t afterHeader = i;
        while (i < end && isSpace(m_text[i]))
            ++i;
        if (i < end && !(m_text[i] == '#' && i > afterHeader))
            fail(line, "a block scalar header: '|' or '>', then '-' or '+' and an indentation digit, then nothing");
        ++m_i;
        int contentIndent = explicitIndent ? std::max(parent, 0) + explicitIndent : -1;
        std::vector<std::string_view> lines; // empty views for empty lines
        std::size_t contentLines = 0; // lines up to the last non-empty one
        while (m_i < m_lines.size()) {
            const Line& l = cur();
            const std::string_view raw = m_text.substr(l.start, lineEnd(m_i) - l.start);
            const std::size_t spaces = raw.find_first_not_of(' ');
            const bool empty = raw.find_first_not_of(" \r") == std::string_view::npos;
            if (empty) {
                // Spaces beyond the content's indentation are content (a literal keeps them).
                const std::size_t spacesOnly = raw.ends_with('\r') ? raw.size() - 1 : raw.size();
                if (contentIndent >= 0 && spacesOnly > static_cast<std::size_t>(contentIndent)) {
                    lines.push_back(raw.substr(
                        static_cast<std::size_t>(contentIndent), spacesOnly - static_cast<std::size_t>(contentIndent)));
                    contentLines = lines.size();
                } else {
                    lines.emplace_back();
                }
                ++m_i;
                continue;
            }
            if (contentIndent < 0) {
                if (static_cast<int>(spaces) <= parent)
                    break;
                contentIndent = static_cast<int>(spaces);
            }
            if (static_cast<int>(spaces) < contentIndent || isDocMarker(l))
                break;
            lines.push_back(raw.substr(static_cast<std::size_t>(contentIndent))); // trailing spaces are content
            contentLines = lines.size();
            ++m_i;
        }
        std::string out;
        bool first = true, previousMore = false;
        std::size_t pendingEmpty = 0;
        for (std::size_t k = 0; k < contentLines; ++k) {
            const std::string_view l = lines[k];
            if (l.empty()) {
                ++pendingEmpty;
                continue;
            }
            const bool more = l.front() == ' ' || l.front() == '\t';
            if (first)
                out.append(pendingEmpty, '\n');
            else if (literal || more || previousMore)
                out.append(pendingEmpty + 1, '\n');
            else
                pendingEmpty ? out.append(pendingEmpty, '\n') : out.append(1, ' ');
            out += l;
            pendingEmpty = 0;
            previousMore = more;
            first = false;
        }
        const std::size_t trailing = lines.size() - contentLines;
        if (chomp == '+')
            out.append((contentLines ? 1 : 0) + trailing, '\n');
        else if (chomp == ' ' && contentLines)
            out += '\n';
        return out;
    }

    // Character by character over the whole text, from m_pos, counting lines in m_line.

    bool atEnd() const { return m_pos >= m_text.size(); }
    char peek(std::size_t ahead = 0) const { return m_pos + ahead < m_text.size() ? m_text[m_pos + ahead] : '\0'; }

    /// Spaces, line breaks and comments inside a flow collection.
    void skipFlowSpace()
    {
        while (!atEnd()) {
            const char c = peek();
            if (isSpace(c)) {
                noTab(c, m_line);
                ++m_pos;
            } else if (c == '\n') {
                ++m_pos;
                ++m_line;
            } else if (c == '#') { // between tokens, as PyYAML reads it (even right after '{')
                while (!atEnd() && peek() != '\n')
                    ++m_pos;
            } else {
                return;
            }
        }
    }

    json flowNode(int depth)
    {
        if (depth >= kMaxDepth)
            fail(m_line, "lists and mappings nested at most 32 deep");
        skipFlowSpace();
        const char c = peek();
        if (c == '[')
            return flowSequence(depth);
        if (c == '{')
            return flowMapping(depth);
        if (c == '"')
            return doubleQuoted();
        if (c == '\'')
            return singleQuoted();
        if (c == '&' || c == '*' || c == '!')
            fail(m_line, "plain data: no anchors (&), aliases (*) or tags (!, which can construct objects)");
        return resolve(flowPlain(), m_line);
    }

    /// A plain scalar inside [..] or {..}: up to , [ ] { }, a ": ", a comment or the line's end.
    std::string flowPlain()
    {
        const std::size_t start = m_pos;
        while (!atEnd()) {
            const char c = peek();
            if (c == ',' || c == '[' || c == ']' || c == '{' || c == '}' || c == '\n')
                break;
            if (c == ':' && (isSpace(peek(1)) || peek(1) == ',' || peek(1) == ']' || peek(1) == '}' || peek(1) == '\n'))
                break;
            if (c == '#' && m_pos > start && isSpace(m_text[m_pos - 1]))
                break;
            noTab(c, m_line);
            ++m_pos;
        }
        return std::string(trimmedRight(m_text.substr(start, m_pos - start)));
    }

    json flowSequence(int depth)
    {
        const int line = m_line;
        ++m_pos;
        json arr = json::array();
        for (;;) {
            skipFlowSpace();
            if (atEnd())
                fail(line, "']' closing the list opened here");
            if (peek() == ']') {
                ++m_pos;
                return arr;
            }
            arr.push_back(flowNode(depth + 1));
            skipFlowSpace();
            if (peek() == ':')
                fail(m_line, "a list item; key: value pairs inside [...] are not read");
            if (peek() == ',')
                ++m_pos;
            else if (peek() != ']')
                fail(m_line, "',' or ']' after a list item");
        }
    }

    json flowMapping(int depth)
    {
        const int line = m_line;
        ++m_pos;
        json obj = json::object();
        for (;;) {
            skipFlowSpace();
            if (atEnd())
                fail(line, "'}' closing the mapping opened here");
            if (peek() == '}') {
                ++m_pos;
                return obj;
            }
            const char c = peek();
            if (c == '[' || c == '{')
                fail(m_line, "a plain or quoted key; lists and mappings as keys are not read");
            if (c == '&' || c == '*' || c == '!')
                fail(m_line, "plain data: no anchors (&), aliases (*) or tags (!, which can construct objects)");
            if (c == '?' && isSpace(peek(1)))
                fail(m_line, "plain keys; complex keys ('? ') are not read");
            const int keyLine = m_line;
            std::string key = c == '"' ? doubleQuoted() : c == '\'' ? singleQuoted() : flowPlain();
            skipFlowSpace();
            json v;
            if (peek() == ':') {
                ++m_pos;
                skipFlowSpace();
                if (peek() != ',' && peek() != '}')
                    v = flowNode(depth + 1);
            }
            if (key == "<<")
                fail(keyLine, "plain keys; merge keys (<<) are not read");
            if (key.empty() && c != '"' && c != '\'')
                fail(keyLine, "a key before ':'");
            if (obj.contains(key))
                fail(keyLine, "each key once; \"" + key + "\" is given twice");
            obj[key] = std::move(v);
            skipFlowSpace();
            if (peek() == ',')
                ++m_pos;
            else if (peek() != '}')
                fail(m_line, "',' or '}' after a value");
        }
    }

    /// A line break inside a quoted string folds as YAML says: to one space, or to n newlines after n empty lines;
    /// the spaces around it go.
    void foldBreak(std::string& out)
    {
        while (!out.empty() && (out.back() == ' ' || out.back() == '\t'))
            out.pop_back();
        std::size_t empties = 0;
        while (peek() == '\n') {
            ++m_pos;
            ++m_line;
            while (isSpace(peek()))
                ++m_pos;
            if (peek() == '\n')
                ++empties;
        }
        if (empties)
            out.append(empties, '\n');
        else
            out += ' ';
    }

    std::string singleQuoted()
    {
        const int line = m_line;
        ++m_pos;
        std::string out;
        for (;;) {
            if (atEnd())
                fail(line, "a string closed by ' (a quote inside is written '')");
            const char c = peek();
            if (c == '\'') {
                if (peek(1) != '\'') {
                    ++m_pos;
                    return out;
                }
                out += '\'';
                m_pos += 2;
            } else if (c == '\n') {
                foldBreak(out);
            } else if (c == '\r') {
                ++m_pos;
            } else {
                out += c;
                ++m_pos;
            }
        }
    }

    std::string doubleQuoted()
    {
        const int line = m_line;
        ++m_pos;
        std::string out;
        for (;;) {
            if (atEnd())
                fail(line, "a string closed by '\"'");
            const char c = peek();
            if (c == '"') {
                ++m_pos;
                return out;
            }
            if (c == '\n') {
                foldBreak(out);
                continue;
            }
            if (c == '\r') {
                ++m_pos;
                continue;
            }
            ++m_pos;
            if (c != '\\') {
                out += c;
                continue;
            }
            const char e = peek();
            ++m_pos;
            std::size_t hexDigits = 0;
            switch (e) {
            case '0':
                out += '\0';
                break;
            case 'a':
                out += '\a';
                break;
            case 'b':
                out += '\b';
                break;
            case 't':
            case '\t':
                out += '\t';
                break;
            case 'n':
                out += '\n';
                break;
            case 'v':
                out += '\v';
                break;
            case 'f':
                out += '\f';
                break;
            case 'r':
                out += '\r';
                break;
            case 'e':
                out += '\x1b';
                break;
            case ' ':
            case '"':
            case '/':
            case '\\':
                out += e;
                break;
            case 'N':
                appendUtf8(out, 0x85);
                break;
            case '_':
                appendUtf8(out, 0xA0);
                break;
            case 'L':
                appendUtf8(out, 0x2028);
                break;
            case 'P':
                appendUtf8(out, 0x2029);
                break;
            case 'x':
                hexDigits = 2;
                break;
            case 'u':
                hexDigits = 4;
                break;
            case 'U':
                hexDigits = 8;
                break;
            case '\r':
            case '\n': // an escaped line break joins the lines
                if (e == '\r' && peek() == '\n')
                    ++m_pos;
                ++m_line;
                while (isSpace(peek()))
                    ++m_pos;
                break;
            default:
                fail(m_line, "an escape YAML knows (\\n \\t \\\" \\\\ \\xXX \\uXXXX \\UXXXXXXXX ...)");
            }
            if (hexDigits) {
                unsigned long cp = 0;
                const char* from = m_text.data() + m_pos;
                if (m_pos + hexDigits > m_text.size()
                    || std::from_chars(from, from + hexDigits, cp, 16).ptr != from + hexDigits
                    || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
                    fail(m_line, "an escape of " + std::to_string(hexDigits) + " hexadecimal digits (a code point)");
                m_pos += hexDigits;
                appendUtf8(out, static_cast<std::uint32_t>(cp));
            }
        }
    }

    /// After a flow collection or quoted string in a block: nothing but a comment to the line's end.
    void endOfNode()
    {
        const std::size_t from = m_pos;
        while (!atEnd() && isSpace(peek())) {
            noTab(peek(), m_line);
            ++m_pos;
        }
        if (peek() == '#' && m_pos > from)
            while (!atEnd() && peek() != '\n')
                ++m_pos;
        if (!atEnd() && peek() != '\n')
            fail(m_line,
                peek() == ':' ? "one value; a quoted or flow key is only read at the start of a line"
                              : "the end of the line after the value");
        m_i = lineIndexOf(m_pos) + 1;
    }

    /// A plain scalar's type, as PyYAML's YAML 1.1 resolver gives it.
    json resolve(const std::string& s, int line) const
    {
        static constexpr std::string_view nulls[] = { "", "~", "null", "Null", "NULL" };
        static constexpr std::string_view trues[] = { "true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON" };
        static constexpr std::string_view falses[]
            = { "false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF" };
        if (std::find(std::begin(nulls), std::end(nulls), s) != std::end(nulls))
            return nullptr;
        if (std::find(std::begin(trues), std::end(trues), s) != std::end(trues))
            return true;
        if (std::find(std::begin(falses), std::end(falses), s) != std::end(falses))
            return false;
        if (s.empty() || !(isDigit(s[0]) || s[0] == '-' || s[0] == '+' || s[0] == '.'))
            return s;
        const bool sign = s[0] == '-' || s[0] == '+';
        const std::string_view body = std::string_view(s).substr(sign ? 1 : 0);
        if (body == ".inf" || body == ".Inf" || body == ".INF"
            || (!sign && (s == ".nan" || s == ".NaN" || s == ".NAN")))
            fail(line, "a finite number");
        const auto allOf = [](std::string_view t, std::string_view chars) {
            return !t.empty() && t.find_first_not_of(chars) == std::string_view::npos;
        };
        // Dates and times, as PyYAML's timestamp resolver matches them (it makes them datetime objects).
        static const std::regex timestamp("[0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \\t]+)"
                                          "[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\\.[0-9]*)?(?:[ \\t]*(?:Z|[-+][0-9]{1,2}(?::"
                                          "[0-9]{2})?))?");
        if (s.size() >= 8 && isDigit(s[0]) && s[4] == '-' && std::regex_match(s, timestamp))
            fail(line, "a string, number or boolean; dates are not read (quote the value)");
        if (body.size() > 1 && body[0] == '0'
            && (allOf(body.substr(1), "01234567_") || body.starts_with("0x") || body.starts_with("0b")))
            fail(line, "a decimal integer; binary, octal and hexadecimal integers are not read (quote the value)");
        if (body.size() > 1 && body[0] == '0' && isDigit(body[1])
            && body.find_first_of(".eE") == std::string_view::npos)
            return s; // 09: neither PyYAML's octal nor its decimal integer (01.5 is a float)
        std::string digits;
        for (char c : s)
            if (c != '_')
                digits += c;
        if (digits.starts_with('+'))
            digits.erase(0, 1);
        // int: [-+]?(0|[1-9][0-9_]*); sexagesimal 1:30 is refused.
        if (allOf(body, "0123456789_") && isDigit(body[0])) {
            std::int64_t n = 0;
            const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
            if (ec != std::errc() || end != digits.data() + digits.size())
                fail(line, "an integer that fits in 64 bits; got \"" + s + "\"");
            return n;
        }
        if (allOf(body, "0123456789_:") && isDigit(body[0]))
            fail(line, "a decimal number; sexagesimal numbers (1:30) are not read (quote the value)");
        // float: [-+]?[0-9][0-9_]*\.[0-9_]*([eE][-+][0-9]+)? or \.[0-9_]+([eE][-+][0-9]+)? (no sign before '.')
        const std::size_t dot = body.find('.');
        const std::size_t exp = body.find_first_of("eE");
        const std::string_view mantissa = body.substr(0, std::min(exp, body.size()));
        const bool mantissaOk = dot != std::string_view::npos && dot < exp
            && (dot == 0 ? !sign && allOf(mantissa.substr(1), "0123456789_") && isDigit(mantissa[1])
                         : isDigit(mantissa[0]) && allOf(mantissa.substr(0, dot), "0123456789_")
                        && (dot + 1 == mantissa.size() || allOf(mantissa.substr(dot + 1), "0123456789_")));
        const bool exponentOk = exp == std::string_view::npos
            || (exp + 2 < body.size() && (body[exp + 1] == '-' || body[exp + 1] == '+')
                && allOf(body.substr(exp + 2), "0123456789"));
        if (!mantissaOk || !exponentOk)
            return s; // 1e-5, 1.5e3, 12abc: strings to PyYAML
        std::string number = digits;
        if (const std::size_t e = number.find_first_of("eE"); e != std::string::npos && number[e + 1] == '+')
            number.erase(e + 1, 1);
        double x = 0;
        const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), x);
        if (ec != std::errc() || end != number.data() + number.size())
            fail(line, "a finite float; got \"" + s + "\"");
        return x;
    }

    std::size_t offsetOf(std::string_view part) const { return static_cast<std::size_t>(part.data() - m_text.data()); }
    std::size_t lineEnd(std::size_t index) const
    {
        const std::size_t nl = m_text.find('\n', m_lines[index].start);
        std::size_t end = nl == std::string_view::npos ? m_text.size() : nl;
        if (end > m_lines[index].start && m_text[end - 1] == '\r')
            --end;
        return end;
    }
    std::size_t lineIndexOf(std::size_t offset) const
    {
        const auto it = std::upper_bound(
            m_lines.begin(), m_lines.end(), offset, [](std::size_t o, const Line& l) { return o < l.start; });
        return static_cast<std::size_t>(it - m_lines.begin()) - 1;
    }
    int lineAt(std::size_t offset) const { return m_lines[lineIndexOf(offset)].number; }

    std::string_view m_text;
    const std::string& m_file;
    std::vector<Line> m_lines;
    std::size_t m_i = 0; ///< the current line
    std::size_t m_pos = 0; ///< character position for flow collections and quoted strings
    int m_line = 1; ///< m_pos's line number
    bool m_segmentHadComment = false;
};

} // namespace

json parseYamlText(std::string_view text, const std::string& file)
{
    return Parser(text, file).parse();
}

} // namespace vramlab
