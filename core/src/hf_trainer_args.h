// SPDX-License-Identifier: MIT
#pragma once

// What transformers v4.57.1's Trainer does with the settings that TRL's and axolotl's configs both hand it: the
// optimizer name, the load dtype beside autocast, PEFT's module names, Liger's kernels (shared by the TRL and axolotl
// imports).

#include "vramlab/run_spec.h"

#include <optional>
#include <string>
#include <string_view>

namespace vramlab::detail {

/// What a padded micro-batch adds under sdpa or eager attention, said beside the shape the imports map: transformers
/// v4.57.1 builds a [b, 1, s, s] mask whenever a batch has padding (masking_utils.py sdpa_mask), and SDPA's
/// memory-efficient kernel keeps its 16-bit form for backward in each layer that is not checkpointed.
inline constexpr std::string_view kPaddingMaskCaveat
    = "; a batch with padding under sdpa or eager attention also holds a [b, 1, s, s] mask, and without gradient "
      "checkpointing each layer its 16-bit copy: not counted";

/// TrainingArguments.optim (training_args.py@8cb5963c OptimizerNames; trainer.py get_optimizer_cls_and_kwargs) as
/// the run's optimizer and implementation. Throws InputError(key) for a name VRAM Lab keeps no states of.
void applyTrainerOptimizer(RunSpec& run, const std::string& optim, const std::string& key);

/// The precision of a model loaded in `weights` (fp32, bf16 or fp16) under Trainer's autocast (bf16 or fp16; neither:
/// none). Trainer never casts the parameters (accelerate wraps forward in autocast), so a 16-bit model fully
/// fine-tuned is pure 16-bit (no master copy) and PEFT's fp32 adapters over a 16-bit base under autocast are mixed.
/// Throws InputError naming the key at fault for what does not run or is not modelled.
Precision trainerPrecision(DType weights, bool bf16, bool fp16, bool adapters, const std::string& weightsKey,
    const std::string& bf16Key, const std::string& fp16Key);

/// A PEFT target module name (q_proj, ..., all-linear) as the scenario names it, or nothing.
std::optional<std::string> peftTargetName(std::string_view peft);

/// Liger's kernels on a transformers model (liger_kernel/transformers/monkey_patch.py@v0.6.3): the fused linear
/// cross-entropy becomes run.loss "fused"; its RMSNorm and SwiGLU keep other tensors than transformers' modules,
/// which only the recomputed layer holds under gradient checkpointing (refused without it, naming `normKey`).
/// Returns what was applied, for the import's list.
std::string applyLiger(RunSpec& run, bool fusedLinearCrossEntropy, bool crossEntropy, bool normOrGlu,
    const std::string& crossEntropyKey, const std::string& normKey);

} // namespace vramlab::detail
