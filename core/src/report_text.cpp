// SPDX-License-Identifier: MIT
#include "vramlab/report_text.h"

#include "vramlab/parameter_tensors.h"

#include <cstdio>
#include <sstream>

namespace vramlab {

namespace {

constexpr const char* kKeys[] = {"weights", "master_weights", "gradients", "optimizer_states", "activations", "kv_cache", "overhead"};

std::string share(const Report& r, Bytes b)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", r.total > 0 ? 100.0 * double(b) / double(r.total) : 0.0);
    return buf;
}

std::string gib(Bytes b)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", double(b) / double(kGiB));
    return buf;
}

/// CSV field: quoted when it holds a comma, quote or newline.
std::string csv(const std::string& s)
{
    if (s.find_first_of(",\"\n") == std::string::npos)
        return s;
    std::string out = "\"";
    for (char c : s)
        out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

/// Markdown table cell: pipes escaped.
std::string md(const std::string& s)
{
    std::string out;
    for (char c : s)
        out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
}

std::string verdict(const Report& r)
{
    if (!r.gpu)
        return "Peak " + formatBytes(r.peak) + " per GPU (no GPU chosen).";
    const Bytes room = r.usableBytes - r.peak;
    return std::string(r.fits ? "**Fits**" : "**Does not fit**") + " on " + r.gpu->displayName + " (" +
           formatBytes(r.usableBytes) + "): peak " + formatBytes(r.peak) + ", " + formatBytes(room < 0 ? -room : room) +
           (room < 0 ? " over." : " free.");
}

} // namespace

std::string breakdownCsv(const Report& r)
{
    std::ostringstream out;
    out << "key,component,bytes,gib,share_percent,formula\n";
    for (const char* key : kKeys)
        if (const Component* c = r.component(key))
            out << key << ',' << csv(std::string(c->label)) << ',' << c->bytes << ',' << gib(c->bytes) << ',' << share(r, c->bytes)
                << ',' << csv(c->formula) << '\n';
    out << "total,Total," << r.total << ',' << gib(r.total) << ",100.0,\n";
    out << "peak,Peak," << r.peak << ',' << gib(r.peak) << ',' << share(r, r.peak) << ',' << csv(r.peakWhere) << '\n';
    return out.str();
}

std::string breakdownMarkdown(const Report& r)
{
    std::ostringstream out;
    out << "| Component | Size | Bytes | Share | Formula |\n|---|---:|---:|---:|---|\n";
    for (const char* key : kKeys)
        if (const Component* c = r.component(key))
            out << "| " << c->label << " | " << formatBytes(c->bytes) << " | " << formatCount(c->bytes) << " | "
                << share(r, c->bytes) << "% | " << md(c->formula) << " |\n";
    out << "| **Total** | **" << formatBytes(r.total) << "** | **" << formatCount(r.total) << "** | 100% | |\n";
    if (r.peak != r.total)
        out << "| Peak | " << formatBytes(r.peak) << " | " << formatCount(r.peak) << " | " << share(r, r.peak) << "% | "
            << md(r.peakWhere) << " |\n";
    return out.str();
}

std::string settingsMarkdown(const Scenario& sc)
{
    const ModelSpec& m = sc.model;
    const RunSpec& r = sc.run;
    const Parallelism& p = r.parallelism;
    std::ostringstream out;
    out << "| Setting | Value |\n|---|---|\n";
    out << "| Model | " << md(m.name) << (m.preset.empty() ? "" : " (`" + m.preset + "`)") << " |\n";
    out << "| Parameters | " << formatCount(countParameters(m).total) << " |\n";
    out << "| Shapes | " << m.numLayers << " layers, hidden " << m.hiddenSize << ", " << m.numHeads << " heads (" << m.numKvHeads
        << " KV), head_dim " << m.headDim << ", FFN " << m.ffnHiddenSize << ", vocabulary " << m.vocabSize << " |\n";
    out << "| Mode | " << toString(r.mode);
    if (r.mode == Mode::Training)
        out << ", " << toString(r.finetune.method) << (r.finetune.method != FinetuneMethod::Full ? " rank " + std::to_string(r.finetune.rank) : "");
    out << " |\n";
    if (r.mode == Mode::Training) {
        out << "| Tokens | sequence " << r.sequenceLength << " x micro-batch " << r.microBatchSize << " x accumulation "
            << r.gradientAccumulationSteps << " |\n";
        out << "| Precision, optimizer | " << toString(r.precision) << ", " << toString(r.optimizer) << " |\n";
        out << "| Checkpointing, attention | " << toString(r.checkpointing) << ", " << toString(r.attention) << " |\n";
    } else {
        out << "| Serving | batch " << r.inference.batchSize << " x context " << r.inference.contextLength << ", weights "
            << toString(r.inference.weightDtype) << ", KV cache " << toString(r.inference.kvCacheDtype) << " |\n";
    }
    out << "| Parallelism | " << p.gpus << " GPUs: data " << p.dataParallel() << " x tensor " << p.tensorParallel << " x pipeline "
        << p.pipelineParallel << ", ZeRO-" << p.zeroStage << (p.sequenceParallel ? ", sequence parallel" : "")
        << (p.offloadOptimizer ? ", optimizer offload" : "") << (p.offloadParams ? ", parameter offload" : "") << " |\n";
    out << "| GPU | " << (r.gpu ? r.gpu->displayName + " (" + formatBytes(r.gpu->memoryBytes) + ")" : std::string("none")) << " |\n";
    out << "| Assumed MFU | " << r.mfu << " |\n";
    return out.str();
}

std::string reviewMarkdown(const Scenario& sc, const Report& r, const std::vector<std::pair<std::string, std::string>>& images)
{
    std::ostringstream out;
    out << "# " << sc.name << "\n\n" << verdict(r) << "\n\n## Settings\n\n" << settingsMarkdown(sc) << "\n## Memory per GPU ("
        << r.stage << ")\n\n" << breakdownMarkdown(r) << '\n';
    for (const auto& [caption, path] : images)
        out << "![" << caption << "](" << path << ")\n\n";
    const FlopsEstimate& f = r.flops;
    out << "## Compute\n\n- FLOPs per step: " << formatFlops(f.perStep) << " (hardware, with recomputation: "
        << formatFlops(f.hardwarePerStep) << ")\n- FLOPs per token: " << formatFlops(f.perToken) << '\n';
    if (f.stepTimeS > 0) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "- Step time: %.4g s, %.0f tokens/s at %.0f%% MFU of %.4g TFLOP/s\n", f.stepTimeS,
                      f.tokensPerS, f.mfu * 100, f.peakTflops);
        out << buf;
    }
    out << "- Formula: " << f.formula << "\n\n## How each number was computed\n\n";
    for (const Component& c : r.components)
        out << "- **" << c.label << "** (" << formatBytes(c.bytes) << "): " << c.explanation << " `" << c.formula << "`\n";
    out << "\nOverhead, part by part:\n\n";
    for (const Component& c : r.overheadParts)
        out << "- " << c.label << ": " << formatBytes(c.bytes) << ". " << c.explanation << " `" << c.formula << "`\n";
    if (r.hostBytes > 0)
        out << "\nHost memory per GPU process: " << formatBytes(r.hostBytes) << " (" << r.hostFormula << ").\n";
    if (!r.warnings.empty()) {
        out << "\n## Warnings\n\n";
        for (const std::string& w : r.warnings)
            out << "- " << w << '\n';
    }
    out << "\n_Made with VRAM Lab from the scenario above; every figure is reproducible with `vramlab-cli estimate`._\n";
    return out.str();
}

std::string timelineCsv(const StepTimeline& t)
{
    std::ostringstream out;
    out << "index,phase,micro_batch,layer";
    for (int c = 0; c < kTimelineCategories; ++c)
        out << ',' << timelineCategoryKey(static_cast<TimelineCategory>(c));
    out << ",total,what\n";
    for (size_t i = 0; i < t.events.size(); ++i) {
        const TimelineEvent& e = t.events[i];
        out << i << ',' << toString(e.phase) << ',' << e.microBatch + 1 << ',' << e.layer + 1;
        for (Bytes b : e.bytes)
            out << ',' << b;
        out << ',' << e.total() << ',' << csv(std::string(e.what)) << '\n';
    }
    return out.str();
}

} // namespace vramlab
