// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/planner.h"
#include "vramlab/report.h"

#include <nlohmann/json.hpp>

namespace vramlab {

/// The report as spec/scenario-v1.md defines it (format "vramlab.report", version 1),
/// extended with `components` (formulas), `overhead_parts`, `activation_tensors`,
/// `flops` details, `time`, `host_bytes` and `gpu`.
nlohmann::ordered_json reportToJson(const Report& report);
/// `vramlab-cli timeline --json`: the step's events with the bytes alive per category.
nlohmann::ordered_json timelineToJson(const StepTimeline& timeline, const StepInputs& inputs);
/// `vramlab-cli plan --json`: the ranked setups with their step-time parts.
nlohmann::ordered_json planToJson(const PlanResult& plan);

} // namespace vramlab
