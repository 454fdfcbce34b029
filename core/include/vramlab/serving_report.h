// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/serving_model.h"
#include "vramlab/serving_speed.h"

#include <nlohmann/json.hpp>

#include <string>

namespace vramlab {

/// The report's `serving` object (README, Serving): the budget, what takes it, the cache and
/// the engine's startup lines; `speed` when the GPU has a bandwidth and a peak.
nlohmann::json servingToJson(const ServingEstimate& estimate, const ServingSpeed& speed);

/// The text report of `vramlab-cli serve-estimate`: the budget per rank, the cache, the
/// engine's own startup lines reproduced, the roofline speed.
std::string servingText(const std::string& scenarioName, const ServingEstimate& estimate, const ServingSpeed& speed);

} // namespace vramlab
