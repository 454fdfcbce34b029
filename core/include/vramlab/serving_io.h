// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/run_spec.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace vramlab {

namespace detail {
class JsonObjectReader;
}

/// Reads run.serving when run.mode is "serving" (refusing it otherwise, and refusing any key
/// it does not know or that belongs to another engine). Called by readRun().
void readServing(detail::JsonObjectReader& run, RunSpec& out);

/// Writes run.mode "serving" and the explicit run.serving object, or removes run.serving.
void writeServing(const RunSpec& run, nlohmann::json& jr);

/// The engine version used when run.serving.engine_version is not given.
std::string defaultEngineVersion(ServingEngine engine);

} // namespace vramlab
