// SPDX-License-Identifier: MIT
#include "vramlab/run_spec.h"

namespace vramlab {

std::string_view toString(Precision p)
{
    switch (p) {
    case Precision::Fp32:
        return "fp32";
    case Precision::Bf16:
        return "bf16";
    case Precision::Fp16:
        return "fp16";
    case Precision::MixedBf16:
        return "mixed-bf16";
    case Precision::MixedFp16:
        return "mixed-fp16";
    }
    return "?";
}

std::string_view toString(Optimizer o)
{
    switch (o) {
    case Optimizer::AdamW:
        return "adamw";
    case Optimizer::Adam:
        return "adam";
    case Optimizer::AdamW8bit:
        return "adamw-8bit";
    case Optimizer::Sgd:
        return "sgd";
    case Optimizer::SgdMomentum:
        return "sgd-momentum";
    case Optimizer::Lion:
        return "lion";
    case Optimizer::Adafactor:
        return "adafactor";
    }
    return "?";
}

std::string_view toString(Mode m)
{
    return m == Mode::Training ? "training" : "inference";
}
std::string_view toString(AttentionImpl a)
{
    return a == AttentionImpl::Eager ? "eager" : "flash";
}

std::string_view toString(FinetuneMethod f)
{
    switch (f) {
    case FinetuneMethod::Full:
        return "full";
    case FinetuneMethod::Lora:
        return "lora";
    case FinetuneMethod::Qlora:
        return "qlora";
    }
    return "?";
}

std::string toString(const Checkpointing& c)
{
    switch (c.kind) {
    case Checkpointing::Kind::None:
        return "none";
    case Checkpointing::Kind::Full:
        return "full";
    case Checkpointing::Kind::Selective:
        return "selective";
    case Checkpointing::Kind::Every:
        return "every " + std::to_string(c.every) + " layers";
    case Checkpointing::Kind::SelectiveOp:
        return "selective-op";
    }
    return "?";
}

std::string_view toString(Framework f)
{
    switch (f) {
    case Framework::Plain:
        return "plain";
    case Framework::Torchtitan:
        return "torchtitan";
    case Framework::HfTransformers:
        return "hf-transformers";
    case Framework::Torchtune:
        return "torchtune";
    case Framework::Litgpt:
        return "litgpt";
    case Framework::Deepspeed:
        return "deepspeed";
    case Framework::Megatron:
        return "megatron";
    }
    return "?";
}

std::string_view toString(LossKind l)
{
    switch (l) {
    case LossKind::Upcast:
        return "upcast";
    case LossKind::Native:
        return "native";
    case LossKind::HfShift:
        return "hf-shift";
    case LossKind::Chunked:
        return "chunked";
    case LossKind::Fused:
        return "fused";
    case LossKind::LossParallel:
        return "loss-parallel";
    }
    return "?";
}

std::string_view toString(OptimizerImpl o)
{
    return o == OptimizerImpl::Fused ? "fused" : o == OptimizerImpl::Paged32 ? "paged-32bit" : "foreach";
}

} // namespace vramlab
