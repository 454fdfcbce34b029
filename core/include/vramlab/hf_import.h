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
    std::string modelType; ///< the config's model_type
    std::vector<std::string> warnings; ///< notes for the user (unknown keys are refused, not warned about)
};

/// Reads the families of hfFamilies() (hf_key_table.h): Llama (and SmolLM2), Mistral, Mixtral, Qwen2,
/// Qwen2-MoE, Qwen3, Qwen3-MoE, Gemma 1/2/3, GPT-2, Phi-3, DeepSeek-V2/V3, StarCoder2, Granite, OLMo-2,
/// OLMoE, gpt-oss, Granite MoE (a multimodal Gemma 3
/// config's `text_config` is used). Throws InputError naming the key for a missing required
/// key, an unknown model_type, a key the family's table does not account for (every one is
/// named), a value VRAM Lab cannot express, or a value beyond the scenario reader's limits.
HfImport importHfConfig(const nlohmann::json& config);

/// A training scenario around an imported model (mixed-bf16, AdamW, flash attention,
/// sequence length min(4096, max_position_embeddings)); an inference scenario for gpt-oss, whose
/// training activations are not modelled (model.clamped_swiglu).
Scenario scenarioFromHf(const HfImport& imported, const std::string& name);

} // namespace vramlab
