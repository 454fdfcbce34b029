// SPDX-License-Identifier: MIT
#include "vramlab/memory_snapshot.h"

#include "vramlab/errors.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace vramlab {

std::string_view snapshotCategoryKey(SnapshotCategory c)
{
    static constexpr std::string_view keys[]
        = { "weights", "gradients", "optimizer_states", "activations", "temporaries", "other" };
    return keys[static_cast<std::size_t>(c)];
}

std::string_view snapshotCategoryLabel(SnapshotCategory c)
{
    static constexpr std::string_view labels[]
        = { "Weights", "Gradients", "Optimizer states", "Activations", "Temporaries", "Other" };
    return labels[static_cast<std::size_t>(c)];
}

std::string_view toString(SnapshotPhase p)
{
    static constexpr std::string_view names[] = { "unknown", "setup", "forward", "backward", "optimizer" };
    return names[static_cast<std::size_t>(p)];
}

std::string SnapshotFrame::text() const
{
    const std::size_t slash = filename.rfind('/');
    return (slash == std::string::npos ? filename : filename.substr(slash + 1)) + ":" + std::to_string(line) + ":"
        + name;
}

const SnapshotDevice* MemorySnapshot::busiest() const
{
    const SnapshotDevice* best = nullptr;
    for (const SnapshotDevice& d : devices)
        if (!best || d.peakAllocatedBytes > best->peakAllocatedBytes)
            best = &d;
    return best;
}

namespace {

// ---------------------------------------------------------------------------------------
// Typed access with key paths for errors

class Fields {
public:
    explicit Fields(const std::string& file)
        : m_file(file)
    {
    }

    [[noreturn]] void fail(const std::string& path, const std::string& expected, const PickleView& got) const
    {
        throw InputError(path, "expected " + expected + ", got " + got.describe(), m_file);
    }
    PickleView dict(const PickleView& v, const std::string& path) const
    {
        if (!v.isDict())
            fail(path, "a dict", v);
        return v;
    }
    PickleView list(const PickleView& v, const std::string& path) const
    {
        if (!v.isSequence())
            fail(path, "a list", v);
        return v;
    }
    std::optional<int64_t> integer(
        const PickleView& d, const char* key, const std::string& path, bool required = false) const
    {
        const std::optional<PickleView> v = d.get(key);
        if (!v || v->isNone()) {
            if (required)
                throw InputError(path + "." + key, "missing: every entry states it", m_file);
            return std::nullopt;
        }
        if (!v->integer())
            fail(path + "." + key, "an int", *v);
        return v->integer();
    }
    Bytes size(const PickleView& d, const char* key, const std::string& path, bool required) const
    {
        const std::optional<int64_t> v = integer(d, key, path, required);
        if (v && *v < 0)
            throw InputError(path + "." + key, "expected a size of 0 bytes or more, got " + std::to_string(*v), m_file);
        return v.value_or(0);
    }
    std::string string(const PickleView& d, const char* key, const std::string& path) const
    {
        const std::optional<PickleView> v = d.get(key);
        if (!v || v->isNone())
            return {};
        if (!v->string())
            fail(path + "." + key, "a str", *v);
        return std::string(*v->string());
    }

private:
    const std::string& m_file;
};

// ---------------------------------------------------------------------------------------
// What an allocation stack says (computed once per distinct frames list: they are shared)

struct FrameFacts {
    SnapshotPhase phase = SnapshotPhase::Unknown;
    std::string marker; ///< the frame that decided the phase
    std::string forwardAt; ///< the forward that allocated (innermost user forward)
    bool optimizerStateInit = false;
    bool accumulateGrad = false;
    bool any = false; ///< the stack has frames at all
};

bool contains(std::string_view s, std::string_view part)
{
    return s.find(part) != std::string_view::npos;
}

constexpr std::string_view kModulePy = "torch/nn/modules/module.py";

bool isOptimizer(std::string_view f, std::string_view)
{
    return contains(f, "torch/optim/");
}
bool isBackward(std::string_view f, std::string_view n)
{
    return contains(n, "torch::autograd::Engine") || contains(n, "autograd::engine") || n == "_engine_run_backward"
        || (contains(f, "torch/autograd/") && (n == "backward" || n == "grad"))
        || (f.ends_with("torch/_tensor.py") && n == "backward");
}
bool isModelMove(std::string_view f, std::string_view n)
{
    if (f.ends_with(kModulePy))
        return n == "to" || n == "cuda" || n == "_apply" || n == "load_state_dict" || n == "_load_from_state_dict"
            || n == "half" || n == "bfloat16" || n == "float" || n == "type" || n == "to_empty";
    return n == "load_state_dict" || n == "from_pretrained";
}
bool isForward(std::string_view f, std::string_view n)
{
    return n == "forward" || (f.ends_with(kModulePy) && (n == "_call_impl" || n == "_wrapped_call_impl"))
        || (f.ends_with("torch/nn/functional.py") && (contains(n, "loss") || n == "cross_entropy"));
}
bool isConstruction(std::string_view, std::string_view n)
{
    return n == "__init__" || n == "reset_parameters";
}

/// A frame for a rule's text: a C++ function without its argument list.
std::string shortFrame(const SnapshotFrame& f)
{
    SnapshotFrame s = f;
    if (const std::size_t paren = s.name.find('('); paren != std::string::npos && paren > 0)
        s.name.resize(paren);
    return s.text();
}

/// The strongest kind of frame on the stack decides: an optimizer step, then backward (a
/// forward recomputed inside backward is backward's), then moving or loading a model, then
/// a forward, then a constructor.
FrameFacts frameFacts(const PickleView& frames, const Fields& fields, const std::string& path)
{
    FrameFacts ff;
    struct Rule {
        bool (*match)(std::string_view, std::string_view);
        SnapshotPhase phase;
    };
    static constexpr Rule rules[] = { { isOptimizer, SnapshotPhase::Optimizer },
        { isBackward, SnapshotPhase::Backward }, { isModelMove, SnapshotPhase::Setup },
        { isForward, SnapshotPhase::Forward }, { isConstruction, SnapshotPhase::Setup } };
    std::vector<SnapshotFrame> fs;
    fs.reserve(frames.size());
    for (std::size_t i = 0; i < frames.size(); ++i) {
        const std::string p = path + "[" + std::to_string(i) + "]";
        const PickleView f = fields.dict(frames.at(i), p);
        fs.push_back(
            { fields.string(f, "filename", p), fields.integer(f, "line", p).value_or(0), fields.string(f, "name", p) });
    }
    ff.any = !fs.empty();
    for (const Rule& r : rules) {
        bool found = false;
        for (const SnapshotFrame& f : fs)
            found = found || r.match(f.filename, f.name);
        if (!found)
            continue;
        ff.phase = r.phase;
        for (const SnapshotFrame& f : fs) // the innermost frame of that kind says the most
            if (r.match(f.filename, f.name)) {
                ff.marker = shortFrame(f);
                break;
            }
        break;
    }
    for (const SnapshotFrame& f : fs) {
        if (f.name == "_init_group" && isOptimizer(f.filename, f.name)) {
            ff.optimizerStateInit = true;
            ff.marker = shortFrame(f);
        }
        if (contains(f.name, "AccumulateGrad"))
            ff.accumulateGrad = true;
    }
    std::string anyForward;
    for (const SnapshotFrame& f : fs) // innermost first: the first user forward is the module's own
        if (f.name == "forward") {
            if (anyForward.empty())
                anyForward = shortFrame(f);
            if (!contains(f.filename, "torch/nn/modules/")) {
                ff.forwardAt = shortFrame(f);
                break;
            }
        }
    if (ff.forwardAt.empty())
        ff.forwardAt = anyForward.empty() ? ff.marker : anyForward;
    return ff;
}

std::vector<SnapshotFrame> keptFrames(const PickleView& frames, const Fields& fields, const std::string& path)
{
    std::vector<SnapshotFrame> out;
    for (std::size_t i = 0; i < frames.size() && out.size() < kSnapshotFramesKept; ++i) {
        const std::string p = path + "[" + std::to_string(i) + "]";
        const PickleView f = fields.dict(frames.at(i), p);
        out.push_back(
            { fields.string(f, "filename", p), fields.integer(f, "line", p).value_or(0), fields.string(f, "name", p) });
    }
    return out;
}

// ---------------------------------------------------------------------------------------
// One device

/// A block's life as the analysis tracks it (frames resolved only for the blocks reported).
struct Life {
    SnapshotBlock block;
    std::optional<PickleId> frames; ///< allocation stack in the document
    std::string framesPath;
};

struct DumpBlock {
    int64_t address = 0;
    Bytes size = 0;
    int64_t stream = 0;
    bool alive = false; ///< active_allocated (or pending free, counted until free_completed)
    std::optional<PickleId> frames;
    std::string path;
};

struct Entry {
    enum Kind { Alloc, Free, SegmentAdd, SegmentRemove, Other } kind = Other;
    int64_t addr = 0;
    Bytes size = 0;
    int64_t stream = 0;
    int64_t timeUs = 0;
    std::optional<PickleId> frames;
};

class DeviceAnalysis {
public:
    DeviceAnalysis(const PickleDocument& doc, const Fields& fields, MemorySnapshot& out)
        : m_doc(doc)
        , m_fields(fields)
        , m_out(out)
    {
    }

    const FrameFacts& facts(std::optional<PickleId> frames, const std::string& path)
    {
        static const FrameFacts none;
        if (!frames)
            return none;
        auto it = m_facts.find(*frames);
        if (it == m_facts.end())
            it = m_facts.emplace(*frames, frameFacts(PickleView(m_doc, *frames), m_fields, path)).first;
        return it->second;
    }

    SnapshotDevice run(int device, const std::vector<DumpBlock>& dump, Bytes reservedAtDump,
        const std::vector<Entry>& trace, const std::vector<std::string>& tracePaths)
    {
        SnapshotDevice d;
        d.device = device;
        d.hasTrace = !trace.empty();
        d.traceEntries = static_cast<int64_t>(trace.size());
        d.reservedAtDumpBytes = reservedAtDump;
        for (const DumpBlock& b : dump)
            if (b.alive)
                d.allocatedAtDumpBytes = checkedAdd(d.allocatedAtDumpBytes, b.size);

        // Phases: each entry's stack, or the last one that told.
        const std::size_t n = trace.size();
        std::vector<SnapshotPhase> phaseAt(n, SnapshotPhase::Unknown);
        std::vector<int64_t> segmentAt(n, 0);
        SnapshotPhase current = SnapshotPhase::Unknown;
        int64_t segment = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const SnapshotPhase p = facts(trace[i].frames, tracePaths[i] + ".frames").phase;
            if (p != SnapshotPhase::Unknown && p != current) {
                current = p;
                ++segment;
                d.phases.push_back({ p, static_cast<int64_t>(i), n > 1 ? double(i) / double(n - 1) : 0.0 });
            }
            phaseAt[i] = current;
            segmentAt[i] = segment;
            if (trace[i].kind == Entry::Other)
                ++d.ignoredEntries;
        }

        // Lifetimes, forward; a free of an address never allocated in the trace is a block
        // that was alive before it.
        std::vector<Life> lives;
        std::unordered_map<int64_t, std::size_t> open;
        Bytes segmentDelta = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const Entry& e = trace[i];
            if (e.kind == Entry::Alloc) {
                if (auto it = open.find(e.addr); it != open.end()) { // allocated twice without a free: close the first
                    lives[it->second].block.freeEvent = static_cast<int64_t>(i);
                    open.erase(it);
                }
                Life l;
                l.block = blockAt(device, e.addr, e.size, e.stream);
                l.block.allocEvent = static_cast<int64_t>(i);
                l.block.allocTimeUs = e.timeUs;
                l.frames = e.frames;
                l.framesPath = tracePaths[i] + ".frames";
                open.emplace(e.addr, lives.size());
                lives.push_back(std::move(l));
            } else if (e.kind == Entry::Free) {
                if (auto it = open.find(e.addr); it != open.end()) {
                    lives[it->second].block.freeEvent = static_cast<int64_t>(i);
                    open.erase(it);
                } else {
                    if (i == 0)
                        d.traceStartsMidway = true;
                    Life l;
                    l.block = blockAt(device, e.addr, e.size, e.stream);
                    l.block.freeEvent = static_cast<int64_t>(i);
                    lives.push_back(std::move(l));
                }
            } else if (e.kind == Entry::SegmentAdd) {
                segmentDelta = checkedAdd(segmentDelta, e.size);
            } else if (e.kind == Entry::SegmentRemove) {
                segmentDelta = checkedAdd(segmentDelta, -e.size);
            }
        }
        // Blocks alive at the dump that the trace never allocated were there before it.
        for (const DumpBlock& b : dump) {
            if (!b.alive || open.count(b.address))
                continue;
            Life l;
            l.block = blockAt(device, b.address, b.size, b.stream);
            l.frames = b.frames;
            l.framesPath = b.path + ".frames";
            lives.push_back(std::move(l));
        }
        // A block the trace allocated keeps the dump's stack when the trace entry had none.
        for (const DumpBlock& b : dump)
            if (b.alive && b.frames)
                if (auto it = open.find(b.address); it != open.end() && !lives[it->second].frames) {
                    lives[it->second].frames = b.frames;
                    lives[it->second].framesPath = b.path + ".frames";
                }

        Bytes allocated = 0;
        for (const Life& l : lives)
            if (l.block.allocEvent < 0) {
                allocated = checkedAdd(allocated, l.block.sizeBytes);
                ++d.blocksBeforeTrace;
            }
        d.bytesBeforeTrace = allocated;
        Bytes reserved = checkedAdd(reservedAtDump, -segmentDelta);
        if (reserved < 0) {
            m_out.notes.push_back("device " + std::to_string(device)
                + ": the trace frees more segments than the dump and its own allocations explain; reserved starts at "
                  "0");
            reserved = 0;
        }

        // The curves and the peak (the first entry that reaches it).
        d.curve.reserve(n + 1);
        d.curve.push_back(
            { -1, n ? trace[0].timeUs : 0, allocated, std::max(reserved, allocated), SnapshotPhase::Unknown, 0.0 });
        d.peakAllocatedBytes = allocated;
        d.peakReservedBytes = d.curve.back().reservedBytes;
        for (std::size_t i = 0; i < n; ++i) {
            const Entry& e = trace[i];
            switch (e.kind) {
            case Entry::Alloc:
                allocated = checkedAdd(allocated, e.size);
                break;
            case Entry::Free:
                allocated = checkedAdd(allocated, -e.size);
                break;
            case Entry::SegmentAdd:
                reserved = checkedAdd(reserved, e.size);
                break;
            case Entry::SegmentRemove:
                reserved = checkedAdd(reserved, -e.size);
                break;
            case Entry::Other:
                continue;
            }
            const double fraction = n > 1 ? double(i) / double(n - 1) : 1.0;
            d.curve.push_back({ static_cast<int64_t>(i), e.timeUs, allocated, reserved, phaseAt[i], fraction });
            if (allocated > d.peakAllocatedBytes) {
                d.peakAllocatedBytes = allocated;
                d.peakAllocatedEvent = static_cast<int64_t>(i);
                d.peakTimeUs = e.timeUs;
                d.peakPhase = phaseAt[i];
            }
            d.peakReservedBytes = std::max(d.peakReservedBytes, reserved);
        }
        if (!d.hasTrace) {
            d.peakAllocatedBytes = d.allocatedAtDumpBytes;
            d.peakReservedBytes = reservedAtDump;
            d.curve = { { -1, 0, d.allocatedAtDumpBytes, reservedAtDump, SnapshotPhase::Unknown, 1.0 } };
        }

        // Categories: each block alive at the peak, by its stack and its lifetime.
        const int64_t peak = d.peakAllocatedEvent;
        std::vector<std::size_t> atPeak;
        for (std::size_t i = 0; i < lives.size(); ++i) {
            const SnapshotBlock& b = lives[i].block;
            if (b.allocEvent <= peak && (b.freeEvent < 0 || b.freeEvent > peak))
                atPeak.push_back(i);
        }
        std::map<Bytes, int64_t> gradientSizes;
        for (std::size_t i : atPeak) {
            Life& l = lives[i];
            classify(l, phaseAt, segmentAt);
            if (l.block.category == SnapshotCategory::Gradients)
                ++gradientSizes[l.block.sizeBytes];
        }
        // Sizes: a block with no stack, alive all along, of a size that gradients have.
        for (std::size_t i : atPeak) {
            SnapshotBlock& b = lives[i].block;
            if (b.rule.empty()) {
                auto it = gradientSizes.find(b.sizeBytes);
                if (it != gradientSizes.end() && it->second > 0) {
                    --it->second;
                    b.category = SnapshotCategory::Weights;
                    b.rule
                        = "no allocation stack; alive before the trace and never freed, and a gradient has its size ("
                        + std::to_string(b.sizeBytes) + " bytes): taken as that gradient's weight";
                } else if (it != gradientSizes.end()) {
                    b.category = SnapshotCategory::OptimizerStates;
                    b.rule = "no allocation stack; alive before the trace and never freed, with a gradient's size, and "
                             "every such gradient already has its weight: taken as optimizer state";
                } else {
                    b.category = SnapshotCategory::Other;
                    b.rule = "no allocation stack; alive before the trace and never freed (record with context='all' "
                             "before the model is built to tell weights from optimizer states)";
                }
            }
            Bytes& sum = d.categoryBytesAtPeak[static_cast<std::size_t>(b.category)];
            sum = checkedAdd(sum, b.sizeBytes);
        }
        std::stable_sort(atPeak.begin(), atPeak.end(),
            [&](std::size_t a, std::size_t b) { return lives[a].block.sizeBytes > lives[b].block.sizeBytes; });
        d.aliveAtPeak.reserve(atPeak.size());
        for (std::size_t i : atPeak) {
            Life& l = lives[i];
            if (l.frames)
                l.block.frames = keptFrames(PickleView(m_doc, *l.frames), m_fields, l.framesPath);
            d.aliveAtPeak.push_back(std::move(l.block));
        }
        return d;
    }

private:
    static SnapshotBlock blockAt(int device, int64_t addr, Bytes size, int64_t stream)
    {
        SnapshotBlock b;
        b.device = device;
        b.address = addr;
        b.sizeBytes = size;
        b.stream = stream;
        return b;
    }

    /// The rules, in order; the one that fires is written into the block. A block with no
    /// stack that was alive all along is left for the size rule (rule stays empty).
    void classify(Life& l, const std::vector<SnapshotPhase>& phaseAt, const std::vector<int64_t>& segmentAt)
    {
        SnapshotBlock& b = l.block;
        const FrameFacts& ff = facts(l.frames, l.framesPath);
        b.phase = ff.phase;
        const bool freed = b.freeEvent >= 0;
        const bool freedWithin = freed && b.allocEvent >= 0
            && segmentAt[static_cast<std::size_t>(b.freeEvent)] == segmentAt[static_cast<std::size_t>(b.allocEvent)];
        auto set = [&](SnapshotCategory c, std::string rule) {
            b.category = c;
            b.rule = std::move(rule);
        };
        if (!ff.any) {
            if (b.allocEvent < 0 && freed && phaseAt[static_cast<std::size_t>(b.freeEvent)] == SnapshotPhase::Backward)
                set(SnapshotCategory::Activations,
                    "no allocation stack; alive before the trace and freed in backward: saved for backward");
            else if (b.allocEvent >= 0)
                set(SnapshotCategory::Other, "no allocation stack in the trace (record with context='all')");
            else if (freed)
                set(SnapshotCategory::Other,
                    "no allocation stack; alive before the trace and freed in "
                        + std::string(toString(phaseAt[static_cast<std::size_t>(b.freeEvent)])));
            return; // alive all along: the size rule decides
        }
        if (ff.optimizerStateInit)
            return set(
                SnapshotCategory::OptimizerStates, "allocated in " + ff.marker + " (the optimizer creating its state)");
        switch (ff.phase) {
        case SnapshotPhase::Optimizer:
            if (freedWithin)
                return set(SnapshotCategory::Temporaries,
                    "a working buffer of the optimizer step (" + ff.marker + "), freed before the step ended");
            return set(SnapshotCategory::OptimizerStates,
                "allocated in the optimizer step (" + ff.marker + ") and kept after it");
        case SnapshotPhase::Backward:
            if (ff.accumulateGrad)
                return set(SnapshotCategory::Gradients, "allocated by AccumulateGrad in backward: a parameter's .grad");
            if (freedWithin)
                return set(SnapshotCategory::Temporaries,
                    "backward working memory (" + ff.marker + "), freed before backward ended");
            return set(SnapshotCategory::Gradients,
                "allocated in backward (" + ff.marker + ") and kept past its end: a parameter's .grad");
        case SnapshotPhase::Setup:
            return set(SnapshotCategory::Weights, "allocated while building or loading the model (" + ff.marker + ")");
        case SnapshotPhase::Forward:
            if (freedWithin)
                return set(SnapshotCategory::Temporaries,
                    "a forward intermediate (" + ff.forwardAt + "), freed within the forward");
            if (freed && phaseAt[static_cast<std::size_t>(b.freeEvent)] == SnapshotPhase::Backward)
                return set(
                    SnapshotCategory::Activations, "saved by the forward (" + ff.forwardAt + ") and freed in backward");
            return set(
                SnapshotCategory::Activations, "allocated in the forward (" + ff.forwardAt + ") and alive past it");
        case SnapshotPhase::Unknown:
            break;
        }
        std::string innermost;
        if (l.frames) {
            const std::vector<SnapshotFrame> fs = keptFrames(PickleView(m_doc, *l.frames), m_fields, l.framesPath);
            if (!fs.empty())
                innermost = " (innermost: " + fs.front().text() + ")";
        }
        set(SnapshotCategory::Other,
            "no frame names a forward, backward, optimizer step or model construction" + innermost);
    }

    const PickleDocument& m_doc;
    const Fields& m_fields;
    MemorySnapshot& m_out;
    std::unordered_map<PickleId, FrameFacts> m_facts;
};

std::optional<PickleId> framesOf(const PickleView& d, const Fields& fields, const std::string& path)
{
    std::optional<PickleView> f = d.get("frames");
    if (!f) { // the old format: history[0].frames
        if (const std::optional<PickleView> h = d.get("history");
            h && h->isSequence() && h->size() > 0 && h->at(0).isDict())
            f = h->at(0).get("frames");
    }
    if (!f || f->isNone())
        return std::nullopt;
    fields.list(*f, path + ".frames");
    return f->size() ? std::optional<PickleId>(f->id()) : std::nullopt;
}

MemorySnapshot analyze(const PickleDocument& doc, const std::string& file, const SnapshotLimits& limits)
{
    const Fields fields(file);
    MemorySnapshot out;
    out.file = file;
    out.pickleProtocol = doc.protocol();
    PickleView root = doc.root();
    std::optional<PickleView> segments, traces;
    if (root.isSequence()) { // the oldest format: the segments alone
        segments = root;
        out.notes.push_back("the file is a list of segments (an old snapshot): the state at the dump, no trace");
    } else {
        fields.dict(root, "the snapshot");
        segments = root.get("segments");
        traces = root.get("device_traces");
        if (!segments && !traces)
            throw InputError("segments",
                "missing: not a PyTorch memory snapshot (torch.cuda.memory._dump_snapshot writes "
                "a dict with segments and device_traces)",
                file);
        if (const std::optional<PickleView> s = root.get("allocator_settings"); s && s->isDict())
            out.allocatorConf = fields.string(*s, "PYTORCH_CUDA_ALLOC_CONF", "allocator_settings");
    }

    // Segments, by device.
    std::map<int, std::vector<DumpBlock>> dump;
    std::map<int, Bytes> reserved;
    if (segments) {
        fields.list(*segments, "segments");
        for (std::size_t s = 0; s < segments->size(); ++s) {
            const std::string sp = "segments[" + std::to_string(s) + "]";
            const PickleView seg = fields.dict(segments->at(s), sp);
            const int64_t device = fields.integer(seg, "device", sp).value_or(0);
            if (device < 0 || device >= static_cast<int64_t>(limits.maxDevices))
                throw InputError(sp + ".device",
                    "expected a device index from 0 to " + std::to_string(limits.maxDevices - 1) + ", got "
                        + std::to_string(device),
                    file);
            const int dev = static_cast<int>(device);
            reserved[dev] = checkedAdd(reserved[dev], fields.size(seg, "total_size", sp, true));
            int64_t address = fields.integer(seg, "address", sp).value_or(0);
            const int64_t stream = fields.integer(seg, "stream", sp).value_or(0);
            std::vector<DumpBlock>& blocks = dump[dev];
            const std::optional<PickleView> bl = seg.get("blocks");
            if (!bl)
                continue;
            fields.list(*bl, sp + ".blocks");
            for (std::size_t b = 0; b < bl->size(); ++b) {
                const std::string bp = sp + ".blocks[" + std::to_string(b) + "]";
                const PickleView blk = fields.dict(bl->at(b), bp);
                DumpBlock db;
                db.size = fields.size(blk, "size", bp, true);
                db.address = fields.integer(blk, "address", bp).value_or(address);
                address = db.address + db.size;
                db.stream = stream;
                const std::string state = fields.string(blk, "state", bp);
                if (state != "active_allocated" && state != "active_pending_free" && state != "inactive"
                    && state != "active_awaiting_free")
                    throw InputError(bp + ".state",
                        "expected active_allocated, active_pending_free or inactive, got \"" + state + "\"", file);
                db.alive = state == "active_allocated";
                db.frames = framesOf(blk, fields, bp);
                db.path = bp;
                blocks.push_back(std::move(db));
            }
        }
    }

    // Traces, by device index.
    std::map<int, std::vector<Entry>> entries;
    std::map<int, std::vector<std::string>> paths;
    bool anyFreeCompleted = false;
    std::size_t total = 0;
    if (traces) {
        fields.list(*traces, "device_traces");
        if (traces->size() > limits.maxDevices)
            throw InputError("device_traces",
                "lists " + std::to_string(traces->size()) + " devices; the most read is "
                    + std::to_string(limits.maxDevices),
                file);
        for (std::size_t dv = 0; dv < traces->size(); ++dv) {
            const std::string dp = "device_traces[" + std::to_string(dv) + "]";
            const PickleView t = fields.list(traces->at(dv), dp);
            for (std::size_t i = 0; i < t.size(); ++i) {
                const std::string ep = dp + "[" + std::to_string(i) + "]";
                const PickleView e = fields.dict(t.at(i), ep);
                const std::string action = fields.string(e, "action", ep);
                if (action == "free_completed")
                    anyFreeCompleted = true;
            }
        }
        for (std::size_t dv = 0; dv < traces->size(); ++dv) {
            const std::string dp = "device_traces[" + std::to_string(dv) + "]";
            const PickleView t = traces->at(dv);
            if (t.size() == 0)
                continue;
            total += t.size();
            if (total > limits.maxTraceEntries)
                throw InputError("device_traces",
                    "more than " + std::to_string(limits.maxTraceEntries) + " trace entries; the most read", file);
            std::vector<Entry>& list = entries[static_cast<int>(dv)];
            std::vector<std::string>& ps = paths[static_cast<int>(dv)];
            list.reserve(t.size());
            for (std::size_t i = 0; i < t.size(); ++i) {
                const std::string ep = dp + "[" + std::to_string(i) + "]";
                const PickleView e = t.at(i);
                const std::string action = fields.string(e, "action", ep);
                Entry en;
                if (action == "alloc")
                    en.kind = Entry::Alloc;
                else if (action == (anyFreeCompleted ? "free_completed" : "free_requested"))
                    en.kind = Entry::Free;
                else if (action == "segment_alloc" || action == "segment_map")
                    en.kind = Entry::SegmentAdd;
                else if (action == "segment_free" || action == "segment_unmap")
                    en.kind = Entry::SegmentRemove;
                else if (action == "oom")
                    en.kind = Entry::Other;
                if (en.kind != Entry::Other) {
                    en.addr = fields.integer(e, "addr", ep, true).value();
                    en.size = fields.size(e, "size", ep, true);
                }
                en.stream = fields.integer(e, "stream", ep).value_or(0);
                en.timeUs = fields.integer(e, "time_us", ep).value_or(0);
                en.frames = framesOf(e, fields, ep);
                list.push_back(en);
                ps.push_back(ep);
            }
        }
    }

    std::map<int, bool> devs;
    for (const auto& [d, _] : dump)
        devs[d] = true;
    for (const auto& [d, _] : entries)
        devs[d] = true;
    static const std::vector<DumpBlock> noBlocks;
    static const std::vector<Entry> noEntries;
    static const std::vector<std::string> noPaths;
    DeviceAnalysis analysis(doc, fields, out);
    for (const auto& [d, _] : devs) {
        const auto dIt = dump.find(d);
        const auto eIt = entries.find(d);
        SnapshotDevice dev = analysis.run(d, dIt == dump.end() ? noBlocks : dIt->second, reserved[d],
            eIt == entries.end() ? noEntries : eIt->second, eIt == entries.end() ? noPaths : paths[d]);
        out.devices.push_back(std::move(dev));
    }
    for (SnapshotDevice& d : out.devices) {
        if (!d.hasTrace)
            out.notes.push_back("device " + std::to_string(d.device)
                + ": no trace (recorded without _record_memory_history(max_entries=...)): the state at the dump only");
        else if (d.blocksBeforeTrace > 0)
            out.notes.push_back("device " + std::to_string(d.device) + ": the trace begins with "
                + std::to_string(d.blocksBeforeTrace) + " blocks (" + formatBytes(d.bytesBeforeTrace)
                + ") already allocated: before recording began"
                + (d.traceStartsMidway ? ", or dropped when the history passed max_entries (its first entry frees a "
                                         "block it never saw)"
                                       : ""));
    }
    if (traces)
        for (std::size_t dv = 0; dv < traces->size(); ++dv) {
            const PickleView t = traces->at(dv);
            for (std::size_t i = 0; i < t.size(); ++i)
                if (const std::optional<PickleView> a = t.at(i).get("action");
                    a && a->string() == std::string_view("oom"))
                    for (SnapshotDevice& d : out.devices)
                        if (d.device == static_cast<int>(dv))
                            ++d.oomEvents;
        }
    if (!anyFreeCompleted && total > 0)
        out.notes.push_back("the trace has no free_completed entries: frees counted at free_requested");
    return out;
}

} // namespace

MemorySnapshot analyzeSnapshot(const PickleDocument& doc, const std::string& file, const SnapshotLimits& limits)
{
    try {
        return analyze(doc, file, limits);
    } catch (const SizeOverflow& e) {
        throw InputError("", std::string("the sizes in the snapshot add up past 2^63 bytes: ") + e.what(), file);
    }
}

MemorySnapshot readMemorySnapshot(
    const std::string& path, const PickleLimits& pickleLimits, const SnapshotLimits& limits)
{
    return analyzeSnapshot(readPickleFile(path, pickleLimits), path, limits);
}

} // namespace vramlab
