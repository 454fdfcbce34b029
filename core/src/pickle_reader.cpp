// SPDX-License-Identifier: MIT
#include "vramlab/pickle_reader.h"

#include "vramlab/scenario_io.h"
#include "vramlab/text_escape.h"
#include "vramlab/units.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <unordered_map>

#include <sys/stat.h>

namespace vramlab {

namespace {

/// Every opcode of pickle protocols 0-5 (Lib/pickle.py), with whether it is plain data.
struct OpcodeInfo {
    uint8_t code;
    const char* name;
    const char* refusal; ///< nullptr: accepted; else why it is refused
};

constexpr const char* kImports = "it imports a Python object by name";
constexpr const char* kCalls = "it calls a Python object (the way a pickle runs code)";
constexpr const char* kBuilds = "it sets the state of an object built by a call";
constexpr const char* kInstance = "it creates an instance of a class";
constexpr const char* kExtension = "it imports an object registered with copyreg (an extension code)";
constexpr const char* kPersistent = "it names a persistent object outside the file";
constexpr const char* kBuffer = "it takes an out-of-band buffer (protocol 5) that is not in the file";

constexpr OpcodeInfo kOpcodes[] = {
    { '(', "MARK", nullptr },
    { '.', "STOP", nullptr },
    { '0', "POP", nullptr },
    { '1', "POP_MARK", nullptr },
    { '2', "DUP", nullptr },
    { 'F', "FLOAT", nullptr },
    { 'I', "INT", nullptr },
    { 'J', "BININT", nullptr },
    { 'K', "BININT1", nullptr },
    { 'L', "LONG", nullptr },
    { 'M', "BININT2", nullptr },
    { 'N', "NONE", nullptr },
    { 'P', "PERSID", kPersistent },
    { 'Q', "BINPERSID", kPersistent },
    { 'R', "REDUCE", kCalls },
    { 'S', "STRING", nullptr },
    { 'T', "BINSTRING", nullptr },
    { 'U', "SHORT_BINSTRING", nullptr },
    { 'V', "UNICODE", nullptr },
    { 'X', "BINUNICODE", nullptr },
    { 'a', "APPEND", nullptr },
    { 'b', "BUILD", kBuilds },
    { 'c', "GLOBAL", kImports },
    { 'd', "DICT", nullptr },
    { '}', "EMPTY_DICT", nullptr },
    { 'e', "APPENDS", nullptr },
    { 'g', "GET", nullptr },
    { 'h', "BINGET", nullptr },
    { 'i', "INST", kInstance },
    { 'j', "LONG_BINGET", nullptr },
    { 'l', "LIST", nullptr },
    { ']', "EMPTY_LIST", nullptr },
    { 'o', "OBJ", kInstance },
    { 'p', "PUT", nullptr },
    { 'q', "BINPUT", nullptr },
    { 'r', "LONG_BINPUT", nullptr },
    { 's', "SETITEM", nullptr },
    { 't', "TUPLE", nullptr },
    { ')', "EMPTY_TUPLE", nullptr },
    { 'u', "SETITEMS", nullptr },
    { 'G', "BINFLOAT", nullptr },
    { 0x80, "PROTO", nullptr },
    { 0x81, "NEWOBJ", kInstance },
    { 0x82, "EXT1", kExtension },
    { 0x83, "EXT2", kExtension },
    { 0x84, "EXT4", kExtension },
    { 0x85, "TUPLE1", nullptr },
    { 0x86, "TUPLE2", nullptr },
    { 0x87, "TUPLE3", nullptr },
    { 0x88, "NEWTRUE", nullptr },
    { 0x89, "NEWFALSE", nullptr },
    { 0x8a, "LONG1", nullptr },
    { 0x8b, "LONG4", nullptr },
    { 'B', "BINBYTES", nullptr },
    { 'C', "SHORT_BINBYTES", nullptr },
    { 0x8c, "SHORT_BINUNICODE", nullptr },
    { 0x8d, "BINUNICODE8", nullptr },
    { 0x8e, "BINBYTES8", nullptr },
    { 0x8f, "EMPTY_SET", nullptr },
    { 0x90, "ADDITEMS", nullptr },
    { 0x91, "FROZENSET", nullptr },
    { 0x92, "NEWOBJ_EX", kInstance },
    { 0x93, "STACK_GLOBAL", kImports },
    { 0x94, "MEMOIZE", nullptr },
    { 0x95, "FRAME", nullptr },
    { 0x96, "BYTEARRAY8", nullptr },
    { 0x97, "NEXT_BUFFER", kBuffer },
    { 0x98, "READONLY_BUFFER", kBuffer },
};

const OpcodeInfo* findOpcode(uint8_t op)
{
    for (const OpcodeInfo& o : kOpcodes)
        if (o.code == op)
            return &o;
    return nullptr;
}

std::string hexByte(uint8_t b)
{
    static const char* d = "0123456789abcdef";
    return std::string("0x") + d[b >> 4] + d[b & 15];
}

std::optional<uint32_t> parseHex(std::string_view s)
{
    uint32_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
    if (ec != std::errc() || p != s.data() + s.size())
        return std::nullopt;
    return v;
}

} // namespace

std::string_view toString(PickleKind k)
{
    switch (k) {
    case PickleKind::None:
        return "None";
    case PickleKind::Bool:
        return "bool";
    case PickleKind::Int:
        return "int";
    case PickleKind::Float:
        return "float";
    case PickleKind::String:
        return "str";
    case PickleKind::Binary:
        return "bytes";
    case PickleKind::List:
        return "list";
    case PickleKind::Tuple:
        return "tuple";
    case PickleKind::Dict:
        return "dict";
    case PickleKind::Set:
        return "set";
    }
    return "?";
}

std::string_view pickleOpcodeName(uint8_t op)
{
    const OpcodeInfo* o = findOpcode(op);
    return o ? o->name : "";
}

PickleError::PickleError(const std::string& file, uint64_t offset, int opcode, const std::string& why)
    : InputError("byte " + std::to_string(offset), why, file)
    , m_offset(offset)
    , m_opcode(opcode)
{
}

// ---------------------------------------------------------------------------------------
// Views

const PickleNode& PickleView::node() const
{
    return m_doc->nodes()[m_id];
}

bool PickleView::isSequence() const
{
    const PickleKind k = kind();
    return k == PickleKind::List || k == PickleKind::Tuple || k == PickleKind::Set;
}

std::size_t PickleView::size() const
{
    if (isDict())
        return node().items.size() / 2;
    return isSequence() ? node().items.size() : 0;
}

PickleView PickleView::at(std::size_t i) const
{
    return PickleView(*m_doc, node().items.at(i));
}

std::optional<PickleView> PickleView::get(std::string_view key) const
{
    if (!isDict())
        return std::nullopt;
    const std::vector<PickleId>& items = node().items;
    for (std::size_t i = items.size(); i >= 2; i -= 2) {
        const PickleNode& k = m_doc->nodes()[items[i - 2]];
        if (k.kind == PickleKind::String && k.text == key)
            return PickleView(*m_doc, items[i - 1]);
    }
    return std::nullopt;
}

std::optional<int64_t> PickleView::integer() const
{
    return kind() == PickleKind::Int ? std::optional<int64_t>(node().integer) : std::nullopt;
}

std::optional<std::string_view> PickleView::string() const
{
    return kind() == PickleKind::String ? std::optional<std::string_view>(node().text) : std::nullopt;
}

std::optional<double> PickleView::number() const
{
    if (kind() == PickleKind::Int)
        return static_cast<double>(node().integer);
    if (kind() == PickleKind::Float)
        return node().real;
    return std::nullopt;
}

std::optional<bool> PickleView::boolean() const
{
    return kind() == PickleKind::Bool ? std::optional<bool>(node().integer != 0) : std::nullopt;
}

std::string PickleView::describe() const
{
    const PickleNode& n = node();
    std::string s(toString(n.kind));
    switch (n.kind) {
    case PickleKind::Bool:
        return n.integer ? "True" : "False";
    case PickleKind::Int:
        return s + " " + std::to_string(n.integer);
    case PickleKind::Float:
        return s + " " + std::to_string(n.real);
    case PickleKind::String:
        return s + " '" + printableText(n.text, 60) + "'";
    case PickleKind::List:
    case PickleKind::Tuple:
    case PickleKind::Set:
    case PickleKind::Dict:
        return s + " of " + std::to_string(size());
    default:
        return s;
    }
}

// ---------------------------------------------------------------------------------------
// Parser

class PickleParser {
public:
    PickleParser(std::string_view bytes, const std::string& file, const PickleLimits& limits)
        : m_in(bytes)
        , m_file(file)
        , m_limits(limits)
    {
    }

    PickleDocument run()
    {
        if (m_in.size() > m_limits.maxFileBytes)
            fail(-1,
                "the file has " + std::to_string(m_in.size()) + " bytes; the most read is "
                    + formatBytes(static_cast<Bytes>(m_limits.maxFileBytes)));
        if (m_in.empty())
            fail(-1, "the file is empty: not a pickle");
        while (true) {
            if (m_pos >= m_in.size())
                fail(-1, "the file ends before the pickle's STOP opcode (truncated)");
            m_opStart = m_pos;
            m_op = static_cast<uint8_t>(m_in[m_pos++]);
            if (step())
                break;
        }
        finish();
        return std::move(m_doc);
    }

private:
    // -- errors ------------------------------------------------------------------------
    [[noreturn]] void fail(int opcode, const std::string& why) const
    {
        throw PickleError(m_file, m_opStart, opcode, why);
    }
    [[noreturn]] void failOp(const std::string& why) const
    {
        const std::string_view name = pickleOpcodeName(m_op);
        fail(m_op, "opcode " + std::string(name.empty() ? "?" : name) + " (" + hexByte(m_op) + "): " + why);
    }

    // -- input -------------------------------------------------------------------------
    std::string_view take(uint64_t n, const char* what)
    {
        if (n > m_in.size() - m_pos)
            failOp(std::string(what) + " of " + std::to_string(n) + " bytes, but only "
                + std::to_string(m_in.size() - m_pos) + " are left (truncated or a forged length)");
        std::string_view s = m_in.substr(m_pos, static_cast<std::size_t>(n));
        m_pos += static_cast<std::size_t>(n);
        return s;
    }
    uint64_t littleEndian(int bytes)
    {
        const std::string_view s = take(static_cast<uint64_t>(bytes), "a length or number");
        uint64_t v = 0;
        for (int i = bytes - 1; i >= 0; --i)
            v = (v << 8) | static_cast<uint8_t>(s[static_cast<std::size_t>(i)]);
        return v;
    }
    /// A text argument of protocol 0 up to the newline (which it consumes).
    std::string_view line(std::size_t maxBytes, const char* what)
    {
        const std::size_t limit = std::min(m_in.size() - m_pos, maxBytes + 1);
        const std::size_t nl = m_in.substr(m_pos, limit).find('\n');
        if (nl == std::string_view::npos)
            failOp(std::string(what) + " has no newline within " + std::to_string(maxBytes) + " bytes");
        std::string_view s = m_in.substr(m_pos, nl);
        m_pos += nl + 1;
        return s;
    }
    uint64_t stringLength(uint64_t n)
    {
        if (n > m_limits.maxStringBytes)
            failOp("a string of " + std::to_string(n) + " bytes; the most read is "
                + std::to_string(m_limits.maxStringBytes));
        return n;
    }

    // -- values ------------------------------------------------------------------------
    PickleId make(PickleKind kind)
    {
        if (m_doc.m_nodes.size() >= m_limits.maxValues)
            failOp("more than " + std::to_string(m_limits.maxValues) + " values in the file (the most read)");
        m_doc.m_nodes.push_back(PickleNode { kind, 0, 0, {}, {} });
        m_height.push_back(0);
        return static_cast<PickleId>(m_doc.m_nodes.size() - 1);
    }
    PickleNode& node(PickleId id) { return m_doc.m_nodes[id]; }
    void push(PickleId id) { m_stack.push_back(id); }
    PickleId pushNew(PickleKind kind)
    {
        const PickleId id = make(kind);
        push(id);
        return id;
    }
    void pushInt(int64_t v, PickleKind kind = PickleKind::Int) { node(pushNew(kind)).integer = v; }
    void pushText(std::string_view text, PickleKind kind)
    {
        if (kind == PickleKind::String && !isValidUtf8(text))
            failOp("the string is not valid UTF-8");
        node(pushNew(kind)).text.assign(text);
    }
    std::size_t base() const { return m_marks.empty() ? 0 : m_marks.back(); }
    PickleId pop()
    {
        if (m_stack.size() <= base())
            failOp("needs a value, but the stack is empty" + std::string(m_marks.empty() ? "" : " above the MARK"));
        const PickleId id = m_stack.back();
        m_stack.pop_back();
        return id;
    }
    PickleId top()
    {
        if (m_stack.size() <= base())
            failOp("needs a value, but the stack is empty");
        return m_stack.back();
    }
    /// The values since the last MARK, which is dropped.
    std::vector<PickleId> popMark()
    {
        if (m_marks.empty())
            failOp("needs a MARK, but there is none");
        const std::size_t from = m_marks.back();
        m_marks.pop_back();
        std::vector<PickleId> items(m_stack.begin() + static_cast<std::ptrdiff_t>(from), m_stack.end());
        m_stack.resize(from);
        return items;
    }
    void addItems(PickleId container, const std::vector<PickleId>& items)
    {
        PickleNode& c = node(container);
        uint32_t h = m_height[container];
        for (PickleId it : items)
            h = std::max(h, m_height[it] + 1);
        if (h > m_limits.maxDepth)
            failOp("containers nested more than " + std::to_string(m_limits.maxDepth) + " deep");
        m_height[container] = h;
        c.items.insert(c.items.end(), items.begin(), items.end());
    }
    PickleId container(PickleKind kind, const std::vector<PickleId>& items)
    {
        const PickleId id = pushNew(kind);
        addItems(id, items);
        return id;
    }
    void expect(PickleId target, PickleKind kind)
    {
        if (node(target).kind != kind)
            failOp("works on a " + std::string(toString(kind)) + ", but the value below is a "
                + std::string(toString(node(target).kind)));
    }

    // -- memo --------------------------------------------------------------------------
    void memoPut(uint64_t key)
    {
        const PickleId v = top();
        if (m_memo.size() >= m_limits.maxMemo && !m_memo.count(key))
            failOp("more than " + std::to_string(m_limits.maxMemo) + " memo entries");
        m_memo[key] = v;
    }
    void memoGet(uint64_t key)
    {
        auto it = m_memo.find(key);
        if (it == m_memo.end())
            failOp("memo entry " + std::to_string(key) + " was never stored");
        push(it->second);
    }
    uint64_t decimalKey(std::string_view s)
    {
        uint64_t v = 0;
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec != std::errc() || p != s.data() + s.size() || s.empty())
            failOp("expected a memo index in decimal, got \"" + printableText(s, 40) + "\"");
        return v;
    }

    // -- protocol 0 text forms ---------------------------------------------------------
    void textInt(bool isLong)
    {
        std::string_view s = line(40, "the integer");
        if (isLong && !s.empty() && s.back() == 'L')
            s.remove_suffix(1);
        if (!isLong && (s == "00" || s == "01")) { // protocol 0/1 booleans
            pushInt(s == "01", PickleKind::Bool);
            return;
        }
        std::string_view digits = s;
        if (!digits.empty() && digits.front() == '+')
            digits.remove_prefix(1);
        int64_t v = 0;
        auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
        if (ec == std::errc::result_out_of_range)
            failOp("the integer " + printableText(s, 60) + " does not fit in 64 bits");
        if (ec != std::errc() || p != digits.data() + digits.size() || digits.empty())
            failOp("expected an integer in decimal, got \"" + printableText(s, 60) + "\"");
        pushInt(v);
    }
    void textFloat()
    {
        const std::string_view s = line(64, "the float");
        double v = 0;
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec != std::errc() || p != s.data() + s.size() || s.empty())
            failOp("expected a float in decimal, got \"" + printableText(s, 60) + "\"");
        node(pushNew(PickleKind::Float)).real = v;
    }
    /// UNICODE: raw-unicode-escape, as pickle writes it (\uXXXX, \UXXXXXXXX, else latin-1).
    void textUnicode()
    {
        const std::string_view s = line(m_limits.maxStringBytes, "the string");
        std::string out;
        out.reserve(s.size());
        for (std::size_t i = 0; i < s.size(); ++i) {
            const uint8_t c = static_cast<uint8_t>(s[i]);
            if (c == '\\' && i + 1 < s.size() && (s[i + 1] == 'u' || s[i + 1] == 'U')) {
                const std::size_t n = s[i + 1] == 'u' ? 4 : 8;
                const std::optional<uint32_t> cp = i + 2 + n <= s.size() ? parseHex(s.substr(i + 2, n)) : std::nullopt;
                if (!cp || *cp > 0x10FFFF || (*cp >= 0xD800 && *cp <= 0xDFFF))
                    failOp("a \\u escape that is not a Unicode scalar value");
                appendUtf8(out, *cp);
                i += 1 + n;
            } else {
                appendUtf8(out, c);
            }
        }
        pushText(out, PickleKind::String);
    }
    /// STRING: a quoted Python 2 str literal with backslash escapes; read as bytes.
    void textString()
    {
        std::string_view s = line(m_limits.maxStringBytes, "the string");
        if (s.size() < 2 || (s.front() != '\'' && s.front() != '"') || s.back() != s.front())
            failOp("expected a quoted string");
        s = s.substr(1, s.size() - 2);
        std::string out;
        for (std::size_t i = 0; i < s.size(); ++i) {
            if (s[i] != '\\') {
                out += s[i];
                continue;
            }
            if (++i >= s.size())
                failOp("the string ends in a backslash");
            switch (s[i]) {
            case '\\':
                out += '\\';
                break;
            case '\'':
                out += '\'';
                break;
            case '"':
                out += '"';
                break;
            case 'n':
                out += '\n';
                break;
            case 'r':
                out += '\r';
                break;
            case 't':
                out += '\t';
                break;
            case '0':
                out += '\0';
                break;
            case 'x': {
                const std::optional<uint32_t> v = i + 2 < s.size() ? parseHex(s.substr(i + 1, 2)) : std::nullopt;
                if (!v)
                    failOp("a \\x escape without two hex digits");
                out += static_cast<char>(*v);
                i += 2;
                break;
            }
            default:
                failOp("an escape this reader does not know: \\" + printableText(s.substr(i, 1)));
            }
        }
        pushText(out, PickleKind::Binary);
    }

    void binaryLong(uint64_t n)
    {
        if (n > 8)
            failOp("an integer of " + std::to_string(n) + " bytes; the most read is 8 (64 bits)");
        const std::string_view s = take(n, "the integer");
        uint64_t v = 0;
        for (std::size_t i = n; i > 0; --i)
            v = (v << 8) | static_cast<uint8_t>(s[i - 1]);
        if (n > 0 && n < 8 && (static_cast<uint8_t>(s[n - 1]) & 0x80))
            v |= ~uint64_t(0) << (8 * n); // sign-extend
        pushInt(static_cast<int64_t>(v));
    }

    std::string globalName(std::string_view module, std::string_view name) const
    {
        return printableText(module, 80) + "." + printableText(name, 80);
    }

    // -- one opcode; true at STOP --------------------------------------------------------
    bool step()
    {
        const OpcodeInfo* info = findOpcode(m_op);
        if (!info)
            fail(m_op, "byte " + hexByte(m_op) + " is not a pickle opcode (not a pickle, or a corrupt one)");
        if (info->refusal) {
            std::string what = info->refusal;
            if (m_op == 'c') { // GLOBAL module\nname\n: name it in the refusal
                const std::size_t save = m_pos;
                const std::string_view rest = m_in.substr(m_pos, std::min<std::size_t>(m_in.size() - m_pos, 400));
                const std::size_t a = rest.find('\n');
                const std::size_t b = a == std::string_view::npos ? a : rest.find('\n', a + 1);
                if (b != std::string_view::npos)
                    what += " (" + globalName(rest.substr(0, a), rest.substr(a + 1, b - a - 1)) + ")";
                m_pos = save;
            } else if (m_op == 0x93 && m_stack.size() >= base() + 2) { // STACK_GLOBAL: module, name on the stack
                const PickleNode& mod = node(m_stack[m_stack.size() - 2]);
                const PickleNode& nm = node(m_stack.back());
                if (mod.kind == PickleKind::String && nm.kind == PickleKind::String)
                    what += " (" + globalName(mod.text, nm.text) + ")";
            }
            failOp("refused: " + what + "; a memory snapshot holds only plain data, and nothing in a file is run");
        }
        switch (m_op) {
        case 0x80: { // PROTO
            const uint64_t v = littleEndian(1);
            if (v > 5)
                failOp("protocol " + std::to_string(v) + " is newer than 5, the newest this reader knows");
            m_doc.m_protocol = static_cast<int>(v);
            break;
        }
        case 0x95: { // FRAME: a length hint; the opcodes inside follow as usual
            const uint64_t n = littleEndian(8);
            if (n > m_in.size() - m_pos)
                failOp("a frame of " + std::to_string(n) + " bytes, but only " + std::to_string(m_in.size() - m_pos)
                    + " are left (truncated or a forged length)");
            break;
        }
        case '.': // STOP
            if (!m_marks.empty())
                failOp("a MARK is still open");
            if (m_stack.size() != 1)
                failOp("expected one value on the stack, found " + std::to_string(m_stack.size()));
            m_doc.m_root = m_stack.back();
            return true;
        case '(': // MARK
            if (m_marks.size() >= m_limits.maxDepth)
                failOp("MARKs nested more than " + std::to_string(m_limits.maxDepth) + " deep");
            m_marks.push_back(m_stack.size());
            break;
        case '0': // POP
            if (m_stack.size() > base())
                m_stack.pop_back();
            else if (!m_marks.empty())
                m_marks.pop_back();
            else
                failOp("the stack is empty");
            break;
        case '1':
            popMark();
            break; // POP_MARK
        case '2':
            push(top());
            break; // DUP
        case 'N':
            pushNew(PickleKind::None);
            break;
        case 0x88:
            pushInt(1, PickleKind::Bool);
            break;
        case 0x89:
            pushInt(0, PickleKind::Bool);
            break;
        case 'I':
            textInt(false);
            break;
        case 'L':
            textInt(true);
            break;
        case 'J':
            pushInt(static_cast<int32_t>(static_cast<uint32_t>(littleEndian(4))));
            break;
        case 'K':
            pushInt(static_cast<int64_t>(littleEndian(1)));
            break;
        case 'M':
            pushInt(static_cast<int64_t>(littleEndian(2)));
            break;
        case 0x8a:
            binaryLong(littleEndian(1));
            break;
        case 0x8b: {
            const int32_t n = static_cast<int32_t>(static_cast<uint32_t>(littleEndian(4)));
            if (n < 0)
                failOp("a negative length");
            binaryLong(static_cast<uint64_t>(n));
            break;
        }
        case 'F':
            textFloat();
            break;
        case 'G': {
            const std::string_view s = take(8, "the float");
            uint64_t bits = 0;
            for (char c : s)
                bits = (bits << 8) | static_cast<uint8_t>(c); // big-endian
            node(pushNew(PickleKind::Float)).real = std::bit_cast<double>(bits);
            break;
        }
        case 'V':
            textUnicode();
            break;
        case 'S':
            textString();
            break;
        case 0x8c:
            pushText(take(stringLength(littleEndian(1)), "a string"), PickleKind::String);
            break;
        case 'X':
            pushText(take(stringLength(littleEndian(4)), "a string"), PickleKind::String);
            break;
        case 0x8d:
            pushText(take(stringLength(littleEndian(8)), "a string"), PickleKind::String);
            break;
        case 'U':
        case 'C':
            pushText(take(stringLength(littleEndian(1)), "bytes"), PickleKind::Binary);
            break;
        case 'T': {
            const int32_t n = static_cast<int32_t>(static_cast<uint32_t>(littleEndian(4)));
            if (n < 0)
                failOp("a negative length");
            pushText(take(stringLength(static_cast<uint64_t>(n)), "bytes"), PickleKind::Binary);
            break;
        }
        case 'B':
            pushText(take(stringLength(littleEndian(4)), "bytes"), PickleKind::Binary);
            break;
        case 0x8e:
        case 0x96:
            pushText(take(stringLength(littleEndian(8)), "bytes"), PickleKind::Binary);
            break;
        case ']':
            pushNew(PickleKind::List);
            break;
        case '}':
            pushNew(PickleKind::Dict);
            break;
        case ')':
            pushNew(PickleKind::Tuple);
            break;
        case 0x8f:
            pushNew(PickleKind::Set);
            break;
        case 'l':
            container(PickleKind::List, popMark());
            break;
        case 't':
            container(PickleKind::Tuple, popMark());
            break;
        case 0x91:
            container(PickleKind::Set, popMark());
            break;
        case 'd': {
            const std::vector<PickleId> items = popMark();
            if (items.size() % 2)
                failOp("a dict needs keys and values in pairs, got " + std::to_string(items.size()) + " values");
            container(PickleKind::Dict, items);
            break;
        }
        case 0x85:
        case 0x86:
        case 0x87: {
            const std::size_t n = m_op - 0x84u;
            std::vector<PickleId> items(n);
            for (std::size_t i = n; i > 0; --i)
                items[i - 1] = pop();
            container(PickleKind::Tuple, items);
            break;
        }
        case 'a': {
            const PickleId item = pop();
            const PickleId list = top();
            expect(list, PickleKind::List);
            addItems(list, { item });
            break;
        }
        case 'e':
        case 0x90: {
            const std::vector<PickleId> items = popMark();
            const PickleId target = top();
            expect(target, m_op == 'e' ? PickleKind::List : PickleKind::Set);
            addItems(target, items);
            break;
        }
        case 's': {
            const PickleId value = pop();
            const PickleId key = pop();
            const PickleId dict = top();
            expect(dict, PickleKind::Dict);
            addItems(dict, { key, value });
            break;
        }
        case 'u': {
            const std::vector<PickleId> items = popMark();
            const PickleId dict = top();
            expect(dict, PickleKind::Dict);
            if (items.size() % 2)
                failOp("keys and values come in pairs, got " + std::to_string(items.size()) + " values");
            addItems(dict, items);
            break;
        }
        case 'p':
            memoPut(decimalKey(line(24, "the memo index")));
            break;
        case 'q':
            memoPut(littleEndian(1));
            break;
        case 'r':
            memoPut(littleEndian(4));
            break;
        case 0x94:
            memoPut(m_memo.size());
            break;
        case 'g':
            memoGet(decimalKey(line(24, "the memo index")));
            break;
        case 'h':
            memoGet(littleEndian(1));
            break;
        case 'j':
            memoGet(littleEndian(4));
            break;
        default:
            failOp("not handled"); // every accepted opcode has a case above
        }
        return false;
    }

    /// From the root: no container holds itself, the exact depth, and how many values the
    /// shared references expand to (iterative: a deep file cannot overflow the C++ stack).
    void finish()
    {
        const std::size_t n = m_doc.m_nodes.size();
        std::vector<uint8_t> state(n, 0); // 0 new, 1 open, 2 done
        std::vector<uint64_t> expanded(n, 0);
        std::vector<uint32_t> height(n, 0);
        struct Frame {
            PickleId id;
            std::size_t next;
        };
        std::vector<Frame> work { { m_doc.m_root, 0 } };
        state[m_doc.m_root] = 1;
        while (!work.empty()) {
            Frame& f = work.back();
            const std::vector<PickleId>& items = m_doc.m_nodes[f.id].items;
            if (f.next < items.size()) {
                const PickleId c = items[f.next++];
                if (state[c] == 1)
                    fail(-1, "a container holds itself (a cycle); a snapshot is plain nested data");
                if (state[c] == 0) {
                    if (work.size() > m_limits.maxDepth)
                        fail(-1, "containers nested more than " + std::to_string(m_limits.maxDepth) + " deep");
                    state[c] = 1;
                    work.push_back({ c, 0 });
                }
                continue;
            }
            uint64_t total = 1;
            uint32_t h = 0;
            for (PickleId c : items) {
                total = std::min(total + expanded[c], m_limits.maxExpandedValues + 1); // each <= max + 1: no overflow
                h = std::max(h, height[c] + 1);
            }
            if (total > m_limits.maxExpandedValues)
                fail(-1,
                    "shared references expand to more than " + std::to_string(m_limits.maxExpandedValues)
                        + " values (a memo expansion bomb)");
            expanded[f.id] = total;
            height[f.id] = h;
            state[f.id] = 2;
            work.pop_back();
        }
        m_doc.m_expanded = expanded[m_doc.m_root];
        m_doc.m_depth = height[m_doc.m_root];
    }

    std::string_view m_in;
    const std::string& m_file;
    PickleLimits m_limits;
    std::size_t m_pos = 0;
    std::size_t m_opStart = 0;
    uint8_t m_op = 0;
    PickleDocument m_doc;
    std::vector<uint32_t> m_height;
    std::vector<PickleId> m_stack;
    std::vector<std::size_t> m_marks;
    std::unordered_map<uint64_t, PickleId> m_memo;
};

PickleDocument parsePickle(std::string_view bytes, const std::string& file, const PickleLimits& limits)
{
    return PickleParser(bytes, file, limits).run();
}

PickleDocument readPickleFile(const std::string& path, const PickleLimits& limits)
{
    struct stat st { };
    if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)
        && static_cast<uint64_t>(st.st_size) > limits.maxFileBytes)
        throw PickleError(path, 0, -1,
            "the file has " + std::to_string(st.st_size) + " bytes; the most read is "
                + formatBytes(static_cast<Bytes>(limits.maxFileBytes)));
    return parsePickle(readTextFile(path, limits.maxFileBytes), path, limits);
}

} // namespace vramlab
