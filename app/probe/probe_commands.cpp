// SPDX-License-Identifier: MIT
#include "probe_commands.h"

#include "cuda_device.h"
#include "vramlab/errors.h"

#include <algorithm>
#include <cstdio>

namespace vramlab::probe {

bool Arguments::has(const std::string& flag) const
{
    return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

const std::string* Arguments::value(const std::string& option) const
{
    for (const auto& [name, v] : options)
        if (name == option)
            return &v;
    return nullptr;
}

Arguments parseArguments(const std::vector<std::string>& args, bool needsScenario,
    const std::vector<std::string>& valueOptions, const std::vector<std::string>& flagOptions)
{
    auto known = [](const std::vector<std::string>& list, const std::string& w) {
        return std::find(list.begin(), list.end(), w) != list.end();
    };
    Arguments a;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& w = args[i];
        if (w == "--json") {
            a.json = true;
        } else if (known(valueOptions, w)) {
            if (i + 1 == args.size())
                throw InputError(w, "expected a value after it");
            a.options.emplace_back(w, args[++i]);
        } else if (known(flagOptions, w)) {
            a.flags.push_back(w);
        } else if (needsScenario && a.scenarioFile.empty() && !w.starts_with("--")) {
            a.scenarioFile = w;
        } else {
            throw InputError(w, "expected a known option (see vramlab-probe --help)");
        }
    }
    if (needsScenario && a.scenarioFile.empty())
        throw InputError("SCENARIO.json", "expected a scenario file");
    return a;
}

long long parseInteger(const std::string& option, const std::string& text, long long lo, long long hi)
{
    try {
        size_t used = 0;
        const long long v = std::stoll(text, &used);
        if (used == text.size() && v >= lo && v <= hi)
            return v;
    } catch (const std::exception&) {
    }
    throw InputError(option,
        "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got \"" + text + "\"");
}

ProbeReport startReport(const std::string& command, const std::string& scenarioName)
{
    ProbeReport rep;
    rep.command = command;
    rep.probeVersion = VRAMLAB_VERSION;
    rep.scenario = scenarioName;
    rep.device = openDevice();
    return rep;
}

void Output::progress(const std::string& phase, Count done, Count total) const
{
    if (json)
        emitJsonLine(probeProgressToJson({ phase, done, total }));
    else
        std::fprintf(
            stderr, "%s (%lld/%lld)\n", phase.c_str(), static_cast<long long>(done), static_cast<long long>(total));
}

namespace {

void printDevice(const ProbeDevice& d)
{
    std::printf("device           %s%s\n", d.name.c_str(), d.mig ? " (MIG instance)" : "");
    std::printf("catalog entry    %s\n", d.catalogGpu.empty() ? "none" : d.catalogGpu.c_str());
    std::printf("compute cap.     %d.%d, %d SMs, SM clock %d MHz, memory clock %d MHz, %d-bit bus\n", d.ccMajor,
        d.ccMinor, d.sms, d.smClockMHz, d.memoryClockMHz, d.memoryBusBits);
    std::printf(
        "memory           %s total, %s free\n", formatBytes(d.totalBytes).c_str(), formatBytes(d.freeBytes).c_str());
    std::printf("CUDA             driver %d.%d, runtime %d.%d\n", d.driverVersion / 1000, d.driverVersion % 1000 / 10,
        d.runtimeVersion / 1000, d.runtimeVersion % 1000 / 10);
}

} // namespace

void Output::report(const ProbeReport& rep) const
{
    if (json) {
        emitJsonLine(probeReportToJson(rep));
        return;
    }
    printDevice(rep.device);
    if (rep.fit) {
        const ProbeFit& f = *rep.fit;
        std::printf("\nscenario \"%s\": %s (predicted: %s)\n", rep.scenario.c_str(), f.fits ? "fits" : "does not fit",
            f.predictedFits ? "fits" : "does not fit");
        if (!f.stoppedAt.empty())
            std::printf("stopped at       %s\n", f.stoppedAt.c_str());
        std::printf("granularity %s, safety margin %s\n", formatBytes(f.granularityBytes).c_str(),
            formatBytes(f.safetyMarginBytes).c_str());
        std::printf("%-20s %14s %14s %14s %9s\n", "component", "predicted", "requested", "measured", "buffers");
        for (const ProbeFitComponent& c : f.components)
            std::printf("%-20s %14s %14s %14s %4lld/%-4lld\n", c.key.c_str(), formatBytes(c.predictedBytes).c_str(),
                formatBytes(c.requestedBytes).c_str(), formatBytes(c.measuredBytes).c_str(),
                static_cast<long long>(c.allocatedBuffers), static_cast<long long>(c.buffers));
    }
    if (rep.bench) {
        const ProbeBench& b = *rep.bench;
        std::printf("\nscenario \"%s\", %s GEMMs (catalog peak %.1f TFLOP/s)\n", rep.scenario.c_str(), b.dtype.c_str(),
            b.peakTflops);
        if (!b.gemmError.empty())
            std::printf("GEMMs not timed: %s\n", b.gemmError.c_str());
        for (const ProbeGemm& g : b.gemms)
            std::printf("%-18s %-16s %6lld x %6lld x %6lld  x%-5lld %9.4f ms %8.1f TFLOP/s\n", g.layer.c_str(),
                g.pass.c_str(), static_cast<long long>(g.m), static_cast<long long>(g.n), static_cast<long long>(g.k),
                static_cast<long long>(g.perStep), g.ms, g.tflops);
        std::printf("linear layers per step %.4f s (estimate: %.4f s); MFU ceiling %.1f%%\n", b.gemmStepTimeS,
            b.predictedStepTimeS, 100 * b.mfuCeiling);
        std::printf("device copy %s: %.1f GB/s (catalog %.0f GB/s)\n", formatBytes(b.copyBytes).c_str(), b.copyGBs,
            b.catalogBandwidthGBs);
        for (const std::string& n : b.notes)
            std::printf("note: %s\n", n.c_str());
    }
}

int runInfo(const std::vector<std::string>& args)
{
    const Arguments a = parseArguments(args, false, {}, {});
    Output { a.json }.report(startReport("info", ""));
    return 0;
}

} // namespace vramlab::probe
