// SPDX-License-Identifier: MIT
#include "commands.h"

#include "cli_args.h"
#include "cli_scenario.h"
#include "command_main.h"
#include "scenario_overrides.h"
#include "serve_commands.h"
#include "text_report.h"
#include "vramlab/axolotl_config.h"
#include "vramlab/deepspeed_config.h"
#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/fit.h"
#include "vramlab/gpu_catalog.h"
#include "vramlab/hf_import.h"
#include "vramlab/planner.h"
#include "vramlab/presets.h"
#include "vramlab/report_json.h"
#include "vramlab/report_text.h"
#include "vramlab/scenario_fields.h"
#include "vramlab/scenario_io.h"
#include "vramlab/scenario_name.h"
#include "vramlab/serving_model.h"
#include "vramlab/step_timeline.h"
#include "vramlab/sweep.h"
#include "vramlab/text_escape.h"
#include "vramlab/toml_reader.h"
#include "vramlab/torchtitan_config.h"
#include "vramlab/trl_config.h"
#include "vramlab/yaml_reader.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <sstream>

namespace vramlab::cli {

using nlohmann::json;

namespace {

void write(const std::string& text)
{
    writeStandardOutput(text);
}

/// `estimate` shows one report: explained, with the caching-allocator replay's counters.
constexpr EstimateOptions kShownReport { true, false, true };

} // namespace

int runEstimate(const std::vector<std::string>& given)
{
    std::vector<std::string> words = given;
    if (const ScenarioOverrides ov = takeOverrides(words); !ov.empty()) {
        // A quick question: keys on the command line, with or without a file to amend.
        CliArgs a(words, {}, { "--json" });
        if (a.positionals().size() > 1)
            throw InputError("estimate", "expected at most one scenario file beside --KEY VALUE options");
        const std::optional<std::string> file
            = a.positionals().empty() ? std::nullopt : std::optional(a.positionals().front());
        const Scenario sc = loadWithOverrides(file, ov);
        if (sc.run.serving)
            throw InputError(
                "run.mode", "\"serving\" is answered by serve-estimate FILE", file.value_or("command line"));
        const Report r = withFile(file.value_or("command line"), [&] { return estimate(sc, kShownReport); });
        write(a.flag("--json") ? reportToJson(r).dump(2) + "\n" : textReport(r));
        return 0;
    }
    if (isServingScenario(words))
        return runServeEstimate(words); // run.mode "serving": the engine's budget, not a training step
    CliArgs a(words, {}, { "--json" });
    const std::string file = onlyFile(a, "estimate");
    const Scenario sc = load(file);
    const Report r = withFile(file, [&] { return estimate(sc, kShownReport); });
    write(a.flag("--json") ? reportToJson(r).dump(2) + "\n" : textReport(r));
    return 0;
}

int runSweep(const std::vector<std::string>& words)
{
    refuseServingScenario(words, "sweep");
    CliArgs a(words, { "--param", "--from", "--to", "--points" }, { "--csv", "--json", "--log" });
    const std::string file = onlyFile(a, "sweep");
    const Scenario sc = load(file);
    const SweepParam p = parseSweepParam(a.value("--param").value_or("run.sequence_length"));
    const Count from = a.integer("--from", 1, 100'000'000).value_or(valueOf(sc, p));
    const Count to = a.integer("--to", 1, 100'000'000).value_or(from);
    const int points = static_cast<int>(a.integer("--points", 1, 1'000'000).value_or(10));
    const auto pts = withFile(file, [&] { return sweep(sc, p, from, to, points, a.flag("--log")); });
    // Every point is computed before the first byte is written (an error leaves no half
    // table), then the text goes out in 1 MiB pieces: a million points never become one string.
    std::string out;
    out.reserve((1u << 20) + 4096); // a piece and one more row: never grown
    auto flush = [&](bool last) {
        if (last || out.size() >= (1u << 20)) {
            write(out);
            out.clear();
        }
    };
    if (a.flag("--json")) {
        // Byte for byte what json::dump(2) wrote (keys sorted), without a million-node document.
        std::vector<std::string_view> keys { "total" };
        for (ComponentKind k : kReportComponents)
            keys.push_back(componentKey(k));
        std::sort(keys.begin(), keys.end());
        out = "{\n  \"format\": \"vramlab.sweep\",\n  \"param\": " + json(keyPathOf(p)).dump() + ",\n  \"points\": [";
        for (size_t i = 0; i < pts.size(); ++i) {
            const SweepPoint& pt = pts[i];
            out += i == 0 ? "\n" : ",\n";
            out += "    {\n      \"fits\": ";
            out += !pt.hasVerdict ? "null" : pt.fits ? "true" : "false";
            out += ",\n      \"flops_per_step\": " + json(pt.flopsPerStep).dump();
            out += std::string(",\n      \"lower_bound\": ") + (pt.lowerBound ? "true" : "false");
            out += ",\n      \"peak_bytes\": " + std::to_string(pt.peak);
            out += ",\n      \"per_gpu_bytes\": {";
            for (size_t j = 0; j < keys.size(); ++j)
                out.append(j == 0 ? "\n        \"" : ",\n        \"")
                    .append(keys[j])
                    .append("\": ")
                    .append(std::to_string(pt.bytesOf(keys[j])));
            out += "\n      },\n      \"value\": " + std::to_string(pt.value) + "\n    }";
            flush(false);
        }
        out += pts.empty() ? "],\n  \"version\": 1\n}\n" : "\n  ],\n  \"version\": 1\n}\n";
    } else if (a.flag("--csv")) {
        appendSweepCsvHeader(out, p, ',');
        for (const SweepPoint& pt : pts) {
            appendSweepCsvRow(out, pt, ',');
            flush(false);
        }
    } else { // for people: sizes with units (issue 16)
        appendSweepTableHeader(out, p);
        for (const SweepPoint& pt : pts) {
            appendSweepTableRow(out, p, pt);
            flush(false);
        }
    }
    flush(true);
    return 0;
}

int runKeys(const std::vector<std::string>& words)
{
    CliArgs a(words, {}, { "--json" });
    if (!a.positionals().empty())
        throw InputError("keys", "expected no arguments (only --json), got \"" + a.positionals().front() + "\"");
    auto kindName = [](FieldKind k) {
        switch (k) {
        case FieldKind::Integer:
            return "integer";
        case FieldKind::Real:
            return "number";
        case FieldKind::Boolean:
            return "boolean";
        case FieldKind::Choice:
            return "choice";
        case FieldKind::Text:
            return "string";
        case FieldKind::Custom:
            return "value";
        case FieldKind::Unmodelled:
            return "refused";
        }
        return "?";
    };
    auto number = [](double d) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.10g", d);
        return std::string(buf);
    };
    json arr = json::array();
    std::ostringstream out;
    for (const ScenarioField& f : scenarioFields()) {
        std::string accepts;
        if (f.kind == FieldKind::Integer || f.kind == FieldKind::Real)
            accepts = number(f.min) + (f.maxOpen ? " to below " : " to ") + number(f.max);
        else if (f.kind == FieldKind::Choice)
            for (const ChoiceName& c : f.choices)
                accepts += (accepts.empty() ? "" : " | ") + std::string(c.name);
        else if (f.kind == FieldKind::Unmodelled)
            accepts = "only " + std::string(f.modelledJson) + " (not modelled yet)";
        json j = { { "key", f.key }, { "kind", kindName(f.kind) }, { "accepts", accepts }, { "unit", f.unit },
            { "description", f.description } };
        arr.push_back(std::move(j));
        out << f.key << "  (" << kindName(f.kind) << (accepts.empty() ? "" : ": " + accepts)
            << (f.unit.empty() ? "" : ", " + std::string(f.unit)) << ")\n    " << f.description << "\n";
    }
    write(a.flag("--json") ? arr.dump(2) + "\n" : out.str());
    return 0;
}

/// `fit` answered, and the answer is that no value fits (a script can tell without parsing).
constexpr int kExitNothingFits = 3;

int runFit(const std::vector<std::string>& words)
{
    if (isServingScenario(words))
        return runServeFit(words);
    CliArgs a(words, { "--max" }, { "--min-gpus", "--json" });
    const std::string file = onlyFile(a, "fit");
    const Scenario sc = load(file);
    if (a.flag("--min-gpus") == a.value("--max").has_value())
        throw InputError(
            "fit", "expected either --max micro_batch_size|sequence_length|context_length|batch_size or --min-gpus");
    FitResult res = withFile(file, [&] {
        if (a.flag("--min-gpus"))
            return fitMinGpus(sc);
        const std::string what = a.value("--max").value_or(std::string());
        const std::string key = what.rfind("run.", 0) == 0 ? what : "run." + what;
        return fitMax(sc, parseSweepParam(key, "--max"));
    });
    const std::string key = keyPathOf(res.param);
    if (a.flag("--json")) {
        json j = { { "format", "vramlab.fit" }, { "version", 1 }, { "param", key }, { "fits", res.value.has_value() } };
        j["value"] = res.value ? json(*res.value) : json(nullptr);
        if (res.report)
            j["peak_bytes"] = res.report->peak;
        if (res.nextReport) {
            j["next_value"] = res.nextValue;
            j["next_peak_bytes"] = res.nextReport->peak;
        }
        j["usable_bytes"] = usableBytes(sc.run);
        write(j.dump(2) + "\n");
        return res.value ? 0 : kExitNothingFits;
    }
    std::ostringstream out;
    const std::string gpu = sc.run.gpu->displayName + " (" + formatBytes(sc.run.gpu->memoryBytes) + ")";
    const std::string usable = formatBytes(usableBytes(sc.run)) + " usable"
        + (sc.run.safetyMargin > 0 ? " after the "
                    + formatDouble(sc.run.safetyMargin * 100, std::chars_format::general, 3) + "% safety margin"
                                   : std::string());
    if (!res.value && res.param == SweepParam::Gpus) {
        out << "nothing fits on " << gpu << ": even " << formatCount(res.nextValue) << " GPUs";
        if (res.nextReport)
            out << " leave " << formatBytes(res.nextReport->peak) << " per GPU at the peak";
        out << "; more GPUs do not shrink what each one keeps with this setup (try a higher ZeRO stage, tensor or "
               "pipeline parallelism, offload or checkpointing)\n";
    } else if (!res.value) {
        out << "nothing fits on " << gpu << ": " << key << " = " << res.nextValue << " needs "
            << formatBytes(res.nextReport ? res.nextReport->peak : 0) << " at its peak\n";
    } else if (res.param == SweepParam::Gpus) {
        const Bytes next = res.nextReport ? res.nextReport->peak : res.report->peak;
        out << "fewest GPUs: " << *res.value << " (peak " << formatBytesApart(res.report->peak, next) << " per GPU of "
            << usable << " on " << gpu << ")\n";
        if (res.nextReport)
            out << "with " << res.nextValue << ": peak " << formatBytesApart(next, res.report->peak)
                << ", does not fit\n";
    } else {
        const Bytes next = res.nextReport ? res.nextReport->peak : res.report->peak;
        out << "largest " << key << ": " << *res.value << " (peak " << formatBytesApart(res.report->peak, next)
            << " of " << usable << " on " << gpu << ")\n";
        if (res.nextReport)
            out << "at " << res.nextValue << ": peak " << formatBytesApart(next, res.report->peak)
                << ", does not fit\n";
        else
            out << "(the search stopped at its ceiling, " << res.ceiling << ")\n";
    }
    write(out.str());
    return res.value ? 0 : kExitNothingFits;
}

int runTimeline(const std::vector<std::string>& words)
{
    refuseServingScenario(words, "timeline");
    CliArgs a(words, { "--step" }, { "--json", "--csv" });
    const std::string file = onlyFile(a, "timeline");
    const Scenario sc = load(file);
    const int step = static_cast<int>(a.integer("--step", 1, 2).value_or(2));
    const Report r = withFile(file, [&] { return estimate(sc); });
    if (!r.stepInputs.training)
        throw InputError("run.mode", "expected training: the timeline simulates a training step", file);
    const StepTimeline t = withFile(file, [&] { return timelineSeries(r, step); }); // step 2: the estimate's own
    if (a.flag("--json")) {
        write(timelineToJson(t, r.stepInputs).dump(2) + "\n");
        return 0;
    }
    if (a.flag("--csv")) {
        write(timelineCsv(t));
        return 0;
    }
    std::ostringstream out;
    out << r.scenarioName << ": step " << step << " on one GPU, " << t.events.size() << " events\n";
    out << "peak " << formatBytes(t.peak) << " at " << t.peakWhere(r.stepInputs) << "\n";
    if (t.simulatedMicroBatches < r.stepInputs.microBatches)
        out << "(micro-batches " << t.simulatedMicroBatches + 1 << ".." << r.stepInputs.microBatches
            << " repeat micro-batch " << t.simulatedMicroBatches << "'s pattern exactly)\n";
    char buf[200];
    std::snprintf(buf, sizeof buf, "%5s  %-9s %4s %5s %12s  %s\n", "#", "phase", "mb", "layer", "alive", "what");
    out << buf;
    for (size_t i = 0; i < t.events.size(); ++i) {
        const TimelineEvent& e = t.events[i];
        std::snprintf(buf, sizeof buf, "%5zu  %-9s %4s %5s %12s  %s%s\n", i, std::string(toString(e.phase)).c_str(),
            e.microBatch >= 0 ? std::to_string(e.microBatch + 1).c_str() : "",
            e.layer >= 0 ? std::to_string(e.layer + 1).c_str() : "", formatBytes(e.total()).c_str(),
            std::string(e.what).c_str(), e.total() == t.peak ? "  <- peak" : "");
        out << buf;
    }
    write(out.str());
    return 0;
}

int runPlan(const std::vector<std::string>& words)
{
    if (isServingScenario(words))
        return runServePlan(words);
    CliArgs a(words, { "--gpus", "--global-batch", "--top", "--max-tp", "--max-pp" }, { "--json", "--no-offload" });
    const std::string file = onlyFile(a, "plan");
    const Scenario sc = load(file);
    PlanRequest req;
    req.gpus = a.integer("--gpus", 1, 100'000).value_or(sc.run.parallelism.gpus);
    if (const auto gb = a.integer("--global-batch", 1, 10'000'000))
        req.globalBatch = *gb;
    req.topK = static_cast<int>(a.integer("--top", 1, 1000).value_or(10));
    req.maxTensorParallel = a.integer("--max-tp", 1, 1024).value_or(req.maxTensorParallel);
    req.maxPipelineParallel = a.integer("--max-pp", 1, 1024).value_or(0);
    req.allowOffload = !a.flag("--no-offload");
    const PlanResult res = withFile(file, [&] { return plan(sc, req); });
    if (a.flag("--json")) {
        write(planToJson(res).dump(2) + "\n");
        return 0;
    }
    std::ostringstream out;
    out << sc.name << " on " << res.gpus << " x " << sc.run.gpu->displayName << ", global batch " << res.globalBatch
        << " x " << sc.run.sequenceLength << " tokens\n";
    out << res.evaluated << " setups estimated, " << res.fitting << " fit at their peak\n";
    if (res.top.empty())
        out << "nothing fits: more GPUs, a shorter sequence or a smaller model\n";
    for (const std::string& note : res.notes)
        out << note << "\n";
    char buf[96];
    for (size_t i = 0; i < res.top.size(); ++i) {
        const PlanCandidate& c = res.top[i];
        // Numbers in fixed columns; the setup and the reason in full, however long.
        std::snprintf(buf, sizeof buf, "%2zu. %8.3f s/step %10.0f tok/s  peak %s%10s  ", i + 1, c.time.total(),
            c.tokensPerS, c.lowerBound ? ">=" : "  ", formatBytes(c.peak).c_str());
        out << buf << c.summary() << "\n    " << c.why << "\n";
    }
    if (res.fastestUnfit)
        out << "not fitting: " << res.fastestUnfit->summary() << " " << res.fastestUnfit->why << "\n";
    write(out.str());
    return 0;
}

int runPresets(const std::vector<std::string>& words)
{
    CliArgs a(words, {}, { "--json" });
    if (!a.positionals().empty())
        throw InputError("presets", "expected no arguments (only --json), got \"" + a.positionals().front() + "\"");
    std::ostringstream out;
    if (a.flag("--json")) {
        json arr = json::array();
        for (const Preset& p : presets()) {
            const ParameterCount c = countParameters(p.model);
            arr.push_back({ { "key", p.key }, { "family", p.family }, { "name", p.model.name }, { "params", c.total },
                { "active_params", c.active }, { "published_params", p.publishedParams }, { "source", p.source } });
        }
        out << arr.dump(2) << "\n";
    } else {
        // Columns as wide as the longest key and name ("nemotron-nano-9b-v2", "Granite 4.0 H Small (hybrid)").
        int keyWidth = 6, nameWidth = 5;
        for (const Preset& p : presets()) {
            keyWidth = std::max(keyWidth, int(p.key.size()));
            nameWidth = std::max(nameWidth, int(p.model.name.size()));
        }
        char buf[512];
        std::snprintf(
            buf, sizeof buf, "%-*s %-*s %20s %20s\n", keyWidth, "preset", nameWidth, "model", "parameters", "active");
        out << buf;
        for (const Preset& p : presets()) {
            const ParameterCount c = countParameters(p.model);
            std::snprintf(buf, sizeof buf, "%-*s %-*s %20s %20s\n", keyWidth, p.key.c_str(), nameWidth,
                p.model.name.c_str(), formatCount(c.total).c_str(), formatCount(c.active).c_str());
            out << buf;
        }
    }
    write(out.str());
    return 0;
}

int runGpus(const std::vector<std::string>& words)
{
    CliArgs a(words, {}, { "--json" });
    if (!a.positionals().empty())
        throw InputError("gpus", "expected no arguments (only --json), got \"" + a.positionals().front() + "\"");
    if (a.flag("--json")) {
        json arr = json::array();
        for (const GpuSpec& g : gpuCatalog()) {
            json j = gpuSpecJson(g);
            j["display_name"] = g.displayName;
            arr.push_back(std::move(j));
        }
        write(arr.dump(2) + "\n");
        return 0;
    }
    std::ostringstream out;
    char buf[256];
    std::snprintf(buf, sizeof buf, "%-18s %-34s %10s %9s %9s %10s %9s %8s\n", "gpu", "model", "memory", "bf16 TF/s",
        "fp8 TF/s", "mem GB/s", "link GB/s", "host GB/s");
    out << buf;
    for (const GpuSpec& g : gpuCatalog()) {
        const std::string fp8 = g.fp8Tflops > 0 ? std::to_string(static_cast<long long>(g.fp8Tflops + 0.5)) : "-";
        std::snprintf(buf, sizeof buf, "%-18s %-34s %10s %9.0f %9s %10.0f %9.0f %8.0f\n", g.name.c_str(),
            g.displayName.c_str(), formatBytes(g.memoryBytes).c_str(), g.bf16Tflops, fp8.c_str(), g.memoryBandwidthGBs,
            g.interconnectGBs, g.hostLinkGBs);
        out << buf;
    }
    write(out.str());
    return 0;
}

int runImportHf(const std::vector<std::string>& words)
{
    CliArgs a(words, { "-o", "--output", "--name" }, {});
    if (a.positionals().size() != 1)
        throw InputError("import-hf", "expected one Hugging Face config.json");
    const std::string file = a.positionals().front();
    const HfImport imported = withFile(file, [&] { return importHfConfig(parseJsonText(readTextFile(file), file)); });
    Scenario sc = scenarioFromHf(imported, a.value("--name").value_or(std::string()));
    if (sc.name.empty()) // named after the model: "Qwen1.5-MoE-A2.7B full fine-tune, 4,096 tokens"
        sc.name = describeScenario(sc);
    for (const std::string& w : imported.warnings)
        std::fprintf(stderr, "%s: warning: %s\n", file.c_str(), w.c_str());
    const std::string text = scenarioFileText(sc);
    const char* option = a.value("-o") ? "-o" : "--output";
    const auto outPath = a.value(option);
    if (outPath && outPath->empty())
        throw InputError(option, "the file name is empty");
    if (!outPath) {
        write(text);
        return 0;
    }
    writeFileAtomically(*outPath, text);
    // The scenario went to the file: say what it holds, so a wrong config is seen at once.
    const ParameterCount c = countParameters(sc.model);
    write("wrote " + *outPath + ": \"" + sc.name + "\" (" + imported.modelType + "), " + formatCount(c.total)
        + " parameters" + (c.active != c.total ? " (" + formatCount(c.active) + " active per token)" : std::string())
        + "\n");
    return 0;
}

namespace {

/// import-deepspeed, import-torchtitan, import-trl and import-axolotl: the scenario given to --into with a framework
/// config's run settings, printed or written to a new file (never over the scenario it started from); each mapped and
/// left-out key on stderr.
int runImportRunConfig(const std::vector<std::string>& words, const char* command, const char* framework,
    const std::function<ConfigImport(Scenario&, const std::string& config)>& apply)
{
    CliArgs a(words, { "--into", "-o", "--output" }, {});
    if (a.positionals().size() != 1 || !a.value("--into"))
        throw InputError(command, std::string("expected one ") + framework + " config and --into SCENARIO.json");
    const std::string config = a.positionals().front(), into = *a.value("--into");
    const char* option = a.value("-o") ? "-o" : "--output";
    const auto outPath = a.value(option);
    // Never over the scenario it started from: the run changes, so that file is the user's earlier work.
    std::error_code ec;
    if (outPath && (outPath->empty() || std::filesystem::equivalent(*outPath, into, ec)))
        throw InputError(option, "expected a new file, not the scenario given to --into (" + into + ")");
    Scenario sc = load(into);
    const ConfigImport done = withFile(config, [&] { return apply(sc, config); });
    // A run the config makes that VRAM Lab cannot take is refused here, naming the scenario's key.
    withFile(into + " with " + config, [&] { return estimate(sc); });
    for (const std::string& line : done.applied)
        std::fprintf(stderr, "%s: %s\n", config.c_str(), line.c_str());
    for (const std::string& line : done.ignored)
        std::fprintf(stderr, "%s: left out: %s\n", config.c_str(), line.c_str());
    if (!outPath) {
        write(scenarioFileText(sc));
        return 0;
    }
    writeFileAtomically(*outPath, scenarioFileText(sc));
    write("wrote " + *outPath + ": \"" + sc.name + "\" with " + config + "'s " + framework + " settings\n");
    return 0;
}

} // namespace

int runImportDeepSpeed(const std::vector<std::string>& words)
{
    return runImportRunConfig(words, "import-deepspeed", "DeepSpeed", [](Scenario& sc, const std::string& config) {
        return applyDeepSpeedConfig(sc, parseJsonText(readTextFile(config), config));
    });
}

int runImportTorchtitan(const std::vector<std::string>& words)
{
    return runImportRunConfig(words, "import-torchtitan", "torchtitan", [](Scenario& sc, const std::string& config) {
        return applyTorchtitanConfig(sc, parseTomlText(readTextFile(config, kMaxTomlFileBytes), config));
    });
}

int runImportTrl(const std::vector<std::string>& words)
{
    return runImportRunConfig(words, "import-trl", "TRL", [](Scenario& sc, const std::string& config) {
        return applyTrlConfig(sc, parseYamlText(readTextFile(config, kMaxYamlFileBytes), config));
    });
}

int runImportAxolotl(const std::vector<std::string>& words)
{
    return runImportRunConfig(words, "import-axolotl", "axolotl", [](Scenario& sc, const std::string& config) {
        return applyAxolotlConfig(sc, parseYamlText(readTextFile(config, kMaxYamlFileBytes), config));
    });
}

int runValidate(const std::vector<std::string>& words)
{
    CliArgs a(words, {}, {});
    const std::string file = onlyFile(a, "validate");
    const Scenario sc = load(file);
    // A serving scenario is the engine's budget (serve-estimate): a hybrid model has no one-request estimate.
    withFile(file, [&] {
        if (sc.run.serving)
            (void)servingEstimate(sc.model, sc.run);
        else
            (void)estimate(sc);
    });
    for (const std::string& w : sc.warnings)
        std::fprintf(stderr, "%s: warning: %s\n", file.c_str(), w.c_str());
    write(file + ": valid scenario (" + sc.name + ")\n");
    return 0;
}

} // namespace vramlab::cli
