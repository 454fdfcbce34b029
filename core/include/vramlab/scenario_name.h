// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/scenario.h"

#include <string>

namespace vramlab {

/// A name that says what the scenario is: "Llama 3 8B full fine-tune, 4,096 tokens, on 8x
/// H100 SXM5 80GB", "Qwen1.5-MoE-A2.7B QLoRA r16, 8,192 tokens, on 1x GeForce RTX 4090",
/// "Llama 3.1 8B served by vLLM on 1x GeForce RTX 3090". A model name without a size
/// (an import's model_type) gets its parameter count.
std::string describeScenario(const Scenario& scenario);

/// The scenario's name after an edit from `before` to `after`: while the name is empty or
/// still the description of the settings (the user never renamed it), it follows them;
/// a name the user chose stays.
void followSettings(const Scenario& before, Scenario& after);

} // namespace vramlab
