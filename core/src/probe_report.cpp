// SPDX-License-Identifier: MIT
#include "vramlab/probe_report.h"

#include "json_reader.h"
#include "vramlab/errors.h"
#include "vramlab/scenario_io.h"

#include <limits>

namespace vramlab {

using detail::JsonObjectReader;
using nlohmann::json;

namespace {

constexpr Count kMaxBytes = Count(1) << 60; // 1 EiB: far above any device
constexpr Count kMaxCount = Count(1) << 50;
constexpr int kMaxInt = std::numeric_limits<int>::max();
constexpr double kMaxRate = 1e9; // TFLOP/s, GB/s, ms, s: any finite measurement is below

/// Required keys: the reader's optional<> made mandatory with the same error style.
template <typename T> T need(JsonObjectReader& r, const std::string& key, std::optional<T> value, const char* what)
{
    if (!value)
        throw InputError(r.keyPath(key), std::string("expected ") + what + ", got nothing");
    return *value;
}
Count needCount(JsonObjectReader& r, const std::string& key, Count hi = kMaxCount)
{
    return need(r, key, r.integer(key, 0, hi), "a non-negative integer");
}
int needInt(JsonObjectReader& r, const std::string& key)
{
    return static_cast<int>(need(r, key, r.integer(key, 0, kMaxInt), "a non-negative integer"));
}
double needNumber(JsonObjectReader& r, const std::string& key)
{
    return need(r, key, r.number(key, 0, kMaxRate), "a non-negative number");
}
std::string needString(JsonObjectReader& r, const std::string& key)
{
    return need(r, key, r.string(key), "a string");
}
bool needBool(JsonObjectReader& r, const std::string& key)
{
    return need(r, key, r.boolean(key), "true or false");
}
/// One of the names in `choices`, e.g. {"info", "fit", "bench"}.
std::string needChoice(JsonObjectReader& r, const std::string& key, std::initializer_list<const char*> choices)
{
    std::vector<std::pair<std::string, std::string>> pairs;
    std::string names;
    for (const char* c : choices) {
        pairs.emplace_back(c, c);
        names += (names.empty() ? "" : ", ") + std::string(c);
    }
    return need(r, key, r.choice<std::string>(key, pairs), ("one of " + names).c_str());
}

/// The array at `key`, each element read by `item(element, path)`.
template <typename T, typename F>
std::vector<T> readArray(JsonObjectReader& r, const std::string& key, F item, bool required = true)
{
    std::vector<T> out;
    if (!r.has(key)) {
        if (required)
            throw InputError(r.keyPath(key), "expected an array, got nothing");
        return out;
    }
    const json& a = r.at(key);
    if (!a.is_array())
        throw InputError(r.keyPath(key), "expected an array, got " + JsonObjectReader::describe(a));
    for (size_t i = 0; i < a.size(); ++i)
        out.push_back(item(a[i], r.keyPath(key) + "[" + std::to_string(i) + "]"));
    return out;
}

ProbeDevice readDevice(const json& v, const std::string& path)
{
    JsonObjectReader r(v, path);
    ProbeDevice d;
    d.name = needString(r, "name");
    d.driverVersion = needInt(r, "driver_version");
    d.runtimeVersion = needInt(r, "runtime_version");
    d.ccMajor = needInt(r, "cc_major");
    d.ccMinor = needInt(r, "cc_minor");
    d.sms = needInt(r, "sms");
    d.smClockMHz = needInt(r, "sm_clock_mhz");
    d.memoryClockMHz = needInt(r, "memory_clock_mhz");
    d.memoryBusBits = needInt(r, "memory_bus_bits");
    d.totalBytes = needCount(r, "total_bytes", kMaxBytes);
    d.freeBytes = needCount(r, "free_bytes", kMaxBytes);
    if (d.freeBytes > d.totalBytes)
        throw InputError(r.keyPath("free_bytes"),
            "expected at most total_bytes (" + formatCount(d.totalBytes) + "), got " + formatCount(d.freeBytes));
    d.mig = needBool(r, "mig");
    d.catalogGpu = needString(r, "catalog_gpu");
    return d;
}

ProbeFit readFit(const json& v, const std::string& path)
{
    JsonObjectReader r(v, path);
    ProbeFit f;
    f.contextBytes = needCount(r, "context_bytes", kMaxBytes);
    f.granularityBytes = needCount(r, "granularity_bytes", kMaxBytes);
    f.safetyMarginBytes = needCount(r, "safety_margin_bytes", kMaxBytes);
    f.freeBeforeBytes = needCount(r, "free_before_bytes", kMaxBytes);
    f.oomTest = needBool(r, "oom_test");
    f.fits = needBool(r, "fits");
    f.predictedFits = needBool(r, "predicted_fits");
    f.stoppedAt = needString(r, "stopped_at");
    f.components = readArray<ProbeFitComponent>(r, "components", [](const json& c, const std::string& p) {
        JsonObjectReader cr(c, p);
        ProbeFitComponent out;
        out.key = needString(cr, "key");
        out.label = needString(cr, "label");
        out.predictedBytes = needCount(cr, "predicted_bytes", kMaxBytes);
        out.requestedBytes = needCount(cr, "requested_bytes", kMaxBytes);
        out.measuredBytes = needCount(cr, "measured_bytes", kMaxBytes);
        out.buffers = needCount(cr, "buffers");
        out.allocatedBuffers = needCount(cr, "allocated_buffers");
        if (out.allocatedBuffers > out.buffers)
            throw InputError(cr.keyPath("allocated_buffers"),
                "expected at most buffers (" + formatCount(out.buffers) + "), got "
                    + formatCount(out.allocatedBuffers));
        return out;
    });
    return f;
}

ProbeBench readBench(const json& v, const std::string& path)
{
    JsonObjectReader r(v, path);
    ProbeBench b;
    b.dtype = needChoice(r, "dtype", { "fp32", "tf32", "bf16", "fp16", "fp8" });
    b.peakTflops = needNumber(r, "peak_tflops");
    b.gemmError = needString(r, "gemm_error");
    b.gemms = readArray<ProbeGemm>(r, "gemms", [](const json& g, const std::string& p) {
        JsonObjectReader gr(g, p);
        ProbeGemm out;
        out.layer = needString(gr, "layer");
        out.pass = needChoice(gr, "pass", { "forward", "backward_input", "backward_weight" });
        out.m = needCount(gr, "m");
        out.n = needCount(gr, "n");
        out.k = needCount(gr, "k");
        out.perStep = needCount(gr, "per_step");
        out.ms = needNumber(gr, "ms");
        out.tflops = needNumber(gr, "tflops");
        return out;
    });
    b.gemmStepTimeS = needNumber(r, "gemm_step_time_s");
    b.predictedStepTimeS = needNumber(r, "predicted_step_time_s");
    b.assumedMfu = need(r, "assumed_mfu", r.number("assumed_mfu", 0, 1), "a number from 0 to 1");
    b.mfuCeiling = need(r, "mfu_ceiling", r.number("mfu_ceiling", 0, 10), "a number from 0 to 10");
    b.copyBytes = needCount(r, "copy_bytes", kMaxBytes);
    b.copyGBs = needNumber(r, "copy_gbs");
    b.catalogBandwidthGBs = needNumber(r, "catalog_bandwidth_gbs");
    b.notes = readArray<std::string>(
        r, "notes",
        [](const json& s, const std::string& p) {
            if (!s.is_string())
                throw InputError(p, "expected a string, got " + JsonObjectReader::describe(s));
            return s.get<std::string>();
        },
        false);
    return b;
}

} // namespace

json probeReportToJson(const ProbeReport& rep)
{
    const ProbeDevice& d = rep.device;
    json doc = { { "probe_report", kProbeReportVersion }, { "command", rep.command },
        { "probe_version", rep.probeVersion } };
    if (!rep.scenario.empty())
        doc["scenario"] = rep.scenario;
    doc["device"] = { { "name", d.name }, { "driver_version", d.driverVersion },
        { "runtime_version", d.runtimeVersion }, { "cc_major", d.ccMajor }, { "cc_minor", d.ccMinor }, { "sms", d.sms },
        { "sm_clock_mhz", d.smClockMHz }, { "memory_clock_mhz", d.memoryClockMHz },
        { "memory_bus_bits", d.memoryBusBits }, { "total_bytes", d.totalBytes }, { "free_bytes", d.freeBytes },
        { "mig", d.mig }, { "catalog_gpu", d.catalogGpu } };
    if (rep.fit) {
        const ProbeFit& f = *rep.fit;
        json comps = json::array();
        for (const ProbeFitComponent& c : f.components)
            comps.push_back({ { "key", c.key }, { "label", c.label }, { "predicted_bytes", c.predictedBytes },
                { "requested_bytes", c.requestedBytes }, { "measured_bytes", c.measuredBytes },
                { "buffers", c.buffers }, { "allocated_buffers", c.allocatedBuffers } });
        doc["fit"] = { { "context_bytes", f.contextBytes }, { "granularity_bytes", f.granularityBytes },
            { "safety_margin_bytes", f.safetyMarginBytes }, { "free_before_bytes", f.freeBeforeBytes },
            { "oom_test", f.oomTest }, { "fits", f.fits }, { "predicted_fits", f.predictedFits },
            { "stopped_at", f.stoppedAt }, { "components", comps } };
    }
    if (rep.bench) {
        const ProbeBench& b = *rep.bench;
        json gemms = json::array();
        for (const ProbeGemm& g : b.gemms)
            gemms.push_back({ { "layer", g.layer }, { "pass", g.pass }, { "m", g.m }, { "n", g.n }, { "k", g.k },
                { "per_step", g.perStep }, { "ms", g.ms }, { "tflops", g.tflops } });
        doc["bench"] = { { "dtype", b.dtype }, { "peak_tflops", b.peakTflops }, { "gemm_error", b.gemmError },
            { "gemms", gemms }, { "gemm_step_time_s", b.gemmStepTimeS },
            { "predicted_step_time_s", b.predictedStepTimeS }, { "assumed_mfu", b.assumedMfu },
            { "mfu_ceiling", b.mfuCeiling }, { "copy_bytes", b.copyBytes }, { "copy_gbs", b.copyGBs },
            { "catalog_bandwidth_gbs", b.catalogBandwidthGBs }, { "notes", b.notes } };
    }
    return doc;
}

ProbeReport readProbeReport(const json& doc, const std::string& file)
{
    try {
        JsonObjectReader r(doc, "");
        need(r, "probe_report", r.integer("probe_report", 1, kProbeReportVersion), "the report version 1");
        ProbeReport rep;
        rep.command = needChoice(r, "command", { "info", "fit", "bench" });
        rep.probeVersion = needString(r, "probe_version");
        rep.scenario = r.string("scenario").value_or("");
        if (!r.has("device"))
            throw InputError("device", "expected an object, got nothing");
        rep.device = readDevice(r.at("device"), "device");
        if (r.has("fit"))
            rep.fit = readFit(r.at("fit"), "fit");
        if (r.has("bench"))
            rep.bench = readBench(r.at("bench"), "bench");
        if (rep.command == "fit" && !rep.fit)
            throw InputError("fit", "expected an object in a fit report, got nothing");
        if (rep.command == "bench" && !rep.bench)
            throw InputError("bench", "expected an object in a bench report, got nothing");
        return rep;
    } catch (const InputError& e) {
        throw e.withFile(file);
    }
}

ProbeReport loadProbeReportFile(const std::string& path)
{
    return readProbeReport(parseJsonText(readTextFile(path, kMaxProbeReportFileBytes), path), path);
}

json probeProgressToJson(const ProbeProgress& p)
{
    return { { "progress", { { "phase", p.phase }, { "done", p.done }, { "total", p.total } } } };
}

std::optional<ProbeProgress> readProbeProgress(const json& doc)
{
    if (!doc.is_object() || !doc.contains("progress"))
        return std::nullopt;
    JsonObjectReader r(doc.at("progress"), "progress");
    ProbeProgress p;
    p.phase = needString(r, "phase");
    p.done = needCount(r, "done");
    p.total = needCount(r, "total");
    return p;
}

} // namespace vramlab
