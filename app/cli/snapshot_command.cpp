// SPDX-License-Identifier: MIT
// vramlab-cli snapshot: a PyTorch memory snapshot read (never executed), analysed, and
// with --scenario laid beside the simulated step.
#include "cli_args.h"
#include "command_main.h"
#include "commands.h"
#include "vramlab/atomic_file.h"
#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/memory_snapshot.h"
#include "vramlab/scenario_io.h"
#include "vramlab/snapshot_comparison.h"
#include "vramlab/text_escape.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <sstream>

namespace vramlab::cli {

using nlohmann::json;

namespace {

constexpr std::size_t kTopBlocks = 10;

std::string mib(Bytes b)
{
    char buf[40];
    std::snprintf(buf, sizeof buf, "%10.1f MiB", double(b) / double(kMiB));
    return buf;
}

std::string framesText(const SnapshotBlock& b)
{
    return b.frames.empty() ? std::string("(no stack)") : printableText(b.frames.front().text(), 120);
}

json blockJson(const SnapshotBlock& b)
{
    json frames = json::array();
    for (const SnapshotFrame& f : b.frames)
        frames.push_back({ { "filename", f.filename }, { "line", f.line }, { "name", f.name } });
    return { { "address", b.address }, { "size_bytes", b.sizeBytes }, { "stream", b.stream },
        { "alloc_event", b.allocEvent }, { "free_event", b.freeEvent }, { "phase", toString(b.phase) },
        { "category", snapshotCategoryKey(b.category) }, { "rule", b.rule }, { "frames", frames } };
}

json snapshotJson(const MemorySnapshot& s)
{
    json devices = json::array();
    for (const SnapshotDevice& d : s.devices) {
        json cats = json::object();
        for (int i = 0; i < kSnapshotCategories; ++i)
            cats[std::string(snapshotCategoryKey(static_cast<SnapshotCategory>(i)))]
                = d.categoryBytesAtPeak[static_cast<std::size_t>(i)];
        json blocks = json::array();
        for (const SnapshotBlock& b : d.aliveAtPeak)
            blocks.push_back(blockJson(b));
        json phases = json::array();
        for (const SnapshotPhaseMark& p : d.phases)
            phases.push_back(
                { { "phase", toString(p.phase) }, { "event", p.event }, { "step_fraction", p.stepFraction } });
        devices.push_back({ { "device", d.device }, { "has_trace", d.hasTrace }, { "trace_entries", d.traceEntries },
            { "peak_allocated_bytes", d.peakAllocatedBytes }, { "peak_allocated_event", d.peakAllocatedEvent },
            { "peak_phase", toString(d.peakPhase) }, { "peak_time_us", d.peakTimeUs },
            { "peak_reserved_bytes", d.peakReservedBytes }, { "allocated_at_dump_bytes", d.allocatedAtDumpBytes },
            { "reserved_at_dump_bytes", d.reservedAtDumpBytes }, { "blocks_before_trace", d.blocksBeforeTrace },
            { "bytes_before_trace", d.bytesBeforeTrace }, { "trace_starts_midway", d.traceStartsMidway },
            { "oom_events", d.oomEvents }, { "category_bytes_at_peak", cats }, { "phases", phases },
            { "alive_at_peak", blocks }, { "curve_points", d.curve.size() } });
    }
    return { { "file", s.file }, { "pickle_protocol", s.pickleProtocol }, { "allocator_conf", s.allocatorConf },
        { "devices", devices }, { "notes", s.notes } };
}

json comparisonJson(const SnapshotComparison& c)
{
    json cats = json::array();
    for (const SnapshotCategoryComparison& k : c.categories)
        cats.push_back({ { "category", snapshotCategoryKey(k.category) }, { "measured_bytes", k.measuredBytes },
            { "predicted_bytes", k.predictedBytes }, { "difference_bytes", k.differenceBytes() } });
    return { { "scenario", c.scenarioName }, { "device", c.device },
        { "measured_peak_allocated_bytes", c.measuredPeakAllocatedBytes },
        { "measured_peak_reserved_bytes", c.measuredPeakReservedBytes },
        { "measured_peak_phase", toString(c.measuredPeakPhase) }, { "predicted_peak_bytes", c.predictedPeakBytes },
        { "predicted_allocated_bytes", c.predictedAllocatedBytes },
        { "predicted_reserved_bytes", c.predictedReservedBytes },
        { "predicted_peak_phase", toString(c.predictedPeakPhase) }, { "categories", cats },
        { "explanations", c.explanations } };
}

std::string snapshotText(const MemorySnapshot& s)
{
    std::ostringstream out;
    out << "snapshot " << printableText(s.file) << " (pickle protocol " << s.pickleProtocol << ")\n";
    for (const SnapshotDevice& d : s.devices) {
        out << "\ndevice " << d.device << ": " << d.traceEntries << " trace entries\n";
        out << "  peak allocated " << mib(d.peakAllocatedBytes) << "  (" << d.peakAllocatedBytes << " bytes";
        if (d.hasTrace)
            out << ", entry " << d.peakAllocatedEvent << ", " << toString(d.peakPhase);
        out << ")\n";
        out << "  peak reserved  " << mib(d.peakReservedBytes) << "  (" << d.peakReservedBytes << " bytes)\n";
        out << "  at the dump    " << mib(d.allocatedAtDumpBytes) << " allocated, "
            << formatBytes(d.reservedAtDumpBytes) << " reserved\n";
        out << "  alive at the peak by category:\n";
        for (int i = 0; i < kSnapshotCategories; ++i) {
            const auto c = static_cast<SnapshotCategory>(i);
            out << "    " << snapshotCategoryLabel(c) << std::string(18 - snapshotCategoryLabel(c).size(), ' ')
                << mib(d.categoryAtPeak(c)) << "\n";
        }
        out << "  largest blocks alive at the peak (" << std::min(kTopBlocks, d.aliveAtPeak.size()) << " of "
            << d.aliveAtPeak.size() << "):\n";
        for (std::size_t i = 0; i < d.aliveAtPeak.size() && i < kTopBlocks; ++i) {
            const SnapshotBlock& b = d.aliveAtPeak[i];
            out << "  " << mib(b.sizeBytes) << "  " << snapshotCategoryLabel(b.category) << "  " << framesText(b)
                << "\n"
                << "                  because: " << printableText(b.rule, 400) << "\n";
        }
    }
    if (!s.notes.empty()) {
        out << "\nnotes:\n";
        for (const std::string& n : s.notes)
            out << "  - " << printableText(n, 400) << "\n";
    }
    return out.str();
}

std::string comparisonText(const SnapshotComparison& c)
{
    std::ostringstream out;
    out << "\nmeasured (device " << c.device << ") beside predicted (scenario " << printableText(c.scenarioName)
        << "):\n";
    out << "                        measured       predicted\n";
    out << "  peak allocated  " << mib(c.measuredPeakAllocatedBytes) << "  " << mib(c.predictedAllocatedBytes) << "\n";
    out << "  peak reserved   " << mib(c.measuredPeakReservedBytes) << "  " << mib(c.predictedReservedBytes) << "\n";
    for (const SnapshotCategoryComparison& k : c.categories) {
        const std::string_view label = snapshotCategoryLabel(k.category);
        out << "  " << label << std::string(16 - label.size(), ' ') << mib(k.measuredBytes) << "  "
            << mib(k.predictedBytes) << "\n";
    }
    out << "why they differ:\n";
    for (const std::string& e : c.explanations)
        out << "  - " << e << "\n";
    return out.str();
}

std::string curveCsv(const MemorySnapshot& s)
{
    std::ostringstream out;
    out << "device,event,time_us,allocated_bytes,reserved_bytes,phase,step_fraction\n";
    for (const SnapshotDevice& d : s.devices)
        for (const SnapshotCurvePoint& p : d.curve) {
            char frac[32];
            std::snprintf(frac, sizeof frac, "%.6f", p.stepFraction);
            out << d.device << "," << p.event << "," << p.timeUs << "," << p.allocatedBytes << "," << p.reservedBytes
                << "," << toString(p.phase) << "," << frac << "\n";
        }
    return out.str();
}

} // namespace

int runSnapshot(const std::vector<std::string>& words)
{
    CliArgs a(words, { "--scenario", "--csv" }, { "--json" });
    if (a.positionals().size() != 1)
        throw InputError("snapshot", "expected exactly one snapshot file (FILE.pickle)");
    const std::string file = a.positionals().front();
    const MemorySnapshot s = readMemorySnapshot(file);
    std::optional<SnapshotComparison> cmp;
    if (const std::optional<std::string> sc = a.value("--scenario")) {
        Scenario scenario = loadScenarioFile(*sc);
        try {
            validateScenario(scenario);
            cmp = compareSnapshot(s, estimate(scenario, EstimateOptions { .replayAllocator = true }));
        } catch (const InputError& e) {
            throw e.withFile(*sc);
        }
    }
    if (const std::optional<std::string> csv = a.value("--csv"))
        writeFileAtomically(*csv, curveCsv(s));
    if (a.flag("--json")) {
        json j = { { "format", "vramlab.snapshot" }, { "version", 1 }, { "snapshot", snapshotJson(s) } };
        if (cmp)
            j["comparison"] = comparisonJson(*cmp);
        writeStandardOutput(j.dump(2) + "\n");
    } else {
        writeStandardOutput(snapshotText(s) + (cmp ? comparisonText(*cmp) : std::string()));
    }
    return 0;
}

} // namespace vramlab::cli
