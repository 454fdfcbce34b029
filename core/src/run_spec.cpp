// SPDX-License-Identifier: MIT
#include "vramlab/run_spec.h"

namespace vramlab {

std::string_view toString(Precision p)
{
    switch (p) {
    case Precision::Fp32: return "fp32";
    case Precision::Bf16: return "bf16";
    case Precision::Fp16: return "fp16";
    case Precision::MixedBf16: return "mixed-bf16";
    case Precision::MixedFp16: return "mixed-fp16";
    }
    return "?";
}

std::string_view toString(Optimizer o)
{
    switch (o) {
    case Optimizer::AdamW: return "adamw";
    case Optimizer::Adam: return "adam";
    case Optimizer::AdamW8bit: return "adamw-8bit";
    case Optimizer::Sgd: return "sgd";
    case Optimizer::SgdMomentum: return "sgd-momentum";
    case Optimizer::Lion: return "lion";
    case Optimizer::Adafactor: return "adafactor";
    }
    return "?";
}

std::string_view toString(Mode m) { return m == Mode::Training ? "training" : "inference"; }
std::string_view toString(AttentionImpl a) { return a == AttentionImpl::Eager ? "eager" : "flash"; }

std::string_view toString(FinetuneMethod f)
{
    switch (f) {
    case FinetuneMethod::Full: return "full";
    case FinetuneMethod::Lora: return "lora";
    case FinetuneMethod::Qlora: return "qlora";
    }
    return "?";
}

std::string toString(const Checkpointing& c)
{
    switch (c.kind) {
    case Checkpointing::Kind::None: return "none";
    case Checkpointing::Kind::Full: return "full";
    case Checkpointing::Kind::Selective: return "selective";
    case Checkpointing::Kind::Every: return "every " + std::to_string(c.every) + " layers";
    }
    return "?";
}

} // namespace vramlab
