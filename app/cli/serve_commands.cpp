// SPDX-License-Identifier: MIT
// serve-estimate, and estimate / fit on serving scenarios (run.mode "serving").
#include "serve_commands.h"

#include "cli_args.h"
#include "cli_scenario.h"
#include "command_main.h"
#include "vramlab/chart_data.h"
#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/report_json.h"
#include "vramlab/scenario_io.h"
#include "vramlab/serving_fit.h"
#include "vramlab/serving_plan.h"
#include "vramlab/serving_report.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace vramlab::cli {

using nlohmann::json;

namespace {

/// fit's exit code when the answer is that nothing fits (as for training fits).
constexpr int kExitNothingFits = 3;

Scenario loadServing(const std::string& file)
{
    Scenario sc = load(file);
    if (!sc.run.serving)
        throw InputError("run.mode", "expected \"serving\" with a run.serving object (see the README, Serving)", file);
    return sc;
}

/// Speed at the batch the cache holds (at most max_num_seqs), unless --batch says otherwise.
ServingSpeed speedFor(const Scenario& sc, const ServingEstimate& e, const CliArgs& a)
{
    const Count held = std::max<Count>(1, static_cast<Count>(std::floor(e.maxConcurrency)));
    const Count batch
        = a.integer("--batch", 1, 1'000'000).value_or(std::min<Count>(std::max<Count>(1, e.maxNumSeqs), held));
    const Count context = a.integer("--context", 1, 100'000'000).value_or(e.maxModelLen);
    const Count prompt = a.integer("--prompt", 1, 100'000'000).value_or(context);
    return servingSpeed(sc.model, sc.run, e, batch, prompt, context);
}

} // namespace

bool isServingScenario(const std::vector<std::string>& words)
{
    for (const std::string& w : words)
        if (w.rfind("--", 0) != 0) {
            try {
                return loadScenarioFile(w).run.serving.has_value();
            } catch (const InputError&) {
                return false; // the command reports the error itself
            }
        }
    return false;
}

void refuseServingScenario(const std::vector<std::string>& words, const char* command)
{
    if (!isServingScenario(words))
        return;
    const auto file
        = std::find_if(words.begin(), words.end(), [](const std::string& w) { return w.rfind("--", 0) != 0; });
    throw InputError("run.mode",
        std::string("\"serving\" is not for ") + command
            + " (a training or single-process inference view); use serve-estimate or fit",
        *file);
}

int runServeEstimate(const std::vector<std::string>& words)
{
    CliArgs a(words, { "--batch", "--context", "--prompt" }, { "--json" });
    const std::string file = onlyFile(a, "serve-estimate");
    const Scenario sc = loadServing(file);
    const ServingEstimate e = withFile(file, [&] { return servingEstimate(sc.model, sc.run); });
    const ServingSpeed s = withFile(file, [&] { return speedFor(sc, e, a); });
    if (a.flag("--json")) {
        json j = { { "format", "vramlab.report" }, { "version", 1 }, { "scenario", sc.name },
            { "serving", servingToJson(e, s) } };
        writeStandardOutput(j.dump(2) + "\n");
    } else {
        writeStandardOutput(servingText(sc.name, e, s));
    }
    return 0;
}

int runServeFit(const std::vector<std::string>& words)
{
    CliArgs a(words, { "--max", "--concurrency", "--context" }, { "--min-gpus", "--json" });
    const std::string file = onlyFile(a, "fit");
    const Scenario sc = loadServing(file);
    const std::string what = a.value("--max").value_or(a.flag("--min-gpus") ? "gpus" : "");
    if (what.empty() || (a.flag("--min-gpus") && a.value("--max")))
        throw InputError("fit", "expected --max concurrency|context|gpu_layers or --min-gpus for a serving scenario");
    const Count concurrency = a.integer("--concurrency", 1, 1'000'000).value_or(1);
    ServingFit f = withFile(file, [&] {
        if (what == "concurrency") {
            const Count context
                = a.integer("--context", 1, 100'000'000).value_or(servingEstimate(sc.model, sc.run).maxModelLen);
            return maxConcurrency(sc.model, sc.run, context);
        }
        if (what == "context")
            return longestContext(sc.model, sc.run, concurrency);
        if (what == "gpus")
            return fewestGpus(sc.model, sc.run, concurrency);
        if (what == "gpu_layers")
            return mostGpuLayers(sc.model, sc.run);
        throw InputError(
            "--max", "expected concurrency, context or gpu_layers for a serving scenario, got \"" + what + "\"");
    });
    if (a.flag("--json")) {
        json j = { { "format", "vramlab.fit" }, { "version", 1 }, { "param", what }, { "fits", f.value.has_value() },
            { "value", f.value ? json(*f.value) : json(nullptr) }, { "explanation", f.explanation } };
        if (f.estimate)
            j["serving"] = servingToJson(*f.estimate, ServingSpeed {});
        writeStandardOutput(j.dump(2) + "\n");
    } else {
        std::ostringstream o;
        if (f.value)
            o << (what == "gpus" ? "fewest GPUs" : "largest " + what) << ": " << *f.value << " (" << f.explanation
              << ")\n";
        else
            o << "nothing fits: " << f.explanation << "\n";
        writeStandardOutput(o.str());
    }
    return f.value ? 0 : kExitNothingFits;
}

int runServePlan(const std::vector<std::string>& words)
{
    CliArgs a(words,
        { "--gpus", "--concurrency", "--context", "--prompt", "--max-tpot-ms", "--max-ttft-ms", "--min-tokens-per-s",
            "--top" },
        { "--json" });
    const std::string file = onlyFile(a, "plan");
    const Scenario sc = loadServing(file);
    ServingPlanRequest req = withFile(file, [&] { return defaultServingPlanRequest(sc); }); // the Plan tab's
    req.gpus = a.integer("--gpus", 1, 4096).value_or(req.gpus);
    req.concurrency = a.integer("--concurrency", 1, 1'000'000).value_or(req.concurrency);
    req.context = a.integer("--context", 1, 100'000'000).value_or(req.context);
    req.promptTokens = a.integer("--prompt", 1, 100'000'000).value_or(std::min<Count>(req.context, 1024));
    if (const auto ms = a.integer("--max-tpot-ms", 1, 1'000'000))
        req.maxTpotS = static_cast<double>(*ms) / 1e3;
    if (const auto ms = a.integer("--max-ttft-ms", 1, 100'000'000))
        req.maxTtftS = static_cast<double>(*ms) / 1e3;
    if (const auto t = a.integer("--min-tokens-per-s", 1, 1'000'000'000))
        req.minTokensPerS = static_cast<double>(*t);
    req.topK = static_cast<int>(a.integer("--top", 1, 1000).value_or(10));
    const ServingPlanResult p = withFile(file, [&] { return servingPlan(sc.model, sc.run, req); });
    if (a.flag("--json")) {
        json rows = json::array(), unfit = json::array();
        for (const ServingPlanCandidate& c : p.top)
            rows.push_back({ { "summary", c.summary() }, { "tensor_parallel", c.tensorParallel },
                { "pipeline_parallel", c.pipelineParallel }, { "data_parallel", c.dataParallel },
                { "kv_cache_dtype", c.kvCacheDtype ? std::string(toString(*c.kvCacheDtype)) : std::string("auto") },
                { "requests_held", c.requestsHeld }, { "batch_per_replica", c.batchPerReplica },
                { "tokens_per_s_all_replicas", c.tokensPerSAll() }, { "why", c.why },
                { "serving", servingToJson(c.estimate, c.speed) } });
        for (const ServingPlanCandidate& c : p.unfit)
            unfit.push_back({ { "summary", c.summary() }, { "why", c.why } });
        const json j = { { "format", "vramlab.serving_plan" }, { "version", 1 }, { "gpus", req.gpus },
            { "concurrency", req.concurrency }, { "context", req.context }, { "evaluated", p.evaluated },
            { "top", rows }, { "unfit", unfit } };
        writeStandardOutput(j.dump(2) + "\n");
        return p.top.empty() ? kExitNothingFits : 0;
    }
    std::ostringstream o;
    o << "serving " << formatCount(req.concurrency) << " requests of " << formatCount(req.context) << " tokens on "
      << req.gpus << "x " << sc.run.gpu->displayName << " (" << p.evaluated << " deployments estimated; speed is the "
      << "roofline, all-reduce latency not counted)\n";
    int rank = 0;
    for (const ServingPlanCandidate& c : p.top)
        o << "#" << ++rank << "  " << c.summary() << ": " << c.why << "\n";
    if (p.top.empty()) {
        o << "nothing fits:\n";
        for (const ServingPlanCandidate& c : p.unfit)
            o << "  " << c.summary() << ": " << c.why << "\n";
    }
    writeStandardOutput(o.str());
    return p.top.empty() ? kExitNothingFits : 0;
}

} // namespace vramlab::cli
