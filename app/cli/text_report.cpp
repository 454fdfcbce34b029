// SPDX-License-Identifier: MIT
#include "text_report.h"

#include "vramlab/flops_model.h"
#include "vramlab/report_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace vramlab::cli {

namespace {
/// printf into a string of the length it needs: a fixed buffer cut long formulas (torchtitan's compiled
/// loss with its source) and their newline with them, running the next component onto the same line.
std::string line(const char* fmt, auto... args)
{
    const int n = std::snprintf(nullptr, 0, fmt, args...);
    std::string s(static_cast<size_t>(std::max(0, n)), '\0');
    std::snprintf(s.data(), s.size() + 1, fmt, args...);
    return s;
}
} // namespace

std::string textReport(const Report& r)
{
    std::string out;
    out += r.scenarioName + "\n";
    out += line("parameters: %s total, %s trainable", formatCount(r.params.total).c_str(),
        formatCount(r.trainableParams).c_str());
    if (r.params.active != r.params.total)
        out += line(", %s active per token", formatCount(r.params.active).c_str());
    out += "\nper GPU (" + r.stage + "):\n";
    for (const Component& c : r.components) {
        if (c.bytes == 0 && c.key != componentKey(ComponentKind::Weights))
            continue;
        const double share = r.total > 0 ? 100.0 * static_cast<double>(c.bytes) / static_cast<double>(r.total) : 0.0;
        out += line("  %-18s %12s  %5.1f%%  %s\n", std::string(c.label).c_str(), formatBytes(c.bytes).c_str(), share,
            c.formula.c_str());
    }
    out += line("  %-18s %12s\n", "Total", formatBytes(r.total).c_str());
    if (r.peak != r.total)
        out += line("  %-18s %12s  %s\n", "Peak", formatBytes(r.peak).c_str(), r.peakWhere.c_str());
    // What the GPU's counters will read (the caching-allocator replay; the verdict stays the peak above).
    for (const CounterRow& c : counterRows(r))
        out += line("  %-18s %12s  %s\n", std::string(c.label).c_str(), formatBytes(c.bytes).c_str(),
            std::string(c.what).c_str());
    if (!r.allocatorNote.empty())
        out += "  allocator replay: " + r.allocatorNote + "\n";
    if (r.hostBytes > 0)
        out += line("  %-18s %12s  %s\n", "Host memory", formatBytes(r.hostBytes).c_str(), r.hostFormula.c_str());
    if (r.gpu) {
        const Bytes room = r.usableBytes - r.peak;
        if (r.fits && !r.lowerBound.empty()) // what is free is unknown: the peak is at least this
            out += line("%s on %s: at least %s of %s, a lower bound (%s)\n", std::string(r.verdictWord()).c_str(),
                r.gpu->displayName.c_str(), formatBytes(r.peak).c_str(), capacityText(r).c_str(), r.lowerBound.c_str());
        else
            out += line("%s on %s: %s %s of %s\n", std::string(r.verdictWord()).c_str(), r.gpu->displayName.c_str(),
                formatBytes(room < 0 ? -room : room).c_str(), room < 0 ? "over" : "free", capacityText(r).c_str());
    }
    const FlopsEstimate& f = r.flops;
    out += line("FLOPs: %s per step, %s per token", formatFlops(f.perStep).c_str(), formatFlops(f.perToken).c_str());
    if (f.hardwarePerStep > f.perStep * 1.0000001)
        out += line(" (hardware %s with recomputation)", formatFlops(f.hardwarePerStep).c_str());
    out += "\n";
    if (f.stepTimeS > 0)
        out += "time: " + stepTimeSummary(f) + "\n";
    for (const std::string& w : r.warnings)
        out += "warning: " + w + "\n";
    return out;
}

} // namespace vramlab::cli
