// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/deepspeed_config.h"
#include "vramlab/scenario.h"

#include <nlohmann/json.hpp>

namespace vramlab {

/// Applies a torchtitan training config (a train_configs/*.toml read by parseTomlText) as torchtitan@9dec370ad26b
/// reads it (torchtitan/config_manager.py: every key it leaves out takes that version's default) to the scenario:
/// the model becomes the preset of model.name "llama3" and its flavor, the run framework "torchtitan" with its
/// parallel dimensions (parallel_dims.py: data_parallel_shard_degree -1 fills the scenario's GPU count), FSDP2
/// where parallelize_llama.py applies it (with its bf16 parameters; without FSDP the model trains in fp32),
/// checkpointing, compile, float8, the pipeline schedule and micro-batches, loss parallelism and the optimizer.
/// The GPU and its count stay the scenario's (the launcher's NGPU). Throws InputError naming the config's key for
/// a value VRAM Lab does not model (CPU offload, compiled autograd, hand-written split points, another
/// schedule, fused_rmsnorm, delayed float8 scaling, ...) and for a key that version does not have.
ConfigImport applyTorchtitanConfig(Scenario& scenario, const nlohmann::json& config);

} // namespace vramlab
