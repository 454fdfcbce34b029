// SPDX-License-Identifier: MIT
#pragma once
// A PyTorch memory snapshot (torch.cuda.memory._dump_snapshot: a pickled dict with
// `segments` and `device_traces`) analysed: the allocated and reserved curves over the
// trace, the peaks, what was alive at the peak, and each live block's category with the
// rule that decided it. Read through the restricted pickle reader: nothing is executed.

#include "vramlab/pickle_reader.h"
#include "vramlab/units.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vramlab {

/// What a measured block is, by the frames that allocated it and its lifetime.
enum class SnapshotCategory : uint8_t { Weights, Gradients, OptimizerStates, Activations, Temporaries, Other };
inline constexpr int kSnapshotCategories = 6;
std::string_view snapshotCategoryKey(SnapshotCategory c); ///< "weights", ..., "other"
std::string_view snapshotCategoryLabel(SnapshotCategory c); ///< "Weights", ..., "Other"

/// The part of a training step an allocation's stack points to.
enum class SnapshotPhase : uint8_t { Unknown, Setup, Forward, Backward, Optimizer };
std::string_view toString(SnapshotPhase p); ///< "unknown", "setup", "forward", "backward", "optimizer"

struct SnapshotFrame {
    std::string filename;
    int64_t line = 0;
    std::string name;
    std::string text() const; ///< "model.py:12:forward" (the file's base name), as memory_viz shows it
};

/// One allocation (a tensor's storage) of the caching allocator.
struct SnapshotBlock {
    int device = 0;
    int64_t address = 0;
    Bytes sizeBytes = 0;
    int64_t stream = 0;
    int64_t allocEvent = -1; ///< index of its `alloc` in the device's trace; -1: allocated before the trace
    int64_t freeEvent = -1; ///< index of its free; -1: alive at the dump
    int64_t allocTimeUs = 0; ///< 0 when unknown
    SnapshotPhase phase = SnapshotPhase::Unknown;
    SnapshotCategory category = SnapshotCategory::Other;
    std::string rule; ///< how the category was decided, in words
    std::vector<SnapshotFrame> frames; ///< allocation stack, innermost first (at most kSnapshotFramesKept)
};
inline constexpr std::size_t kSnapshotFramesKept = 16;

/// The curves after one trace entry (the first point is the state before the trace).
struct SnapshotCurvePoint {
    int64_t event = -1; ///< trace index; -1 before the first entry
    int64_t timeUs = 0; ///< the entry's time_us (0 when the trace has none)
    Bytes allocatedBytes = 0;
    Bytes reservedBytes = 0;
    SnapshotPhase phase = SnapshotPhase::Unknown; ///< of the latest entry whose stack tells
    double stepFraction = 0; ///< position in the trace, 0 to 1 (for drawing over the simulated step)
};

/// Where a phase begins in the trace (each change of phase).
struct SnapshotPhaseMark {
    SnapshotPhase phase = SnapshotPhase::Unknown;
    int64_t event = 0;
    double stepFraction = 0;
};

struct SnapshotDevice {
    int device = 0;
    bool hasTrace = false;
    int64_t traceEntries = 0;
    int64_t ignoredEntries = 0; ///< entries that move no curve: snapshot, annotate, oom, unknown actions, and
                                ///< free_requested when free_completed are there
    int64_t oomEvents = 0;
    std::vector<SnapshotCurvePoint> curve;
    std::vector<SnapshotPhaseMark> phases;
    Bytes peakAllocatedBytes = 0;
    int64_t peakAllocatedEvent = -1; ///< first entry where the peak is reached (-1: before the trace)
    int64_t peakTimeUs = 0;
    SnapshotPhase peakPhase = SnapshotPhase::Unknown;
    Bytes peakReservedBytes = 0;
    Bytes allocatedAtDumpBytes = 0; ///< from the segments (active_allocated blocks)
    Bytes reservedAtDumpBytes = 0; ///< sum of the segments' total_size
    int64_t blocksBeforeTrace = 0; ///< alive when the trace begins (allocated before it was recorded)
    Bytes bytesBeforeTrace = 0;
    bool traceStartsMidway = false; ///< the trace's first entry frees a block it never saw allocated
    std::vector<SnapshotBlock> aliveAtPeak; ///< largest first
    std::array<Bytes, kSnapshotCategories> categoryBytesAtPeak {};
    Bytes categoryAtPeak(SnapshotCategory c) const { return categoryBytesAtPeak[static_cast<std::size_t>(c)]; }
};

struct MemorySnapshot {
    std::string file;
    int pickleProtocol = 0;
    std::vector<SnapshotDevice> devices; ///< devices with segments or trace entries, by index
    std::string allocatorConf; ///< allocator_settings.PYTORCH_CUDA_ALLOC_CONF when present
    std::vector<std::string> notes; ///< what the reader could not know or had to assume
    /// The device with the highest peak allocated (the one to compare with a model); nullptr if none.
    const SnapshotDevice* busiest() const;
};

struct SnapshotLimits {
    std::size_t maxDevices = 64;
    std::size_t maxTraceEntries = 20'000'000; ///< all devices together
};

/// Analyses a parsed snapshot; throws InputError naming `file` and the key path of a field
/// of the wrong type ("device_traces[0][12].size: expected an int, got str 'x'").
MemorySnapshot analyzeSnapshot(const PickleDocument& doc, const std::string& file, const SnapshotLimits& limits = {});

/// readPickleFile() then analyzeSnapshot().
MemorySnapshot readMemorySnapshot(
    const std::string& path, const PickleLimits& pickleLimits = {}, const SnapshotLimits& limits = {});

} // namespace vramlab
