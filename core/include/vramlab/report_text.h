// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/chart_data.h"
#include "vramlab/report.h"
#include "vramlab/scenario.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace vramlab {

/// One cell of a report table, as data: the Markdown and HTML reports render the same
/// cells, each escaping the user's strings its own way (never by re-reading Markdown).
struct ReportCell {
    std::string user; ///< a user string (scenario, model or GPU name), shown first, always escaped
    std::string text; ///< generated text (numbers, units, formulas), shown after `user`
    std::string code; ///< shown as " (`code`)" after the text when not empty (a preset key)
    bool strong = false; ///< bold (the total row)
};

/// A report table: a header, which columns are numbers (right-aligned), and rows of cells.
struct ReportTable {
    std::vector<std::string> header;
    std::vector<bool> numeric;
    std::vector<std::vector<ReportCell>> rows;
};

/// One of the three peak counters (allocated, reserved, device) with what it means.
struct CounterRow {
    std::string_view key; ///< peak_allocated, peak_reserved, peak_device
    std::string_view label;
    Bytes bytes = 0;
    std::string_view what; ///< which GPU counter it matches
};
/// The three peaks users compare with GPU counters, in that order: the caching-allocator
/// replay's (EstimateOptions::replayAllocator); none when the report was not replayed.
std::vector<CounterRow> counterRows(const Report& report);

/// The breakdown: component, size, bytes, share, formula; then the total, the peak and the
/// three counters when replayed.
ReportTable breakdownTable(const Report& report);
/// The scenario's settings: model shapes and how it runs.
ReportTable settingsTable(const Scenario& scenario);
/// A table as Markdown: user strings through markdownEscape(), pipes escaped elsewhere.
std::string markdownTable(const ReportTable& table);
/// The verdict line: "Fits on GPU (80 GiB): peak ..., ... free." as a cell (GPU name as user text).
ReportCell verdictCell(const Report& report);

/// What a peak is judged against: "75.67 GiB usable (79.65 GiB less the 5%
/// margin)" when run.safety_margin
/// keeps some free, "79.65 GiB" when it is 0; empty without a GPU.
std::string capacityText(const Report& report);

/// The breakdown as CSV: key,component,bytes,gib,share_percent,formula (one row per
/// component, then the total and the peak).
std::string breakdownCsv(const Report& report);
/// One row per event of the simulated step: phase, micro-batch, layer, bytes per category, total.
std::string timelineCsv(const StepTimeline& timeline);
/// One row per sweep point: the swept key, bytes per component, total, peak, fits
/// (`separator` '\t' for the CLI's table).
std::string sweepCsv(SweepParam param, const std::vector<SweepPoint>& points, char separator = ',');
/// sweepCsv's header line and one of its rows, appended to `out` (the CLI streams a
/// million rows through a small buffer instead of one string).
void appendSweepCsvHeader(std::string& out, SweepParam param, char separator = ',');
void appendSweepCsvRow(std::string& out, const SweepPoint& point, char separator = ',');
/// The same points for people (vramlab-cli sweep without --csv or --json): aligned columns,
/// the swept value with thousands separators, sizes with units ("48.17 GiB"), fits yes/no.
void appendSweepTableHeader(std::string& out, SweepParam param);
void appendSweepTableRow(std::string& out, SweepParam param, const SweepPoint& point);
/// One row per bar: its label, bytes per component, total, peak, fits ("invalid" and empty
/// cells for a column that is not a valid configuration).
std::string columnsCsv(const std::vector<ChartColumn>& columns);
/// The breakdown as a Markdown table (component, size, bytes, share, formula).
std::string breakdownMarkdown(const Report& report);
/// The scenario's settings as a Markdown table (model shapes and how it runs).
std::string settingsMarkdown(const Scenario& scenario);
/// A serving scenario's memory budget: one row per rank (or llama.cpp device), one column per
/// segment (weights, activation peak, ..., KV cache, unused), then what the engine takes.
ReportTable servingBudgetTable(const ServingBudgetChart& chart);

/// What a review report says about a serving scenario, for its Markdown and HTML forms.
struct ServingReview {
    std::string heading; ///< "Serving: vllm 0.6.4"
    std::string verdict; ///< servingVerdict(): "STARTS: 31,312 KV tokens, ..."
    std::vector<std::string> facts; ///< "KV cache tokens: 31,312", "GPU blocks: 1,957", ...
    ReportTable budget;
    std::vector<std::string> logLines; ///< the engine's startup lines
    std::string error; ///< the engine refuses the scenario: why (the rest is empty)
};
/// The review's serving section; none for a scenario without run.serving.
std::optional<ServingReview> servingReview(const Scenario& scenario);
/// The same as Markdown ("## Serving: ..."), empty without run.serving.
std::string servingReviewMarkdown(const Scenario& scenario);

/// A review report: settings, verdict, breakdown, chart images (caption, relative path),
/// FLOPs and step time, every formula and assumption, warnings.
std::string reviewMarkdown(
    const Scenario& scenario, const Report& report, const std::vector<std::pair<std::string, std::string>>& images);

} // namespace vramlab
