// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/run_spec.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace vramlab {

/// Reads the run.serving object (refusing any key it does not know or that belongs to another
/// engine): the scenario field table's reader of that key.
void readServing(const nlohmann::json& value, RunSpec& out);
/// run.serving and run.mode "serving" go together: refused otherwise. `run` is the run object as read.
void checkServingMode(const nlohmann::json& run, const RunSpec& read);

/// The explicit run.serving object, or null without one (the key is then left out).
nlohmann::json servingJson(const RunSpec& run);

/// The engine version used when run.serving.engine_version is not given.
std::string defaultEngineVersion(ServingEngine engine);

/// A recurrent state's dtype as vLLM's MambaDType and the Hugging Face configs (Qwen3.5's mamba_ssm_dtype) name it:
/// float32, float16 or bfloat16; nullopt for any other name ("auto" included).
std::optional<DType> mambaDtypeNamed(const std::string& name);

/// Whether `flag` is a key of run.serving for `engine` (its own flags and the common ones).
bool isServingFlag(const std::string& flag, ServingEngine engine);

} // namespace vramlab
