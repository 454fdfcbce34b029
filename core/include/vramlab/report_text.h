// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/report.h"
#include "vramlab/scenario.h"

#include <string>
#include <utility>
#include <vector>

namespace vramlab {

/// The breakdown as CSV: key,component,bytes,gib,share_percent,formula (one row per
/// component, then the total and the peak).
std::string breakdownCsv(const Report& report);
/// One row per event of the simulated step: phase, micro-batch, layer, bytes per category, total.
std::string timelineCsv(const StepTimeline& timeline);
/// The breakdown as a Markdown table (component, size, bytes, share, formula).
std::string breakdownMarkdown(const Report& report);
/// The scenario's settings as a Markdown table (model shapes and how it runs).
std::string settingsMarkdown(const Scenario& scenario);
/// A review report: settings, verdict, breakdown, chart images (caption, relative path),
/// FLOPs and step time, every formula and assumption, warnings.
std::string reviewMarkdown(const Scenario& scenario, const Report& report,
                           const std::vector<std::pair<std::string, std::string>>& images);

} // namespace vramlab
