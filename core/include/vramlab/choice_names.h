// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/dtype.h"
#include "vramlab/model_spec.h"
#include "vramlab/run_spec.h"

#include <optional>
#include <span>
#include <string_view>

namespace vramlab {

/// One value of an enum as the scenario file spells it. Each enum's spellings are written
/// once, here: the reader, the writer, toString() and the window's choices all use them.
struct ChoiceName {
    std::string_view name;
    int value;
};

template <typename E> constexpr ChoiceName choiceName(std::string_view name, E value)
{
    return { name, static_cast<int>(value) };
}

inline constexpr ChoiceName kMlpNames[]
    = { choiceName("swiglu", MlpKind::SwiGlu), choiceName("geglu", MlpKind::GeGlu), choiceName("gelu", MlpKind::Gelu) };
inline constexpr ChoiceName kNormNames[]
    = { choiceName("rmsnorm", NormKind::RmsNorm), choiceName("layernorm", NormKind::LayerNorm) };
inline constexpr ChoiceName kPositionNames[] = { choiceName("rope", PositionKind::Rope),
    choiceName("learned", PositionKind::Learned), choiceName("none", PositionKind::None) };
inline constexpr ChoiceName kVisionKindNames[]
    = { choiceName("siglip", VisionKind::Siglip), choiceName("qwen-vit", VisionKind::QwenVit),
          choiceName("llama4", VisionKind::Llama4), choiceName("qwen2.5-vit", VisionKind::Qwen25Vit) };
inline constexpr ChoiceName kSsmKindNames[]
    = { choiceName("mamba2", SsmKind::Mamba2), choiceName("gated-deltanet", SsmKind::GatedDeltaNet) };
inline constexpr ChoiceName kAttentionTypeNames[]
    = { choiceName("mha", AttentionType::Mha), choiceName("mla", AttentionType::Mla) };
/// "serving" reads as inference with run.serving: the serving model answers (serving_model.h).
inline constexpr ChoiceName kModeNames[] = { choiceName("training", Mode::Training),
    choiceName("inference", Mode::Inference), choiceName("serving", Mode::Inference) };
inline constexpr ChoiceName kPrecisionNames[]
    = { choiceName("fp32", Precision::Fp32), choiceName("bf16", Precision::Bf16), choiceName("fp16", Precision::Fp16),
          choiceName("mixed-bf16", Precision::MixedBf16), choiceName("mixed-fp16", Precision::MixedFp16) };
inline constexpr ChoiceName kOptimizerNames[] = { choiceName("adamw", Optimizer::AdamW),
    choiceName("adam", Optimizer::Adam), choiceName("adamw-8bit", Optimizer::AdamW8bit),
    choiceName("sgd", Optimizer::Sgd), choiceName("sgd-momentum", Optimizer::SgdMomentum),
    choiceName("lion", Optimizer::Lion), choiceName("adafactor", Optimizer::Adafactor) };
/// The checkpointing policies spelled as a string (Kind::Every is the object {"every": k}).
inline constexpr ChoiceName kCheckpointingNames[] = { choiceName("none", Checkpointing::Kind::None),
    choiceName("full", Checkpointing::Kind::Full), choiceName("selective", Checkpointing::Kind::Selective),
    choiceName("selective-op", Checkpointing::Kind::SelectiveOp) };
inline constexpr ChoiceName kAttentionNames[]
    = { choiceName("eager", AttentionImpl::Eager), choiceName("flash", AttentionImpl::Flash) };
inline constexpr ChoiceName kFinetuneNames[] = { choiceName("full", FinetuneMethod::Full),
    choiceName("lora", FinetuneMethod::Lora), choiceName("qlora", FinetuneMethod::Qlora) };
inline constexpr ChoiceName kNf4FormatNames[]
    = { choiceName("bnb-nf4", Nf4Format::Bitsandbytes), choiceName("torchao-nf4", Nf4Format::Torchao) };
inline constexpr ChoiceName kShardingNames[] = { choiceName("zero", Sharding::Zero),
    choiceName("fsdp2", Sharding::Fsdp2), choiceName("fsdp1", Sharding::Fsdp1) };
inline constexpr ChoiceName kFsdpWrapNames[]
    = { choiceName("blocks", FsdpWrap::Blocks), choiceName("peft", FsdpWrap::Peft) };
inline constexpr ChoiceName kKbitPreparationNames[] = { choiceName("none", KbitPreparation::None),
    choiceName("trl", KbitPreparation::Trl), choiceName("peft", KbitPreparation::Peft) };
inline constexpr ChoiceName kFrameworkNames[] = { choiceName("plain", Framework::Plain),
    choiceName("torchtitan", Framework::Torchtitan), choiceName("hf-transformers", Framework::HfTransformers),
    choiceName("torchtune", Framework::Torchtune), choiceName("litgpt", Framework::Litgpt),
    choiceName("deepspeed", Framework::Deepspeed), choiceName("megatron", Framework::Megatron) };
inline constexpr ChoiceName kLossNames[]
    = { choiceName("upcast", LossKind::Upcast), choiceName("native", LossKind::Native),
          choiceName("hf-shift", LossKind::HfShift), choiceName("chunked", LossKind::Chunked),
          choiceName("fused", LossKind::Fused), choiceName("loss-parallel", LossKind::LossParallel) };
inline constexpr ChoiceName kPipelineScheduleNames[]
    = { choiceName("1F1B", PipelineSchedule::OneFOneB), choiceName("interleaved-1F1B", PipelineSchedule::Interleaved) };
inline constexpr ChoiceName kOptimizerImplNames[]
    = { choiceName("foreach", OptimizerImpl::Foreach), choiceName("fused", OptimizerImpl::Fused),
          choiceName("paged-32bit", OptimizerImpl::Paged32), choiceName("paged-8bit", OptimizerImpl::Paged8) };
/// Every storage type; the fields below offer subsets of it.
inline constexpr ChoiceName kDTypeNames[] = { choiceName("fp32", DType::Fp32), choiceName("bf16", DType::Bf16),
    choiceName("fp16", DType::Fp16), choiceName("fp8", DType::Fp8), choiceName("int8", DType::Int8),
    choiceName("int4", DType::Int4), choiceName("nf4", DType::Nf4),
    choiceName("nf4 (no double quantization)", DType::Nf4NoDq), choiceName("nf4 (torchao)", DType::Nf4Torchao) };

/// The spelling of `value` in `names` ("?" when absent).
template <typename E> constexpr std::string_view nameOf(std::span<const ChoiceName> names, E value)
{
    for (const ChoiceName& c : names)
        if (c.value == static_cast<int>(value))
            return c.name;
    return "?";
}

/// The value spelled `name` in `names`.
template <typename E> constexpr std::optional<E> valueNamed(std::span<const ChoiceName> names, std::string_view name)
{
    for (const ChoiceName& c : names)
        if (c.name == name)
            return static_cast<E>(c.value);
    return std::nullopt;
}

} // namespace vramlab
