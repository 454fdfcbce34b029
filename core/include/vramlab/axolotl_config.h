// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/deepspeed_config.h"
#include "vramlab/scenario.h"

#include <nlohmann/json.hpp>

namespace vramlab {

/// Applies an axolotl training config (the YAML of `axolotl train config.yml`, read by parseYamlText) as axolotl
/// v0.13.0 reads it (utils/schemas/config.py and utils/config/__init__.py normalize_config: what the file leaves out
/// is that version's default; it runs transformers v4.57.1's Trainer, PEFT and bitsandbytes 0.48.2) to the
/// scenario's run, which becomes framework "hf-transformers" (or "deepspeed" with an inline `deepspeed` config): the
/// batch and its shape (sequence_len, multipack sample packing, batch flattening), the precision bf16 "auto" resolves
/// to on the scenario's GPU, the optimizer, gradient checkpointing, LoRA/QLoRA/DoRA as axolotl loads them (PEFT's
/// preparation with the norms and embeddings cast back to 16 bits), and Liger's or Cut Cross Entropy's fused loss.
/// The model and the GPUs stay the scenario's. Keys axolotl's schema does not have are listed as dropped, as axolotl
/// drops them. Throws InputError naming the key for what axolotl itself refuses and for what changes GPU memory in a
/// way VRAM Lab does not model (its LoRA kernels, unsloth and tiled-MLP patches, FSDP, tensor or context parallelism,
/// activation offloading, torch.compile, RL trainers, ...).
ConfigImport applyAxolotlConfig(Scenario& scenario, const nlohmann::json& config);

} // namespace vramlab
