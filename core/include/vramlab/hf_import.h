// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/scenario.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace vramlab {

/// A model read from a Hugging Face `config.json`.
struct HfImport {
    ModelSpec model;
    std::string modelType;             ///< the config's model_type
    std::vector<std::string> warnings; ///< unknown keys, defaults assumed
};

/// Reads Llama, Mistral, Mixtral, Qwen2, Gemma (1/2/3), GPT-2, Phi-3 and DeepSeek-V3
/// configs (a multimodal config's `text_config` is used). Missing required keys throw
/// InputError naming them; unknown keys become warnings.
HfImport importHfConfig(const nlohmann::json& config);

/// A training scenario around an imported model (mixed-bf16, AdamW, flash attention,
/// sequence length min(4096, max_position_embeddings)).
Scenario scenarioFromHf(const HfImport& imported, const std::string& name);

} // namespace vramlab
