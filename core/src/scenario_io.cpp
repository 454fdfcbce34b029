// SPDX-License-Identifier: MIT
#include "vramlab/scenario_io.h"

#include "json_reader.h"
#include "vramlab/errors.h"
#include "vramlab/presets.h"
#include "vramlab/scenario_fields.h"
#include "vramlab/serving_io.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <vector>

namespace vramlab {

using detail::JsonObjectReader;
using nlohmann::json;

namespace {

/// Keys that change memory but are not modelled yet: the value that matches what the
/// model does is accepted, any other is refused naming the key (never silently ignored).
void refuseUnmodelled(JsonObjectReader& r, const std::string& key, const nlohmann::json& modelled, std::string_view why)
{
    if (!r.has(key) || r.at(key) == modelled)
        return;
    throw InputError(r.keyPath(key),
        "not modelled yet (" + std::string(why) + "); expected "
            + (modelled.is_null() ? std::string("no key") : modelled.dump() + " or no key") + ", got "
            + JsonObjectReader::describe(r.at(key)));
}

/// One key of the table, read from the object `r` reads, with the field's range and kind.
void readField(const ScenarioField& f, JsonObjectReader& r, Scenario& sc, std::vector<std::string>& warnings)
{
    const std::string name(fieldName(f.key));
    switch (f.kind) {
    case FieldKind::Integer:
        if (auto v = r.integer(name, static_cast<Count>(f.min), static_cast<Count>(f.max)))
            f.set(sc, *v);
        break;
    case FieldKind::Real:
        if (auto v = r.number(name, f.min, f.max, f.maxOpen))
            f.set(sc, *v);
        break;
    case FieldKind::Boolean:
        if (auto v = r.boolean(name))
            f.set(sc, *v);
        break;
    case FieldKind::Text:
        if (auto v = r.string(name))
            f.set(sc, *v);
        break;
    case FieldKind::Choice:
        if (auto v = r.string(name)) {
            if (!valueNamed<int>(f.choices, *v))
                throw InputError(r.keyPath(name), fieldExpectation(f) + ", got \"" + *v + "\"");
            f.set(sc, *v);
        }
        break;
    case FieldKind::Custom:
        if (r.has(name))
            f.read(sc, r.at(name), r.keyPath(name), warnings);
        break;
    case FieldKind::Unmodelled:
        refuseUnmodelled(r, name, json::parse(f.modelledJson), f.description);
        break;
    }
}

/// Reads every field under `path` from `obj` in table order, descending into a sub-object
/// where its first field stands; keys nobody asked for become warnings.
void readObject(const json& obj, const std::string& path, Scenario& sc, std::vector<std::string>& warnings)
{
    JsonObjectReader r(obj, path);
    std::set<std::string, std::less<>> children;
    const std::string prefix = path + ".";
    for (const ScenarioField& f : scenarioFields()) {
        const std::string_view parent = fieldParent(f.key);
        if (parent == path) {
            readField(f, r, sc, warnings);
        } else if (parent.starts_with(prefix)) {
            const std::string_view rest = f.key.substr(prefix.size());
            const std::string child(rest.substr(0, rest.find('.')));
            if (children.insert(child).second && r.has(child))
                readObject(r.at(child), prefix + child, sc, warnings);
        }
    }
    r.collectUnknown(warnings);
}

bool present(const json& obj, const char* key)
{
    return obj.contains(key) && !obj.at(key).is_null();
}

ModelSpec readModel(const json& doc, std::vector<std::string>& warnings)
{
    Scenario sc;
    readObject(doc, "model", sc, warnings);
    ModelSpec& m = sc.model;
    // head_dim follows hidden / heads unless the preset set it apart from them (Gemma, MLA).
    ModelSpec base;
    if (present(doc, "preset"))
        base = findPreset(doc.at("preset").get<std::string>())->model;
    const bool derivedHeadDim = base.headDim == 0 || base.headDim * base.numHeads == base.hiddenSize;
    if (m.sharedAttentionNorm && !m.parallelResidual) // lit_gpt/model.py@8641822 raises NotImplementedError
        throw InputError(
            "model.shared_attention_norm", "expected parallel_residual true (a shared norm needs a parallel block)");

    for (const char* key : { "vocab_size", "hidden_size", "num_layers", "num_heads" }) {
        const bool missing = (std::string(key) == "vocab_size" && m.vocabSize == 0)
            || (std::string(key) == "hidden_size" && m.hiddenSize == 0)
            || (std::string(key) == "num_layers" && m.numLayers == 0)
            || (std::string(key) == "num_heads" && m.numHeads == 0);
        if (missing)
            throw InputError(std::string("model.") + key, "required (directly or from model.preset)");
    }
    if (m.ffnHiddenSize == 0
        && !(m.moe.enabled() && m.moe.expertFfnHiddenSize > 0 && m.moe.firstDenseLayers == 0
            && m.moe.layerInterval == 1))
        throw InputError("model.ffn_hidden_size", "required (directly or from model.preset)");
    // Heads given without kv heads (or head_dim) re-derive the defaults from the new head count.
    if (present(doc, "num_heads") && !present(doc, "num_kv_heads"))
        m.numKvHeads = m.numHeads;
    if (m.numKvHeads == 0)
        m.numKvHeads = m.numHeads;
    if (!present(doc, "head_dim") && derivedHeadDim) {
        if (m.hiddenSize % m.numHeads != 0)
            throw InputError("model.num_heads",
                "expected a divisor of model.hidden_size (" + std::to_string(m.hiddenSize)
                    + ") or an explicit model.head_dim, got " + std::to_string(m.numHeads));
        m.headDim = m.hiddenSize / m.numHeads;
    }
    if (m.position == PositionKind::Learned && m.maxPositionEmbeddings == 0)
        throw InputError("model.max_position_embeddings", "required with position \"learned\"");
    if (m.name.empty())
        m.name = m.preset.empty() ? "custom model" : m.preset;
    return m;
}

RunSpec readRun(const json& doc, std::vector<std::string>& warnings)
{
    Scenario sc;
    readObject(doc, "run", sc, warnings);
    checkServingMode(doc, sc.run);
    return sc.run;
}

} // namespace

json gpuSpecJson(const GpuSpec& g)
{
    return { { "name", g.name }, { "memory_bytes", g.memoryBytes }, { "fp32_tflops", g.fp32Tflops },
        { "tf32_tflops", g.tf32Tflops }, { "bf16_tflops", g.bf16Tflops }, { "fp16_tflops", g.fp16Tflops },
        { "fp8_tflops", g.fp8Tflops }, { "int8_tops", g.int8Tops }, { "memory_bandwidth_gbs", g.memoryBandwidthGBs },
        { "interconnect_gbs", g.interconnectGBs }, { "host_link_gbs", g.hostLinkGBs } };
}

Scenario readScenario(const json& doc)
{
    JsonObjectReader top(doc, "");
    Scenario sc;
    if (auto format = top.string("format"); format && *format != "vramlab.scenario")
        throw InputError("format", "expected \"vramlab.scenario\", got \"" + *format + "\"");
    if (auto version = top.integer("version", 0, 1'000'000); version && *version != 1)
        throw InputError(
            "version", "expected 1 (this VRAM Lab reads scenario version 1), got " + std::to_string(*version));
    sc.name = top.string("name").value_or("");
    if (!top.has("model"))
        throw InputError("model", "required: the model object");
    sc.model = readModel(doc.at("model"), sc.warnings);
    if (top.has("run"))
        sc.run = readRun(doc.at("run"), sc.warnings);
    top.collectUnknown(sc.warnings);
    if (sc.name.empty())
        sc.name = sc.model.name;
    sc.document = doc;
    return sc;
}

std::string readTextFile(const std::string& path, std::size_t maxBytes)
{
    if (path.empty())
        throw InputError("", "the file name is empty");
    // A FIFO, a device or a folder would block the reader or never end: only regular files.
    struct stat st { };
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
        throw InputError("",
            S_ISDIR(st.st_mode) ? "is a folder, not a file" : "not a regular file (a pipe, socket or device); not read",
            path);
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw InputError("", std::string("cannot open the file: ") + std::strerror(errno), path);
    std::string text;
    char buf[65536];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
        text.append(buf, static_cast<size_t>(in.gcount()));
        if (text.size() > maxBytes)
            throw InputError(
                "", "file larger than " + formatBytes(static_cast<Bytes>(maxBytes)) + "; not a scenario", path);
    }
    if (in.bad())
        throw InputError("", "cannot read the file", path);
    return text;
}

namespace {

/// A SAX pass that refuses an object with the same key twice: nlohmann would keep the last
/// one silently, so a file could say two things and mean one. (A parser callback would do
/// the same in the DOM parse, but nlohmann's callback parser is ten times slower: 5 s for a
/// 3 MB file.) Syntax errors are left to the DOM parse, which reports them with a position.
class DuplicateKeyCheck {
public:
    explicit DuplicateKeyCheck(const std::string& file)
        : m_file(file)
    {
    }

    bool null() { return value(); }
    bool boolean(bool) { return value(); }
    bool number_integer(json::number_integer_t) { return value(); }
    bool number_unsigned(json::number_unsigned_t) { return value(); }
    bool number_float(json::number_float_t, const json::string_t&) { return value(); }
    bool string(json::string_t&) { return value(); }
    bool binary(json::binary_t&) { return value(); }
    bool start_object(std::size_t) { return m_frames.push_back({ true, {}, {}, 0 }), true; }
    bool start_array(std::size_t) { return m_frames.push_back({ false, {}, {}, 0 }), true; }
    bool end_object() { return m_frames.pop_back(), value(); }
    bool end_array() { return m_frames.pop_back(), value(); }
    bool key(json::string_t& k)
    {
        Frame& f = m_frames.back();
        f.key = k;
        if (!f.keys.insert(k).second)
            throw InputError(path(), "the key appears twice in one object; keep one", m_file);
        return true;
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }

private:
    struct Frame {
        bool object = false;
        std::set<std::string> keys;
        std::string key; ///< in an object: the key being read
        std::size_t index = 0; ///< in an array: the element being read
    };
    bool value()
    {
        if (!m_frames.empty() && !m_frames.back().object)
            ++m_frames.back().index;
        return true;
    }
    std::string path() const
    {
        std::string p;
        for (const Frame& f : m_frames)
            p += f.object ? (p.empty() ? "" : ".") + f.key : "[" + std::to_string(f.index) + "]";
        return p;
    }

    const std::string& m_file;
    std::vector<Frame> m_frames;
};

} // namespace

json parseJsonText(const std::string& text, const std::string& file)
{
    // Depth limit: a scenario nests 3 levels; refuse pathological nesting before recursing.
    int depth = 0, maxDepth = 0;
    bool inString = false, escaped = false;
    for (char ch : text) {
        if (inString) {
            if (escaped)
                escaped = false;
            else if (ch == '\\')
                escaped = true;
            else if (ch == '"')
                inString = false;
            continue;
        }
        if (ch == '"')
            inString = true;
        else if (ch == '{' || ch == '[')
            maxDepth = std::max(maxDepth, ++depth);
        else if (ch == '}' || ch == ']')
            --depth;
        if (maxDepth > 64)
            throw InputError("", "JSON nested deeper than 64 levels; not a scenario", file);
    }
    try {
        DuplicateKeyCheck check(file);
        json::sax_parse(text, &check);
        return json::parse(text);
    } catch (const json::parse_error& e) {
        // nlohmann reports the byte offset; turn it into line and column for people.
        const size_t at = std::min<size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
        size_t line = 1, col = 1;
        for (size_t i = 0; i < at; ++i) {
            if (text[i] == '\n') {
                ++line;
                col = 1;
            } else {
                ++col;
            }
        }
        throw InputError(
            "", "not valid JSON at line " + std::to_string(line) + ", column " + std::to_string(col), file);
    } catch (const json::exception&) {
        // Found by fuzzing: a number beyond double's range (1e999) throws out_of_range, not parse_error.
        throw InputError("", "not valid JSON: a number beyond the range of a double (about 1.8e308)", file);
    }
}

Scenario loadScenarioFile(const std::string& path)
{
    try {
        return readScenario(parseJsonText(readTextFile(path), path));
    } catch (const InputError& e) {
        throw e.withFile(path);
    }
}

json& fieldObject(json& doc, std::string_view key)
{
    json* at = &doc;
    const std::string_view parent = fieldParent(key);
    for (std::size_t begin = 0; begin <= parent.size();) {
        const std::size_t end = std::min(parent.find('.', begin), parent.size());
        json& next = (*at)[std::string(parent.substr(begin, end - begin))];
        if (!next.is_object())
            next = json::object();
        at = &next;
        begin = end + 1;
    }
    return *at;
}

json scenarioToJson(const Scenario& sc)
{
    json doc = sc.document.is_object() ? sc.document : json::object();
    doc["format"] = "vramlab.scenario";
    doc["version"] = 1;
    doc["name"] = sc.name;
    std::vector<std::string> objects; // every object a field lives in, deepest last
    for (const ScenarioField& f : scenarioFields()) {
        if (f.kind == FieldKind::Unmodelled)
            continue; // only its one accepted value can have been read: the document keeps it
        json* at = &fieldObject(doc, f.key);
        const std::string_view parent = fieldParent(f.key);
        if (std::find(objects.begin(), objects.end(), parent) == objects.end())
            objects.emplace_back(parent);
        json value = fieldJson(f, sc);
        if (value.is_null())
            at->erase(std::string(fieldName(f.key)));
        else
            (*at)[std::string(fieldName(f.key))] = std::move(value);
    }
    // A sub-object whose keys were all left out (model.moe of a dense model) goes too.
    for (auto it = objects.rbegin(); it != objects.rend(); ++it) {
        const json::json_pointer ptr("/" + [&] {
            std::string p = *it;
            std::replace(p.begin(), p.end(), '.', '/');
            return p;
        }());
        if (it->find('.') != std::string::npos && doc.contains(ptr) && doc.at(ptr).empty())
            doc.at(ptr.parent_pointer()).erase(ptr.back());
    }
    return doc;
}

std::string scenarioFileText(const Scenario& sc)
{
    const json doc = scenarioToJson(sc);
    // Indenting a deeply nested payload multiplies its size (2 spaces a level a line):
    // a 3.3 MB file came back as 16.5 MB, past the reader's limit.
    std::string text = doc.dump(2) + "\n";
    if (text.size() <= kMaxScenarioFileBytes)
        return text;
    text = doc.dump() + "\n";
    if (text.size() > kMaxScenarioFileBytes)
        throw InputError("",
            "the scenario would be " + formatBytes(static_cast<Bytes>(text.size())) + " written, more than the "
                + formatBytes(static_cast<Bytes>(kMaxScenarioFileBytes))
                + " a scenario file may be (it could not be opened again); remove unknown keys");
    return text;
}

void saveScenarioFile(const std::string& path, const Scenario& sc)
{
    try {
        writeFileAtomically(path, scenarioFileText(sc));
    } catch (const InputError& e) {
        throw e.withFile(path);
    }
}

} // namespace vramlab
