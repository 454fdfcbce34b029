// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/deepspeed_config.h"
#include "vramlab/scenario.h"

#include <nlohmann/json.hpp>

namespace vramlab {

/// Applies a TRL config (the YAML of `trl sft --config sft.yaml`, read by parseYamlText) as TRL v0.25.1 and
/// transformers v4.57.1 read it (trl/scripts/utils.py TrlParser: each key is the default of the field of that name
/// in ScriptArguments, SFTConfig or ModelConfig; what the file leaves out is that version's default) to the
/// scenario's run, which becomes framework "hf-transformers" (or "deepspeed" with an inline `deepspeed` config):
/// the batch and its shape (max_length, packing, padding-free), the precision that the load dtype and bf16/fp16
/// make together, the optimizer, gradient checkpointing, LoRA/QLoRA/DoRA, Liger's fused loss, and the GPU count of
/// `num_processes`. The model and the GPU stay the scenario's. Throws InputError naming the config's key for a value
/// VRAM Lab does not model (8-bit loading, torch.compile, FSDP, an optimizer it has no states for, ...), for one that
/// `trl sft` itself would reject, and for a key that is neither a field of those dataclasses nor an accelerate
/// launch option (`trl sft` hands those to accelerate, which stops on an unknown one).
ConfigImport applyTrlConfig(Scenario& scenario, const nlohmann::json& config);

} // namespace vramlab
