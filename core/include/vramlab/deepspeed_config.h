// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/scenario.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace vramlab {

/// What applying a framework's config did: each mapped key with the scenario key it set, and each key left out
/// with why (it changes no GPU memory, or "auto" kept the scenario's value).
struct ConfigImport {
    std::vector<std::string> applied; ///< "zero_optimization.stage = 3 -> run.parallelism.zero_stage"
    std::vector<std::string> ignored; ///< "scheduler: the learning-rate schedule keeps no GPU memory"
};
using DeepSpeedImport = ConfigImport;

/// Applies a DeepSpeed JSON config (the keys of DeepSpeed v0.16.4, runtime/config.py and runtime/zero/config.py
/// @e2dc3eeb) to the scenario's run, which becomes framework "deepspeed"; the model and the GPUs stay the
/// scenario's (the world size is the launcher's). Hugging Face's "auto" keeps the scenario's value, except the
/// buckets Trainer derives from the model (integrations/deepspeed.py: reduce_bucket_size hidden^2, ZeRO-3's
/// prefetch 0.9 hidden^2 and persistence threshold 10 hidden). Throws InputError naming the config's key for a
/// value that changes memory in a way VRAM Lab does not model (NVMe offload, ZeRO++ quantization, hpZ, MiCS, a
/// non-Adam optimizer, DeepSpeed's own activation checkpointing on the CPU, ...) and for a key it does not know.
DeepSpeedImport applyDeepSpeedConfig(Scenario& scenario, const nlohmann::json& config);

} // namespace vramlab
