// SPDX-License-Identifier: MIT
#pragma once
// A restricted reader of Python pickles (protocols 0-5) that accepts plain data only: dicts,
// lists, tuples, sets, strings, bytes, ints, floats, bools, None and the memo. Every opcode
// that imports, calls or builds an object (GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ,
// NEWOBJ, NEWOBJ_EX, EXT1/2/4, PERSID, BINPERSID, NEXT_BUFFER, READONLY_BUFFER) is refused
// with the file, the byte offset and the opcode: reading a file never executes anything.
// Used for PyTorch memory snapshots (torch.cuda.memory._dump_snapshot).

#include "vramlab/errors.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vramlab {

enum class PickleKind : uint8_t { None, Bool, Int, Float, String, Binary, List, Tuple, Dict, Set };
std::string_view toString(PickleKind k); ///< "None", "bool", "int", ..., as Python names them

/// Index of a value in a PickleDocument. The memo makes the values a DAG: a value that
/// appears twice in the file (a shared frames list) is stored once and referenced twice.
using PickleId = uint32_t;

/// One value. Containers hold ids of their items (a dict: key, value, key, value, ...).
struct PickleNode {
    PickleKind kind = PickleKind::None;
    int64_t integer = 0; ///< Int, Bool (0 or 1)
    double real = 0; ///< Float
    std::string text; ///< String (UTF-8), Binary (bytes)
    std::vector<PickleId> items;
};

/// What one file may hold. The defaults fit a long recorded snapshot (hundreds of MB).
struct PickleLimits {
    std::size_t maxFileBytes = 512ull * 1024 * 1024;
    std::size_t maxValues = 20'000'000; ///< values created (each string, int, container)
    std::size_t maxDepth = 200; ///< nesting of containers (and of MARKs)
    std::size_t maxStringBytes = 16ull * 1024 * 1024;
    std::size_t maxMemo = 20'000'000;
    uint64_t maxExpandedValues = 4'000'000'000ull; ///< values counted as a tree (shared ones each time)
};

/// The refusal of a byte of the file: where and which opcode (for tests and tools).
class PickleError : public InputError {
public:
    PickleError(const std::string& file, uint64_t offset, int opcode, const std::string& why);
    uint64_t offset() const noexcept { return m_offset; }
    int opcode() const noexcept { return m_opcode; } ///< -1 when the error is not one opcode's
private:
    uint64_t m_offset;
    int m_opcode;
};

class PickleDocument;

/// A read-only handle on one value of a document (cheap to copy).
class PickleView {
public:
    PickleView(const PickleDocument& doc, PickleId id)
        : m_doc(&doc)
        , m_id(id)
    {
    }
    PickleId id() const { return m_id; }
    const PickleNode& node() const;
    PickleKind kind() const { return node().kind; }
    bool isNone() const { return kind() == PickleKind::None; }
    bool isDict() const { return kind() == PickleKind::Dict; }
    /// A list or a tuple (or a set): its items in order.
    bool isSequence() const;
    std::size_t size() const; ///< items of a sequence, entries of a dict
    PickleView at(std::size_t i) const; ///< item i of a sequence
    /// A dict's value for a string key (the last one, as Python keeps it).
    std::optional<PickleView> get(std::string_view key) const;
    std::optional<int64_t> integer() const; ///< an int (a bool is not one)
    std::optional<std::string_view> string() const;
    std::optional<double> number() const; ///< an int or a float
    std::optional<bool> boolean() const;
    /// Python's repr-like short text for an error: "dict", "str 'abc'", "int 12".
    std::string describe() const;

private:
    const PickleDocument* m_doc;
    PickleId m_id;
};

class PickleDocument {
public:
    const std::vector<PickleNode>& nodes() const { return m_nodes; }
    PickleView root() const { return PickleView(*this, m_root); }
    int protocol() const { return m_protocol; } ///< from PROTO; 0 or 1 without it
    std::size_t depth() const { return m_depth; }
    uint64_t expandedValues() const { return m_expanded; }

private:
    friend class PickleParser;
    std::vector<PickleNode> m_nodes;
    PickleId m_root = 0;
    int m_protocol = 0;
    std::size_t m_depth = 0;
    uint64_t m_expanded = 0;
};

/// Parses pickle bytes; throws PickleError naming `file`, the offset and the opcode.
PickleDocument parsePickle(std::string_view bytes, const std::string& file, const PickleLimits& limits = {});

/// Reads a whole file (a regular file, at most limits.maxFileBytes) and parses it.
PickleDocument readPickleFile(const std::string& path, const PickleLimits& limits = {});

/// The opcode's name as Python's pickletools lists it ("GLOBAL", "BINUNICODE"); "" if none.
std::string_view pickleOpcodeName(uint8_t op);

} // namespace vramlab
