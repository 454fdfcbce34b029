// SPDX-License-Identifier: MIT
#include "hf_trainer_args.h"

#include "json_reader.h"
#include "vramlab/errors.h"
#include "vramlab/units.h"

#include <algorithm>
#include <map>

namespace vramlab::detail {

const nlohmann::json* ConfigReader::find(const char* key) const
{
    const auto it = m_c.find(key);
    return it == m_c.end() || it->is_null() ? nullptr : &*it;
}

std::optional<bool> ConfigReader::asBool(const nlohmann::json& v, Coercion coercion)
{
    if (v.is_boolean())
        return v.get<bool>();
    if (v.is_number_integer() && (v.get<std::int64_t>() == 0 || v.get<std::int64_t>() == 1))
        return v.get<std::int64_t>() == 1;
    if (!v.is_string())
        return std::nullopt;
    std::string s = v.get<std::string>();
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    const bool pydantic = coercion == Coercion::Pydantic; // on/off beside string_to_bool's words
    if (s == "yes" || s == "true" || s == "t" || s == "y" || s == "1" || (pydantic && s == "on"))
        return true;
    if (s == "no" || s == "false" || s == "f" || s == "n" || s == "0" || (pydantic && s == "off"))
        return false;
    return std::nullopt;
}

std::optional<bool> ConfigReader::flag(const char* key) const
{
    const nlohmann::json* v = find(key);
    if (!v)
        return std::nullopt;
    const auto b = asBool(*v, m_coercion);
    if (!b)
        refuse(key, "expected true or false, got " + JsonObjectReader::describe(*v));
    return b;
}

std::optional<Count> ConfigReader::integer(const char* key, Count min, Count max) const
{
    const nlohmann::json* v = find(key);
    if (!v)
        return std::nullopt;
    std::int64_t n = 0;
    bool ok = v->is_number_integer();
    if (ok) {
        n = v->get<std::int64_t>();
    } else if (v->is_number_float() && m_coercion == Coercion::Pydantic) { // pydantic: 8.0 is 8
        const double x = v->get<double>();
        ok = x >= -9e18 && x <= 9e18 && x == static_cast<double>(static_cast<std::int64_t>(x));
        n = ok ? static_cast<std::int64_t>(x) : 0;
    } else if (v->is_string()) {
        const std::string& s = v->get_ref<const std::string&>();
        ok = !s.empty() && s.size() <= 18
            && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
        if (ok)
            n = std::stoll(s);
    }
    if (!ok || n < min || n > max)
        refuse(key,
            "expected an integer from " + formatCount(min) + " to " + formatCount(max) + ", got "
                + JsonObjectReader::describe(*v));
    return n;
}

std::optional<std::string> ConfigReader::text(const char* key) const
{
    const nlohmann::json* v = find(key);
    if (!v)
        return std::nullopt;
    if (!v->is_string())
        refuse(key, "expected a string, got " + JsonObjectReader::describe(*v));
    return v->get<std::string>();
}

std::optional<double> ConfigReader::dropout(const char* key) const
{
    const nlohmann::json* d = find(key);
    if (!d)
        return std::nullopt;
    if (!d->is_number() || d->get<double>() < 0 || d->get<double>() >= 1)
        refuse(key, "expected a number from 0 to below 1, got " + JsonObjectReader::describe(*d));
    return d->get<double>();
}

void ConfigReader::refuseModulesToSave(const char* key) const
{
    if (const nlohmann::json* m = find(key); m && !(m->is_array() && m->empty()))
        refuse(key, "fully trained copies of whole modules beside the adapters are not modelled: expected none");
}

const nlohmann::json* ConfigReader::inlineDeepSpeed() const
{
    const nlohmann::json* ds = find("deepspeed");
    if (ds && ds->is_string())
        refuse("deepspeed",
            "a DeepSpeed config file is not read from here: remove this line, import the config, then apply the file "
            "to the result with vramlab-cli import-deepspeed (or File > Apply DeepSpeed config…)");
    if (ds && !ds->is_object())
        refuse("deepspeed", "expected a DeepSpeed config mapping, got " + JsonObjectReader::describe(*ds));
    return ds;
}

void ConfigReader::applied(const std::string& key, const std::string& value, const std::string& to)
{
    m_out.applied.push_back(key + " = " + value + " -> " + to);
}

void ConfigReader::refuse(const std::string& key, const std::string& why)
{
    throw InputError(key, why);
}

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

Precision trainerPrecision(DType weights, bool bf16, bool fp16, bool adapters)
{
    const char* bf16Key = "bf16"; // TrainingArguments' and axolotl's names alike
    const char* fp16Key = "fp16";
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
        { "qwen2.5-vl-", { "qwen2_5_vl", DType::Bf16 } },
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
              "olmo2", "qwen2", "qwen2_5_vl", "qwen3", "qwen3_moe", "qwen3_next", "smollm3", "phi3", "falcon_h1" };
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
