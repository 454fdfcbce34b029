// SPDX-License-Identifier: MIT
#pragma once

// What transformers v4.57.1's Trainer does with the settings that TRL's and axolotl's configs both hand it: the
// optimizer name, the load dtype beside autocast, PEFT's module names, Liger's kernels (shared by the TRL and axolotl
// imports).

#include "vramlab/deepspeed_config.h"
#include "vramlab/model_spec.h"
#include "vramlab/run_spec.h"

#include <nlohmann/json.hpp>

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

/// How a framework coerces a YAML value to its field's type: Argparse (TRL's HfArgumentParser: a string default goes
/// through the field's type, booleans through string_to_bool) or Pydantic (axolotl: lax mode, which also takes on/off
/// and 8.0 for 8).
enum class Coercion { Argparse, Pydantic };

/// A YAML config's keys as one framework reads them, and the lines of the import it makes (TRL's and axolotl's
/// readers derive from it). A key set to null reads as absent; a value of the wrong type is refused naming the key.
class ConfigReader {
public:
    ConfigReader(const nlohmann::json& config, ConfigImport& out, Coercion coercion)
        : m_c(config)
        , m_out(out)
        , m_coercion(coercion)
    {
    }

protected:
    const nlohmann::json* find(const char* key) const;
    /// A boolean as `coercion` takes it from a value, or nothing when it is none.
    static std::optional<bool> asBool(const nlohmann::json& v, Coercion coercion);
    std::optional<bool> flag(const char* key) const;
    bool on(const char* key, bool fallback = false) const { return flag(key).value_or(fallback); }
    std::optional<Count> integer(const char* key, Count min, Count max) const;
    std::optional<std::string> text(const char* key) const;
    /// A dropout probability: a number from 0 to below 1.
    std::optional<double> dropout(const char* key) const;
    /// PEFT's modules_to_save (fully trained copies of whole modules beside the adapters) is not modelled: refused
    /// unless absent or empty.
    void refuseModulesToSave(const char* key) const;
    /// TrainingArguments.deepspeed as a mapping, or null; a file path (read by the framework, not here) or another
    /// value is refused.
    const nlohmann::json* inlineDeepSpeed() const;
    void applied(const std::string& key, const std::string& value, const std::string& to);
    [[noreturn]] static void refuse(const std::string& key, const std::string& why);

    const nlohmann::json& m_c;
    ConfigImport& m_out;
    Coercion m_coercion;
};

/// TrainingArguments.optim (training_args.py@8cb5963c OptimizerNames; trainer.py get_optimizer_cls_and_kwargs) as
/// the run's optimizer and implementation. Throws InputError(key) for a name VRAM Lab keeps no states of.
void applyTrainerOptimizer(RunSpec& run, const std::string& optim, const std::string& key);

/// The precision of a model loaded in `weights` (fp32, bf16 or fp16) under Trainer's autocast (bf16 or fp16; neither:
/// none). Trainer never casts the parameters (accelerate wraps forward in autocast), so a 16-bit model fully
/// fine-tuned is pure 16-bit (no master copy) and PEFT's fp32 adapters over a 16-bit base under autocast are mixed
/// (over an fp32 base too, whose frozen weights stay fp32: run.finetune.base_fp32).
/// Throws InputError naming the key at fault for what does not run or is not modelled.
Precision trainerPrecision(DType weights, bool bf16, bool fp16, bool adapters);

/// A PEFT target module name (q_proj, ..., all-linear) as the scenario names it, or nothing.
std::optional<std::string> peftTargetName(std::string_view peft);

/// Liger's kernels on a transformers model (liger_kernel/transformers/monkey_patch.py@v0.6.3): the fused linear
/// cross-entropy becomes run.loss "fused"; its RMSNorm and SwiGLU keep other tensors than transformers' modules,
/// which only the recomputed layer holds under gradient checkpointing (refused without it, naming `normKey`).
/// Returns what was applied, for the import's list.
std::string applyLiger(RunSpec& run, bool fusedLinearCrossEntropy, bool crossEntropy, bool normOrGlu,
    const std::string& crossEntropyKey, const std::string& normKey);

/// What transformers knows of a preset's checkpoint: its config's model_type and the dtype its weights ship in
/// (what from_pretrained's dtype "auto" loads; unset where VRAM Lab does not know it). Nothing for a model that is
/// not a preset (its config.json was imported or its shapes given).
struct HfCheckpoint {
    std::string_view modelType;
    std::optional<DType> dtype;
};
std::optional<HfCheckpoint> hfCheckpoint(const ModelSpec& model);

/// Liger v0.6.3 has kernels for the model type (monkey_patch.py MODEL_TYPE_TO_APPLY_LIGER_FN; for any other
/// _apply_liger_kernel_to_instance logs and changes nothing).
bool ligerHasKernels(std::string_view modelType);

/// PEFT 0.18.0's target_modules when none is given (utils/constants.py TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_
/// MAPPING): ["q_proj", "v_proj"] for these model types; PEFT raises for the others VRAM Lab has.
bool peftDefaultsToQv(std::string_view modelType);

/// PEFT target names as the scenario's run.finetune.targets (all-linear alone when it is among them); throws
/// InputError(key) for a name VRAM Lab's models do not have. `shown` gets them comma-separated.
std::vector<std::string> scenarioTargets(
    const std::vector<std::string>& peftNames, const std::string& key, std::string& shown);

/// A config's inline DeepSpeed mapping through applyDeepSpeedConfig, its lines added to `out` under "deepspeed: ".
void applyInlineDeepSpeed(Scenario& scenario, const nlohmann::json& config, ConfigImport& out);

} // namespace vramlab::detail
