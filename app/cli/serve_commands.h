// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <vector>

namespace vramlab::cli {

/// True when the command's scenario file has run.mode "serving" (estimate and fit hand it over).
bool isServingScenario(const std::vector<std::string>& args);
/// Throws InputError for a serving scenario given to a training-only command.
void refuseServingScenario(const std::vector<std::string>& args, const char* command);
int runServeEstimate(const std::vector<std::string>& args);
/// fit on a serving scenario: --max concurrency [--context L] | --max context [--concurrency C] |
/// --min-gpus [--concurrency C] | --max gpu_layers.
int runServeFit(const std::vector<std::string>& args);
/// plan on a serving scenario: --gpus G --concurrency C [--context L] [--prompt P]
/// [--max-tpot-ms T] [--top K] [--json]: vLLM/SGLang deployments ranked by TPOT.
int runServePlan(const std::vector<std::string>& args);

} // namespace vramlab::cli
