// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/planner.h"
#include "vramlab/report.h"
#include "vramlab/scenario.h"
#include "vramlab/serving_chart.h"
#include "vramlab/serving_plan.h"
#include "vramlab/step_timeline.h"
#include "vramlab/sweep.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vramlab {

/// What each chart shows, computed once here for both its picture and its CSV (the
/// window, `vramlab --export` and the CLI draw or write these; none recomputes a range).
/// Every function throws InputError (or SizeOverflow) where the chart cannot be made: the
/// caller shows the message or fails with it, never draws it as an axis label.

/// The charts VRAM Lab draws, by their command-line names: the Serving page's memory budget
/// ("serving-budget") and concurrency curve ("serving-concurrency") need a serving scenario;
/// "plan" is the Plan tab's ranked table (CSV or Markdown, no picture).
enum class ChartKind {
    Breakdown,
    SweepSequence,
    SweepBatch,
    CompareMethods,
    CompareZero,
    CompareFiles,
    Timeline,
    ServingBudget,
    ServingConcurrency,
    Plan
};

std::optional<ChartKind> parseChartKind(std::string_view name);
std::string_view chartKindName(ChartKind kind);
std::vector<std::string_view> chartKindNames();

/// The swept key of a sweep chart: sequence length or micro-batch in training, context
/// length or batch when serving.
SweepParam sweepParamFor(ChartKind kind, const Scenario& scenario);
/// The x-axis of a sweep: "sequence length (tokens)".
std::string sweepAxisLabel(SweepParam param);

/// The values a sweep chart samples.
struct SweepRange {
    Count from = 1;
    Count to = 1;
    int points = 64;
    bool logScale = true;
};
/// Lengths 128..131072, batches 1..512, 64 log-spaced points. With learned positions the
/// sequence length stops at model.max_position_embeddings; below 128 the range starts
/// three octaves lower (at least 1), so a small model still gets a curve.
SweepRange sweepRange(const Scenario& scenario, SweepParam param);

/// A sweep chart's data: its points and, with a GPU, the exact first value that does not
/// fit (from the fit search, not just the first sampled point past it).
struct SweepSeries {
    SweepParam param = SweepParam::SequenceLength;
    SweepRange range;
    std::vector<SweepPoint> points;
    std::optional<Count> boundary;
    Count current = 0; ///< the scenario's own value of the swept key (marked on the chart)
};
SweepSeries sweepSeries(const Scenario& scenario, SweepParam param);

/// One bar of a bar chart: a labelled scenario's report, or why it is not a valid configuration.
struct ChartColumn {
    std::string label;
    std::optional<Report> report; ///< empty: not a valid configuration
    std::string error;
};
/// Estimates `scenario`; an invalid one becomes a column with its error (the bar says why).
ChartColumn chartColumn(std::string label, const Scenario& scenario);
/// The method variants of a scenario: inference (batch 1 at the training length), full
/// training, LoRA and QLoRA (fp32 becomes mixed bf16 for QLoRA).
std::vector<ChartColumn> methodVariants(const Scenario& scenario);
/// ZeRO stages 0-3 of the scenario trained without parameter offload (at 8 data-parallel
/// replicas when it has one).
std::vector<ChartColumn> zeroVariants(const Scenario& scenario);
/// The columns of a bar chart kind (breakdown: one; compare-files: one per scenario,
/// named by `labels` or else by the scenario's name). Throws for the other kinds.
std::vector<ChartColumn> chartColumns(
    ChartKind kind, const std::vector<Scenario>& scenarios, const std::vector<std::string>& labels);

/// The timeline chart's data: training step `step` (1 or 2) of the report's GPU, the
/// report's own step-2 recording when it has one (estimate() with explain), else
/// simulated here. Throws for serving and beyond kMaxTimelineEvents.
StepTimeline timelineSeries(const Report& report, int step = 2);

/// The Serving page's budget chart as CSV: one row per bar (rank or llama.cpp device) and
/// segment, bottom to top, with its bytes:
/// `bar,segment,label,bytes,gib,capacity_bytes` (capacity empty for llama.cpp's CPU).
std::string servingBudgetCsv(const ServingBudgetChart& chart);
/// The concurrency curve as CSV: `context_tokens,max_concurrency,startup_fails,current`.
std::string concurrencyCsv(const ConcurrencyCurve& curve);

/// The serving budget chart of a serving scenario (servingEstimate, then servingBudgetChart);
/// throws InputError for a scenario that does not serve.
ServingBudgetChart servingBudgetChartOf(const Scenario& scenario);
/// The concurrency curve of a serving scenario; throws InputError for one that does not serve.
ConcurrencyCurve concurrencyCurveOf(const Scenario& scenario);
/// The serving verdict of a serving scenario ("STARTS: ..."); throws as servingBudgetChartOf.
std::string servingVerdictOf(const Scenario& scenario);

/// The planner's ranked setups as CSV, one row per fitting setup, fastest first:
/// `rank,zero_stage,tensor_parallel,sequence_parallel,pipeline_parallel,expert_parallel,
/// micro_batch,accumulation,checkpointing,offload_optimizer,offload_params,summary,peak_bytes,
/// fits,step_time_s,tokens_per_s,why`.
std::string planCsv(const PlanResult& result);
/// The same rows as a Markdown table (peak in GiB and bytes).
std::string planMarkdown(const PlanResult& result);
/// The plan the Plan tab shows by default for `scenario`: its GPU count and global batch.
PlanResult defaultPlan(const Scenario& scenario);

/// The serving planner's setups as CSV, those that fit first (ranked by TPOT), then the rest
/// (rank empty, why they do not fit): `rank,tensor_parallel,pipeline_parallel,data_parallel,
/// kv_cache_dtype,summary,fits,requests_held,batch_per_replica,kv_cache_tokens_per_replica,
/// ttft_s,tpot_s,tokens_per_s_all_replicas,why`.
std::string servingPlanCsv(const ServingPlanResult& result);
/// The same rows as a Markdown table.
std::string servingPlanMarkdown(const ServingPlanResult& result);
/// The serving plan's target as the Plan tab and `vramlab-cli plan` start it: the scenario's
/// GPUs, one request of the engine's max_model_len, a prompt of min(1,024, that), no limits.
ServingPlanRequest defaultServingPlanRequest(const Scenario& scenario);
/// servingPlan at defaultServingPlanRequest (throws InputError for a scenario that does not serve).
ServingPlanResult defaultServingPlan(const Scenario& scenario);

/// The chart's data as CSV (breakdownCsv, sweepCsv, columnsCsv, timelineCsv, servingBudgetCsv,
/// concurrencyCsv or planCsv).
std::string chartCsv(ChartKind kind, const std::vector<Scenario>& scenarios, const std::vector<std::string>& labels);

} // namespace vramlab
