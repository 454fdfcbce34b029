// SPDX-License-Identifier: MIT
#include "vramlab/report_text.h"

#include "vramlab/flops_model.h"
#include "vramlab/parameter_tensors.h"
#include "vramlab/serving_chart.h"
#include "vramlab/serving_model.h"
#include "vramlab/text_escape.h"

#include <charconv>
#include <cstdio>
#include <sstream>

namespace vramlab {

namespace {

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

/// Generated table text: only pipes need escaping to stay in their cell.
std::string md(const std::string& s)
{
    std::string out;
    for (char c : s)
        out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
}

std::string markdownCell(const ReportCell& c)
{
    std::string out = markdownEscape(c.user) + md(c.text);
    if (!c.code.empty())
        out += " (`" + c.code + "`)";
    return c.strong ? "**" + out + "**" : out;
}

} // namespace

std::string breakdownCsv(const Report& r)
{
    std::ostringstream out;
    out << "key,component,bytes,gib,share_percent,formula\n";
    for (ComponentKind k : kReportComponents)
        if (const Component* c = r.component(componentKey(k)))
            out << c->key << ',' << csvField(c->label) << ',' << c->bytes << ',' << gib(c->bytes) << ','
                << share(r, c->bytes) << ',' << csvField(c->formula) << '\n';
    out << "total,Total," << r.total << ',' << gib(r.total) << ",100.0,\n";
    out << "peak,Peak," << r.peak << ',' << gib(r.peak) << ',' << share(r, r.peak) << ',' << csvField(r.peakWhere)
        << '\n';
    return out.str();
}

std::string capacityText(const Report& r)
{
    if (!r.gpu)
        return {};
    if (r.usableBytes == r.gpu->memoryBytes)
        return formatBytes(r.usableBytes);
    const double margin = 100.0 * double(r.gpu->memoryBytes - r.usableBytes) / double(r.gpu->memoryBytes);
    return formatBytes(r.usableBytes) + " usable (" + formatBytes(r.gpu->memoryBytes) + " less the "
        + formatDouble(margin, std::chars_format::general, 2) + "% margin)";
}

ReportCell verdictCell(const Report& r)
{
    if (!r.gpu)
        return { "", "Peak " + formatBytes(r.peak) + " per GPU (no GPU chosen).", "", false };
    const Bytes room = r.usableBytes - r.peak;
    ReportCell c;
    c.user = r.gpu->displayName;
    c.text = ", " + capacityText(r) + ": peak " + formatBytes(r.peak) + ", " + formatBytes(room < 0 ? -room : room)
        + (room < 0 ? " over." : " free.");
    return c;
}

std::vector<CounterRow> counterRows(const Report& r)
{
    if (!r.allocatorReplayed)
        return {};
    return {
        { "peak_allocated", "Peak allocated", r.peakAllocatedBytes,
            "live tensor blocks (512 B rounded): torch.cuda.max_memory_allocated()" },
        { "peak_reserved", "Peak reserved", r.peakReservedBytes,
            "the caching allocator's segments, cached free blocks included: torch.cuda.max_memory_reserved()" },
        { "peak_device", "Peak device", r.peakDeviceBytes,
            "reserved + CUDA context + NCCL buffers: what nvidia-smi shows" },
    };
}

ReportTable breakdownTable(const Report& r)
{
    ReportTable t;
    t.header = { "Component", "Size", "Bytes", "Share", "Formula" };
    t.numeric = { false, true, true, true, false };
    auto cell = [](std::string text, bool strong = false) { return ReportCell { "", std::move(text), "", strong }; };
    for (ComponentKind k : kReportComponents)
        if (const Component* c = r.component(componentKey(k)))
            t.rows.push_back({ cell(std::string(c->label)), cell(formatBytes(c->bytes)), cell(formatCount(c->bytes)),
                cell(share(r, c->bytes) + "%"), cell(c->formula) });
    t.rows.push_back({ cell("Total", true), cell(formatBytes(r.total), true), cell(formatCount(r.total), true),
        cell("100%"), cell("") });
    if (r.peak != r.total)
        t.rows.push_back({ cell("Peak"), cell(formatBytes(r.peak)), cell(formatCount(r.peak)),
            cell(share(r, r.peak) + "%"), cell(r.peakWhere) });
    for (const CounterRow& c : counterRows(r))
        t.rows.push_back({ cell(std::string(c.label)), cell(formatBytes(c.bytes)), cell(formatCount(c.bytes)),
            cell(share(r, c.bytes) + "%"), cell(std::string(c.what)) });
    return t;
}

ReportTable settingsTable(const Scenario& sc)
{
    const ModelSpec& m = sc.model;
    const RunSpec& r = sc.run;
    const Parallelism& p = r.parallelism;
    ReportTable t;
    t.header = { "Setting", "Value" };
    t.numeric = { false, false };
    auto row = [&](std::string setting, std::string value) {
        t.rows.push_back(
            { ReportCell { "", std::move(setting), "", false }, ReportCell { "", std::move(value), "", false } });
    };
    t.rows.push_back({ ReportCell { "", "Model", "", false }, ReportCell { m.name, "", m.preset, false } });
    row("Parameters", formatCount(countParameters(m).total));
    std::ostringstream v;
    v << m.numLayers << " layers, hidden " << m.hiddenSize << ", " << m.numHeads << " heads (" << m.numKvHeads
      << " KV), head_dim " << m.headDim << ", FFN " << m.ffnHiddenSize << ", vocabulary " << m.vocabSize;
    row("Shapes", v.str());
    std::string mode(toString(r.mode));
    if (r.mode == Mode::Training)
        mode += ", " + std::string(toString(r.finetune.method))
            + (r.finetune.method != FinetuneMethod::Full ? " rank " + std::to_string(r.finetune.rank) : "");
    row("Mode", mode);
    v.str("");
    if (r.mode == Mode::Training) {
        v << "sequence " << r.sequenceLength << " x micro-batch " << r.microBatchSize << " x accumulation "
          << r.gradientAccumulationSteps;
        row("Tokens", v.str());
        row("Precision, optimizer", std::string(toString(r.precision)) + ", " + std::string(toString(r.optimizer)));
        row("Checkpointing, attention", toString(r.checkpointing) + ", " + std::string(toString(r.attention)));
    } else {
        v << "batch " << r.inference.batchSize << " x context " << r.inference.contextLength << ", weights "
          << toString(r.inference.weightDtype) << ", KV cache " << toString(r.inference.kvCacheDtype);
        row("Serving", v.str());
    }
    v.str("");
    v << p.gpus << " GPUs: data " << p.dataParallel() << " x tensor " << p.tensorParallel << " x pipeline "
      << p.pipelineParallel << ", ZeRO-" << p.zeroStage << (p.sequenceParallel ? ", sequence parallel" : "")
      << (p.offloadOptimizer ? ", optimizer offload" : "") << (p.offloadParams ? ", parameter offload" : "");
    row("Parallelism", v.str());
    if (r.gpu)
        t.rows.push_back({ ReportCell { "", "GPU", "", false },
            ReportCell { r.gpu->displayName, " (" + formatBytes(r.gpu->memoryBytes) + ")", "", false } });
    else
        row("GPU", "none");
    v.str("");
    v << r.mfu;
    row("Assumed MFU", v.str());
    return t;
}

std::string markdownTable(const ReportTable& t)
{
    std::string out = "|", rule = "|";
    for (size_t i = 0; i < t.header.size(); ++i) {
        out += " " + md(t.header[i]) + " |";
        rule += i < t.numeric.size() && t.numeric[i] ? "---:|" : "---|";
    }
    out += "\n" + rule + "\n";
    for (const auto& row : t.rows) {
        out += "|";
        for (const ReportCell& c : row) {
            const std::string cell = markdownCell(c);
            out += cell.empty() ? " |" : " " + cell + " |";
        }
        out += "\n";
    }
    return out;
}

std::string breakdownMarkdown(const Report& r)
{
    return markdownTable(breakdownTable(r));
}

std::string settingsMarkdown(const Scenario& sc)
{
    return markdownTable(settingsTable(sc));
}

ReportTable servingBudgetTable(const ServingBudgetChart& chart)
{
    ReportTable t;
    t.header = { "Rank / device" };
    t.numeric = { false };
    if (!chart.bars.empty())
        for (const ServingSegment& s : chart.bars.front().segments) {
            t.header.push_back(s.label);
            t.numeric.push_back(true);
        }
    t.header.push_back("Used");
    t.numeric.push_back(true);
    for (const ServingBar& bar : chart.bars) {
        std::vector<ReportCell> row { ReportCell { bar.label, {}, {}, false } };
        for (const ServingSegment& s : bar.segments)
            row.push_back(ReportCell { {}, formatBytes(s.bytes), {}, false });
        row.push_back(ReportCell { {}, formatBytes(bar.usedBytes()), {}, true });
        t.rows.push_back(std::move(row));
    }
    return t;
}

std::optional<ServingReview> servingReview(const Scenario& sc)
{
    if (!sc.run.serving)
        return std::nullopt;
    ServingReview v;
    const Serving& s = *sc.run.serving;
    v.heading = "Serving: " + std::string(toString(s.engine));
    try {
        const ServingEstimate e = servingEstimate(sc.model, sc.run);
        if (!e.engineVersion.empty())
            v.heading += " " + e.engineVersion;
        v.verdict = servingVerdict(e);
        auto count = [](Count n) { return formatCount(n); };
        v.facts.push_back("KV cache: " + formatBytes(e.kvCacheBytes) + " (" + std::to_string(e.kvCacheBytes)
            + " bytes), " + count(e.kvCacheTokens) + " tokens");
        if (e.gpuBlocks)
            v.facts.push_back("GPU blocks: " + count(*e.gpuBlocks));
        char conc[64];
        std::snprintf(conc, sizeof conc, "%.2f", e.maxConcurrency);
        v.facts.push_back("Maximum concurrency at " + count(e.maxModelLen) + " tokens per request: " + conc + "x");
        if (!e.rule.empty())
            v.facts.push_back("Accounting rule: " + e.rule);
        v.budget = servingBudgetTable(servingBudgetChart(sc.run, e));
        v.logLines = e.logLines;
    } catch (const std::exception& error) { // InputError or SizeOverflow: said in the report
        v.error = error.what();
    }
    return v;
}

std::string servingReviewMarkdown(const Scenario& sc)
{
    const std::optional<ServingReview> v = servingReview(sc);
    if (!v)
        return {};
    std::ostringstream out;
    out << "## " << markdownEscape(v->heading) << "\n\n";
    if (!v->error.empty()) {
        out << "Not estimated: " << markdownEscape(v->error) << "\n\n";
        return out.str();
    }
    out << "**" << markdownEscape(v->verdict) << "**\n\n";
    for (const std::string& f : v->facts)
        out << "- " << markdownEscape(f) << '\n';
    out << '\n' << markdownTable(v->budget) << '\n';
    if (!v->logLines.empty()) {
        out << "Startup lines as the engine prints them:\n\n";
        for (const std::string& line : v->logLines) // an indented code block: no text can close it
            out << "    " << printableText(line, 2000) << '\n';
        out << '\n';
    }
    return out.str();
}

std::string reviewMarkdown(
    const Scenario& sc, const Report& r, const std::vector<std::pair<std::string, std::string>>& images)
{
    std::ostringstream out;
    ReportCell verdict = verdictCell(r);
    std::string verdictLine = markdownCell(verdict);
    if (r.gpu)
        verdictLine = std::string(r.fits ? "**Fits**" : "**Does not fit**") + " on " + verdictLine;
    out << "# " << markdownEscape(sc.name) << "\n\n"
        << verdictLine << "\n\n## Settings\n\n"
        << settingsMarkdown(sc) << "\n## Memory per GPU (" << r.stage << ")\n\n"
        << breakdownMarkdown(r) << '\n'
        << servingReviewMarkdown(sc);
    for (const auto& [caption, path] : images)
        out << "![" << markdownEscape(caption) << "](" << markdownLinkTarget(path) << ")\n\n";
    const FlopsEstimate& f = r.flops;
    out << "## Compute\n\n- FLOPs per step: " << formatFlops(f.perStep)
        << " (hardware, with recomputation: " << formatFlops(f.hardwarePerStep)
        << ")\n- FLOPs per token: " << formatFlops(f.perToken) << '\n';
    if (f.stepTimeS > 0)
        out << "- Step time: " << stepTimeSummary(f) << '\n';
    out << "- Formula: " << f.formula << "\n\n## How each number was computed\n\n";
    for (const Component& c : r.components)
        out << "- **" << c.label << "** (" << formatBytes(c.bytes) << "): " << c.explanation << " `" << c.formula
            << "`\n";
    out << "\nOverhead, part by part:\n\n";
    for (const Component& c : r.overheadParts)
        out << "- " << c.label << ": " << formatBytes(c.bytes) << ". " << c.explanation << " `" << c.formula << "`\n";
    if (r.hostBytes > 0)
        out << "\nHost memory per GPU process: " << formatBytes(r.hostBytes) << " (" << r.hostFormula << ").\n";
    if (!r.warnings.empty()) {
        out << "\n## Warnings\n\n";
        for (const std::string& w : r.warnings)
            out << "- " << markdownEscape(w) << '\n'; // unknown keys are the user's
    }
    out << "\n_Made with VRAM Lab from the scenario above; every figure is reproducible with `vramlab-cli "
           "estimate`._\n";
    return out.str();
}

void appendSweepCsvHeader(std::string& out, SweepParam param, char sep)
{
    out += csvField(keyPathOf(param));
    for (ComponentKind k : kReportComponents)
        out.append(1, sep).append(componentKey(k));
    out.append(1, sep).append("total").append(1, sep).append("peak").append(1, sep).append("fits");
    out.append(1, sep).append("lower_bound\n");
}

namespace {

/// Width of each column of the sweep table: its header, or a size ("1023.99 GiB").
constexpr std::size_t kSweepSizeWidth = 11;

std::size_t sweepColumnWidth(std::string_view header)
{
    return std::max(header.size(), kSweepSizeWidth);
}

void appendRight(std::string& out, std::string_view text, std::size_t width)
{
    out.append(width > text.size() ? width - text.size() : 0, ' ').append(text);
}

} // namespace

void appendSweepTableHeader(std::string& out, SweepParam param)
{
    const std::string key = keyPathOf(param);
    appendRight(out, key, sweepColumnWidth(key));
    for (ComponentKind k : kReportComponents)
        appendRight(out.append(2, ' '), componentKey(k), sweepColumnWidth(componentKey(k)));
    for (std::string_view h : { "total", "peak" })
        appendRight(out.append(2, ' '), h, sweepColumnWidth(h));
    out.append("  fits\n");
}

void appendSweepTableRow(std::string& out, SweepParam param, const SweepPoint& pt)
{
    appendRight(out, formatCount(pt.value), sweepColumnWidth(keyPathOf(param)));
    for (std::size_t i = 0; i < kReportComponents.size(); ++i)
        appendRight(out.append(2, ' '), formatBytes(pt.componentBytes[i]),
            sweepColumnWidth(componentKey(kReportComponents[i])));
    appendRight(out.append(2, ' '), formatBytes(pt.total), sweepColumnWidth("total"));
    appendRight(out.append(2, ' '), formatBytes(pt.peak), sweepColumnWidth("peak"));
    out.append("  ").append(!pt.hasVerdict ? "-" : !pt.fits ? "no" : pt.lowerBound ? "maybe (lower bound)" : "yes");
    out.append(1, '\n');
}

void appendSweepCsvRow(std::string& out, const SweepPoint& pt, char sep)
{
    // The row in a local buffer with std::to_chars, then one append: about 300 instructions
    // a row, so a million rows take a fraction of a second.
    char row[12 * 21 + 16]; // 11 numbers of at most 20 characters with their separators, "false,false\n"
    char* at = row;
    char* const end = row + sizeof row;
    auto put = [&](char c) {
        if (at != end)
            *at++ = c;
    };
    auto number = [&](Count v) { at = std::to_chars(at, end, v).ptr; };
    number(pt.value);
    for (Bytes b : pt.componentBytes) {
        put(sep);
        number(b);
    }
    put(sep);
    number(pt.total);
    put(sep);
    number(pt.peak);
    put(sep);
    for (const char* f = pt.fitsCsv(); *f != '\0'; ++f)
        put(*f);
    put(sep);
    for (const char* f = pt.lowerBound ? "true" : "false"; *f != '\0'; ++f)
        put(*f);
    put('\n');
    out.append(row, static_cast<size_t>(at - row));
}

std::string sweepCsv(SweepParam param, const std::vector<SweepPoint>& points, char sep)
{
    std::string out;
    appendSweepCsvHeader(out, param, sep);
    for (const SweepPoint& pt : points)
        appendSweepCsvRow(out, pt, sep);
    return out;
}

std::string columnsCsv(const std::vector<ChartColumn>& columns)
{
    std::ostringstream out;
    out << "column";
    for (ComponentKind k : kReportComponents)
        out << ',' << componentKey(k);
    out << ",total,peak,fits,lower_bound\n";
    for (const ChartColumn& c : columns) {
        out << csvField(c.label); // labels come from file names
        for (ComponentKind k : kReportComponents) {
            out << ',';
            if (c.report)
                out << c.report->bytes(k);
        }
        if (c.report)
            out << ',' << c.report->total << ',' << c.report->peak << ',' << c.report->fitsCsv() << ','
                << (c.report->lowerBound.empty() ? "false" : "true") << '\n';
        else
            out << ",,,invalid,\n";
    }
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
        out << ',' << e.total() << ',' << csvField(e.what) << '\n';
    }
    return out.str();
}

} // namespace vramlab
