// SPDX-License-Identifier: MIT
#include "hf_trainer_args.h"

#include "vramlab/errors.h"

#include <algorithm>
#include <map>

namespace vramlab::detail {

void applyTrainerOptimizer(RunSpec& run, const std::string& optim, const std::string& key)
{
    run.optimizerImpl.reset();
    if (optim == "adamw_torch" || optim == "adamw_torch_fused") {
        run.optimizer = Optimizer::AdamW;
        run.optimizerImpl = optim == "adamw_torch" ? OptimizerImpl::Foreach : OptimizerImpl::Fused;
    } else if (optim == "adamw_bnb_8bit" || optim == "adamw_8bit") {
        run.optimizer = Optimizer::AdamW8bit;
    } else if (optim == "paged_adamw_8bit") {
        run.optimizer = Optimizer::AdamW8bit;
        run.optimizerImpl = OptimizerImpl::Paged8;
    } else if (optim == "paged_adamw_32bit") {
        run.optimizer = Optimizer::AdamW;
        run.optimizerImpl = OptimizerImpl::Paged32;
    } else if (optim == "adafactor") {
        run.optimizer = Optimizer::Adafactor;
    } else if (optim == "sgd") {
        run.optimizer = Optimizer::Sgd;
    } else {
        throw InputError(key,
            "expected adamw_torch, adamw_torch_fused, adamw_bnb_8bit, adamw_8bit, paged_adamw_8bit, paged_adamw_32bit, "
            "adafactor or sgd (the optimizers VRAM Lab keeps states of), got \""
                + optim + "\"");
    }
}

Precision trainerPrecision(DType weights, bool bf16, bool fp16, bool adapters, const std::string& weightsKey,
    const std::string& bf16Key, const std::string& fp16Key)
{
    if (bf16 && fp16)
        throw InputError(fp16Key, "bf16 and fp16 together: TrainingArguments raises; expected one of them");
    if (weights == DType::Fp32) {
        // With adapters the frozen base stays fp32 under autocast (run.finetune.base_fp32, set by the caller).
        return bf16 ? Precision::MixedBf16 : fp16 ? Precision::MixedFp16 : Precision::Fp32;
    }
    if ((weights == DType::Bf16 && fp16) || (weights == DType::Fp16 && bf16))
        throw InputError(
            bf16 ? bf16Key : fp16Key, "autocast to the other 16-bit type than the model's is not modelled");
    if (weights == DType::Fp16 && fp16 && !adapters)
        throw InputError(fp16Key,
            "fp16 autocast over fp16 parameters: torch's GradScaler refuses to unscale fp16 gradients; expected the "
            "model in fp32 (mixed fp16) or adapters");
    const bool on = bf16 || fp16;
    return weights == DType::Bf16 ? (adapters && on ? Precision::MixedBf16 : Precision::Bf16)
                                  : (adapters && on ? Precision::MixedFp16 : Precision::Fp16);
}

std::optional<std::string> peftTargetName(std::string_view peft)
{
    static const std::map<std::string_view, std::string_view> names { { "q_proj", "q" }, { "k_proj", "k" },
        { "v_proj", "v" }, { "o_proj", "o" }, { "gate_proj", "gate" }, { "up_proj", "up" }, { "down_proj", "down" },
        { "all-linear", "all-linear" } };
    const auto it = names.find(peft);
    return it == names.end() ? std::nullopt : std::optional<std::string>(it->second);
}

std::string applyLiger(RunSpec& run, bool fusedLinearCrossEntropy, bool crossEntropy, bool normOrGlu,
    const std::string& crossEntropyKey, const std::string& normKey)
{
    if (crossEntropy)
        throw InputError(crossEntropyKey,
            "Liger's cross-entropy over full logits is not modelled: expected its fused linear cross-entropy");
    const bool checkpointing = run.checkpointing.kind == Checkpointing::Kind::Full;
    if (normOrGlu && !checkpointing)
        throw InputError(normKey,
            "Liger's RMSNorm and SwiGLU kernels keep other tensors than transformers' modules, which is not modelled "
            "without gradient checkpointing; turn them off, or gradient checkpointing on");
    if (fusedLinearCrossEntropy)
        run.loss = LossKind::Fused;
    return std::string(
               fusedLinearCrossEntropy ? "run.loss = fused (Liger's fused linear cross-entropy)" : "run.loss unchanged")
        + (normOrGlu ? "; its RMSNorm and SwiGLU counted as transformers' modules (the recomputed layer only, under "
                       "gradient checkpointing: a slight overestimate)"
                     : "");
}

std::optional<HfCheckpoint> hfCheckpoint(const ModelSpec& model)
{
    // The presets' Hub config.json files (tests/data/hf, and meta-llama/Llama-2-*-hf's "torch_dtype": "float16").
    struct Row {
        std::string_view prefix;
        HfCheckpoint checkpoint;
    };
    static const Row rows[] = {
        { "llama-2-", { "llama", DType::Fp16 } },
        { "llama-", { "llama", DType::Bf16 } },
        { "smollm2-", { "llama", DType::Bf16 } },
        { "mistral-", { "mistral", DType::Bf16 } },
        { "mixtral-8x7b", { "mixtral", DType::Bf16 } },
        { "mixtral-", { "mixtral", std::nullopt } },
        { "qwen2.5-", { "qwen2", DType::Bf16 } },
        { "qwen3-next-", { "qwen3_next", DType::Bf16 } },
        { "qwen3-30b-a3b", { "qwen3_moe", DType::Bf16 } },
        { "qwen3.5-", { "qwen3_5", std::nullopt } },
        { "qwen3-", { "qwen3", DType::Bf16 } },
        { "gemma-3-1b", { "gemma3_text", DType::Bf16 } },
        { "gemma-3-", { "gemma3", DType::Bf16 } },
        { "olmo-2-", { "olmo2", DType::Fp32 } },
        { "olmoe-", { "olmoe", std::nullopt } },
        { "phi-3-", { "phi3", DType::Bf16 } },
        { "phi-4", { "phi3", DType::Bf16 } },
        { "granite-3", { "granite", DType::Bf16 } },
        { "granite-4", { "granitemoehybrid", std::nullopt } },
        { "gpt2", { "gpt2", DType::Fp32 } },
        { "deepseek-v2", { "deepseek_v2", DType::Bf16 } },
        { "deepseek-v3", { "deepseek_v3", std::nullopt } }, // shipped as fp8 blocks
        { "falcon-h1-", { "falcon_h1", std::nullopt } },
    };
    const std::string& preset = model.preset;
    if (preset.empty())
        return std::nullopt;
    for (const Row& r : rows)
        if (preset.starts_with(r.prefix))
            return r.checkpoint;
    return std::nullopt;
}

bool ligerHasKernels(std::string_view modelType)
{
    static constexpr std::string_view types[]
        = { "gemma", "gemma2", "gemma3_text", "gemma3", "glm4", "llama", "llama4", "granite", "mistral", "mixtral",
              "olmo2", "qwen2", "qwen3", "qwen3_moe", "qwen3_next", "smollm3", "phi3", "falcon_h1" };
    return std::find(std::begin(types), std::end(types), modelType) != std::end(types);
}

bool peftDefaultsToQv(std::string_view modelType)
{
    static constexpr std::string_view types[]
        = { "llama", "mistral", "mixtral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3_text" };
    return std::find(std::begin(types), std::end(types), modelType) != std::end(types);
}

std::vector<std::string> scenarioTargets(
    const std::vector<std::string>& peftNames, const std::string& key, std::string& shown)
{
    std::vector<std::string> targets;
    for (const std::string& n : peftNames) {
        const auto mapped = peftTargetName(n);
        if (!mapped)
            throw InputError(key,
                "expected q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj or all-linear (the modules "
                "VRAM Lab's models have), got \""
                    + n + "\"");
        if (std::find(targets.begin(), targets.end(), *mapped) == targets.end())
            targets.push_back(*mapped);
    }
    if (std::find(targets.begin(), targets.end(), "all-linear") != targets.end())
        targets = { "all-linear" };
    shown.clear();
    for (const std::string& t : targets)
        shown += (shown.empty() ? "" : ", ") + t;
    return targets;
}

void applyInlineDeepSpeed(Scenario& scenario, const nlohmann::json& config, ConfigImport& out)
{
    const ConfigImport sub = applyDeepSpeedConfig(scenario, config);
    for (const std::string& line : sub.applied)
        out.applied.push_back("deepspeed: " + line);
    for (const std::string& line : sub.ignored)
        out.ignored.push_back("deepspeed: " + line);
}

} // namespace vramlab::detail
