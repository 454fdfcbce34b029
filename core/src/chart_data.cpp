// SPDX-License-Identifier: MIT
#include "vramlab/chart_data.h"

#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/fit.h"
#include "vramlab/report_text.h"
#include "vramlab/text_escape.h"

#include <cstdio>
#include <sstream>

#include <algorithm>
#include <utility>

namespace vramlab {

namespace {

struct KindName {
    ChartKind kind;
    std::string_view name;
};

constexpr KindName kKinds[] = {
    { ChartKind::Breakdown, "breakdown" },
    { ChartKind::SweepSequence, "sweep-seq" },
    { ChartKind::SweepBatch, "sweep-batch" },
    { ChartKind::CompareMethods, "compare-methods" },
    { ChartKind::CompareZero, "compare-zero" },
    { ChartKind::CompareFiles, "compare-files" },
    { ChartKind::Timeline, "timeline" },
    { ChartKind::ServingBudget, "serving-budget" },
    { ChartKind::ServingConcurrency, "serving-concurrency" },
    { ChartKind::Plan, "plan" },
};

constexpr Count kLengthFrom = 128;
constexpr Count kLengthTo = 131072;
constexpr Count kBatchTo = 512;

bool isLength(SweepParam p)
{
    return p == SweepParam::SequenceLength || p == SweepParam::ContextLength;
}

} // namespace

std::optional<ChartKind> parseChartKind(std::string_view name)
{
    for (const KindName& k : kKinds)
        if (k.name == name)
            return k.kind;
    return std::nullopt;
}

std::string_view chartKindName(ChartKind kind)
{
    for (const KindName& k : kKinds)
        if (k.kind == kind)
            return k.name;
    return {};
}

std::vector<std::string_view> chartKindNames()
{
    std::vector<std::string_view> names;
    for (const KindName& k : kKinds)
        names.push_back(k.name);
    return names;
}

SweepParam sweepParamFor(ChartKind kind, const Scenario& sc)
{
    const bool training = sc.run.mode == Mode::Training;
    if (kind == ChartKind::SweepSequence)
        return training ? SweepParam::SequenceLength : SweepParam::ContextLength;
    return training ? SweepParam::MicroBatchSize : SweepParam::BatchSize;
}

std::string sweepAxisLabel(SweepParam p)
{
    switch (p) {
    case SweepParam::SequenceLength:
        return "sequence length (tokens)";
    case SweepParam::MicroBatchSize:
        return "micro-batch (samples)";
    case SweepParam::ContextLength:
        return "context length (tokens)";
    case SweepParam::BatchSize:
        return "batch (sequences)";
    default:
        return keyPathOf(p);
    }
}

SweepRange sweepRange(const Scenario& sc, SweepParam p)
{
    SweepRange r;
    r.from = isLength(p) ? kLengthFrom : 1;
    r.to = isLength(p) ? kLengthTo : kBatchTo;
    // Learned positions have no row past the table: the sequence stops there (as fitMax does).
    if (p == SweepParam::SequenceLength && sc.model.position == PositionKind::Learned)
        r.to = std::min(r.to, std::max<Count>(1, sc.model.maxPositionEmbeddings));
    if (r.to < r.from)
        r.from = std::max<Count>(1, r.to / 8);
    return r;
}

SweepSeries sweepSeries(const Scenario& sc, SweepParam p)
{
    SweepSeries s;
    s.param = p;
    s.range = sweepRange(sc, p);
    s.points = sweep(sc, p, s.range.from, s.range.to, s.range.points, s.range.logScale);
    s.current = valueOf(sc, p);
    if (sc.run.gpu) {
        const FitResult fit = fitMax(sc, p);
        if (fit.nextReport)
            s.boundary = fit.nextValue;
    }
    return s;
}

ChartColumn chartColumn(std::string label, const Scenario& sc)
{
    ChartColumn c { std::move(label), std::nullopt, {} };
    try {
        c.report = estimate(sc);
    } catch (const std::exception& e) {
        c.error = e.what();
    }
    return c;
}

std::vector<ChartColumn> methodVariants(const Scenario& base)
{
    Scenario inf = base, full = base, lora = base, qlora = base;
    inf.run.mode = Mode::Inference;
    inf.run.inference.batchSize = 1;
    inf.run.inference.contextLength = base.run.sequenceLength;
    for (Scenario* s : { &full, &lora, &qlora })
        s->run.mode = Mode::Training;
    full.run.finetune.method = FinetuneMethod::Full;
    lora.run.finetune.method = FinetuneMethod::Lora;
    qlora.run.finetune.method = FinetuneMethod::Qlora;
    if (qlora.run.precision == Precision::Fp32)
        qlora.run.precision = Precision::MixedBf16;
    const std::string rank = std::to_string(base.run.finetune.rank);
    std::vector<ChartColumn> cols;
    cols.push_back(chartColumn("Inference", inf));
    cols.push_back(chartColumn("Full training", full));
    cols.push_back(chartColumn("LoRA r=" + rank, lora));
    cols.push_back(chartColumn("QLoRA r=" + rank, qlora));
    return cols;
}

std::vector<ChartColumn> zeroVariants(const Scenario& base)
{
    Scenario sc = base;
    sc.run.mode = Mode::Training;
    sc.run.parallelism.offloadParams = false;
    if (sc.run.parallelism.dataParallel() <= 1)
        sc.run.parallelism.gpus = 8 * sc.run.parallelism.tensorParallel * sc.run.parallelism.pipelineParallel;
    const std::string gpus = std::to_string(sc.run.parallelism.gpus);
    std::vector<ChartColumn> cols;
    for (int stage = 0; stage <= 3; ++stage) {
        sc.run.parallelism.zeroStage = stage;
        cols.push_back(
            chartColumn(stage == 0 ? "DP (no ZeRO), " + gpus + " GPUs" : "ZeRO-" + std::to_string(stage), sc));
    }
    return cols;
}

std::vector<ChartColumn> chartColumns(
    ChartKind kind, const std::vector<Scenario>& scenarios, const std::vector<std::string>& labels)
{
    if (scenarios.empty())
        throw InputError("--chart", "expected a scenario to chart");
    switch (kind) {
    case ChartKind::Breakdown:
        return { chartColumn(scenarios.front().model.name, scenarios.front()) };
    case ChartKind::CompareMethods:
        return methodVariants(scenarios.front());
    case ChartKind::CompareZero:
        return zeroVariants(scenarios.front());
    case ChartKind::CompareFiles: {
        std::vector<ChartColumn> cols;
        for (size_t i = 0; i < scenarios.size(); ++i)
            cols.push_back(chartColumn(i < labels.size() ? labels[i] : scenarios[i].name, scenarios[i]));
        return cols;
    }
    default:
        throw InputError("--chart", "expected a bar chart, got " + std::string(chartKindName(kind)));
    }
}

StepTimeline timelineSeries(const Report& r, int step)
{
    if (!r.stepInputs.training)
        throw InputError("run.mode", "expected training: the timeline chart simulates a training step");
    if (step == 2 && !r.timeline.events.empty())
        return r.timeline; // recorded once by estimate() for the peak
    return simulateStep(r.stepInputs, step);
}

std::string chartCsv(ChartKind kind, const std::vector<Scenario>& scenarios, const std::vector<std::string>& labels)
{
    if (scenarios.empty())
        throw InputError("--chart", "expected a scenario to chart");
    const Scenario& sc = scenarios.front();
    switch (kind) {
    case ChartKind::Breakdown:
        return breakdownCsv(estimate(sc));
    case ChartKind::Timeline:
        return timelineCsv(timelineSeries(estimate(sc)));
    case ChartKind::SweepSequence:
    case ChartKind::SweepBatch: {
        const SweepSeries s = sweepSeries(sc, sweepParamFor(kind, sc)); // as the picture: same range, same errors
        return sweepCsv(s.param, s.points);
    }
    case ChartKind::ServingBudget:
        return servingBudgetCsv(servingBudgetChartOf(sc));
    case ChartKind::ServingConcurrency:
        return concurrencyCsv(concurrencyCurveOf(sc));
    case ChartKind::Plan:
        return sc.run.serving ? servingPlanCsv(defaultServingPlan(sc)) : planCsv(defaultPlan(sc));
    default:
        return columnsCsv(chartColumns(kind, scenarios, labels));
    }
}

namespace {

/// Bytes as GiB with three decimals ("14.960").
std::string gibText(Bytes b)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(b) / static_cast<double>(Bytes(1) << 30));
    return buf;
}

/// A number with up to six significant digits, no exponent below 1e15 ("0.4375", "38.3112").
std::string decimal(double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    if (std::string_view(buf).find('e') != std::string_view::npos)
        std::snprintf(buf, sizeof buf, "%.3f", v);
    return buf;
}

const char* yesNo(bool b)
{
    return b ? "true" : "false";
}

void requireServing(const Scenario& sc)
{
    if (!sc.run.serving)
        throw InputError("run.mode", "expected \"serving\": the Serving charts show a serving engine's budget");
}

} // namespace

std::string servingBudgetCsv(const ServingBudgetChart& chart)
{
    std::ostringstream out;
    out << "bar,segment,label,bytes,gib,capacity_bytes\n";
    for (const ServingBar& bar : chart.bars)
        for (const ServingSegment& s : bar.segments) {
            out << csvField(bar.label) << ',' << s.key << ',' << csvField(s.label) << ',' << s.bytes << ','
                << gibText(s.bytes) << ',';
            if (bar.capacityBytes)
                out << *bar.capacityBytes;
            out << '\n';
        }
    return out.str();
}

std::string concurrencyCsv(const ConcurrencyCurve& curve)
{
    std::ostringstream out;
    out << "context_tokens,max_concurrency,startup_fails,current\n";
    for (const ConcurrencyPoint& p : curve.points)
        out << p.context << ',' << decimal(p.concurrency) << ',' << yesNo(p.startupFails) << ','
            << yesNo(p.context == curve.current.context) << '\n';
    return out.str();
}

ServingBudgetChart servingBudgetChartOf(const Scenario& sc)
{
    requireServing(sc);
    return servingBudgetChart(sc.run, servingEstimate(sc.model, sc.run));
}

ConcurrencyCurve concurrencyCurveOf(const Scenario& sc)
{
    requireServing(sc);
    return concurrencyCurve(sc.model, sc.run, servingEstimate(sc.model, sc.run));
}

std::string servingVerdictOf(const Scenario& sc)
{
    requireServing(sc);
    return servingVerdict(servingEstimate(sc.model, sc.run));
}

std::string planCsv(const PlanResult& result)
{
    std::ostringstream out;
    out << "rank,zero_stage,tensor_parallel,sequence_parallel,pipeline_parallel,expert_parallel,micro_batch,"
           "accumulation,checkpointing,offload_optimizer,offload_params,summary,peak_bytes,fits,lower_bound,"
           "step_time_s,tokens_per_s,why\n";
    for (std::size_t i = 0; i < result.top.size(); ++i) {
        const PlanCandidate& c = result.top[i];
        out << i + 1 << ',' << c.zeroStage << ',' << c.tensorParallel << ',' << yesNo(c.sequenceParallel) << ','
            << c.pipelineParallel << ',' << c.expertParallel << ',' << c.microBatch << ',' << c.accumulation << ','
            << csvField(toString(c.checkpointing)) << ',' << yesNo(c.offloadOptimizer) << ',' << yesNo(c.offloadParams)
            << ',' << csvField(c.summary()) << ',' << c.peak << ',' << yesNo(c.fits) << ',' << yesNo(c.lowerBound)
            << ',' << decimal(c.time.total()) << ',' << decimal(c.tokensPerS) << ',' << csvField(c.why) << '\n';
    }
    return out.str();
}

std::string planMarkdown(const PlanResult& result)
{
    std::ostringstream out;
    out << "| # | Setup | Peak (GiB) | Peak (bytes) | Fits | Step time (s) | Tokens/s | Why |\n"
        << "|---:|---|---:|---:|---|---:|---:|---|\n";
    for (std::size_t i = 0; i < result.top.size(); ++i) {
        const PlanCandidate& c = result.top[i];
        out << "| " << i + 1 << " | " << markdownEscape(c.summary()) << " | " << gibText(c.peak) << " | " << c.peak
            << " | "
            << (!c.fits               ? "no"
                       : c.lowerBound ? "maybe (lower bound)"
                                      : "yes")
            << " | " << decimal(c.time.total()) << " | " << decimal(c.tokensPerS) << " | " << markdownEscape(c.why)
            << " |\n";
    }
    return out.str();
}

PlanResult defaultPlan(const Scenario& sc)
{
    PlanRequest req; // as the Plan tab opens: the scenario's GPUs and global batch, the top ten
    req.gpus = sc.run.parallelism.gpus;
    return plan(sc, req);
}

namespace {

/// Fitting setups ranked, then the others unranked, each with the function's row.
template <typename Row> void servingPlanRows(const ServingPlanResult& result, Row row)
{
    for (std::size_t i = 0; i < result.top.size(); ++i)
        row(std::to_string(i + 1), result.top[i]);
    for (const ServingPlanCandidate& c : result.unfit)
        row(std::string(), c);
}

std::string kvDtypeName(const ServingPlanCandidate& c)
{
    return c.kvCacheDtype ? std::string(toString(*c.kvCacheDtype)) : std::string("auto");
}

} // namespace

std::string servingPlanCsv(const ServingPlanResult& result)
{
    std::ostringstream out;
    out << "rank,tensor_parallel,pipeline_parallel,data_parallel,kv_cache_dtype,summary,fits,requests_held,"
           "batch_per_replica,kv_cache_tokens_per_replica,ttft_s,tpot_s,tokens_per_s_all_replicas,why\n";
    servingPlanRows(result, [&](const std::string& rank, const ServingPlanCandidate& c) {
        const bool timed = c.speed.available;
        out << rank << ',' << c.tensorParallel << ',' << c.pipelineParallel << ',' << c.dataParallel << ','
            << kvDtypeName(c) << ',' << csvField(c.summary()) << ',' << yesNo(c.fits) << ',' << c.requestsHeld << ','
            << c.batchPerReplica << ',' << c.estimate.kvCacheTokens << ',' << (timed ? decimal(c.speed.ttftS) : "")
            << ',' << (timed ? decimal(c.speed.tpotS) : "") << ',' << (timed ? decimal(c.tokensPerSAll()) : "") << ','
            << csvField(c.why) << '\n';
    });
    return out.str();
}

std::string servingPlanMarkdown(const ServingPlanResult& result)
{
    std::ostringstream out;
    out << "| # | Setup | Fits | Requests held | TTFT (s) | TPOT (s) | Tokens/s (all replicas) | Why |\n"
        << "|---:|---|---|---:|---:|---:|---:|---|\n";
    servingPlanRows(result, [&](const std::string& rank, const ServingPlanCandidate& c) {
        const bool timed = c.speed.available;
        out << "| " << rank << " | " << markdownEscape(c.summary()) << " | " << (c.fits ? "yes" : "no") << " | "
            << c.requestsHeld << " | " << (timed ? decimal(c.speed.ttftS) : "") << " | "
            << (timed ? decimal(c.speed.tpotS) : "") << " | " << (timed ? decimal(c.tokensPerSAll()) : "") << " | "
            << markdownEscape(c.why) << " |\n";
    });
    return out.str();
}

ServingPlanRequest defaultServingPlanRequest(const Scenario& sc)
{
    ServingPlanRequest req;
    req.gpus = sc.run.parallelism.gpus;
    req.concurrency = 1;
    req.context = servingEstimate(sc.model, sc.run).maxModelLen;
    req.promptTokens = std::min<Count>(req.context, 1024);
    return req;
}

ServingPlanResult defaultServingPlan(const Scenario& sc)
{
    return servingPlan(sc.model, sc.run, defaultServingPlanRequest(sc));
}

} // namespace vramlab
