// SPDX-License-Identifier: MIT
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <span>
#include <string>
#include <string_view>

namespace vramlab {

/// What the Hugging Face importer does with one config.json key.
enum class HfKeyUse {
    Modelled, ///< read into the ModelSpec: it changes parameters or memory
    NoEffect, ///< provably changes nothing VRAM Lab computes, whatever its value
    NeutralOnly, ///< accepted only at its neutral value (which changes nothing); any other value is refused
};

/// True when a NeutralOnly key's value changes nothing (the whole config is passed for keys
/// whose neutral value depends on another, e.g. GPT-2's attn_pdrop == resid_pdrop).
using HfNeutralTest = bool (*)(const nlohmann::json& value, const nlohmann::json& config);

struct HfKeyRule {
    std::string_view key;
    HfKeyUse use = HfKeyUse::NoEffect;
    std::string_view why; ///< what it changes (Modelled) or why it changes nothing
    HfNeutralTest neutral = nullptr; ///< NeutralOnly: the accepted values
    std::string_view neutralText; ///< NeutralOnly: those values in words ("false", "null", "0")
};

/// One model_type the importer supports: its keys, as groups of rules looked up in order,
/// so a family's own rule (first) overrides a shared one (DeepSeek-V3's num_key_value_heads).
struct HfFamily {
    std::string_view modelType;
    std::string_view source; ///< the transformers file the rules were read from
    std::array<std::span<const HfKeyRule>, 6> groups;
};

/// Every supported family, in the order the README lists them.
std::span<const HfFamily> hfFamilies();
/// The family of a model_type, or nullptr when the importer refuses that model_type.
const HfFamily* findHfFamily(std::string_view modelType);
/// The rule for `key` in `family`, or nullptr: a key with no rule is refused.
const HfKeyRule* findHfKeyRule(const HfFamily& family, std::string_view key);
/// "llama, mistral, ...": the supported model_types, for messages.
std::string supportedHfModelTypes();

} // namespace vramlab
