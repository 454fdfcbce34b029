// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace vramlab {

/// What a byte of GPU memory is for: the report's bar segments and the step timeline's
/// categories. Each kind's key, label and colour role are written once, in kComponents.
enum class ComponentKind : uint8_t {
    Weights,
    MasterWeights,
    Gradients,
    OptimizerStates,
    Activations,
    KvCache,
    Temporaries, ///< the step timeline's short-lived buffers (not a bar of the report)
    Overhead,
};

/// The colour family a chart gives a kind (the theme maps roles to colours).
enum class ColourRole : uint8_t { Blue, SkyBlue, BluishGreen, Orange, Vermillion, ReddishPurple, Yellow, Grey };

struct ComponentInfo {
    ComponentKind kind;
    std::string_view key; ///< the report's key: "optimizer_states"
    std::string_view label; ///< "Optimizer states"
    ColourRole colour;
};

inline constexpr std::array<ComponentInfo, 8> kComponents = { {
    { ComponentKind::Weights, "weights", "Weights", ColourRole::Blue },
    { ComponentKind::MasterWeights, "master_weights", "Master weights", ColourRole::SkyBlue },
    { ComponentKind::Gradients, "gradients", "Gradients", ColourRole::BluishGreen },
    { ComponentKind::OptimizerStates, "optimizer_states", "Optimizer states", ColourRole::Orange },
    { ComponentKind::Activations, "activations", "Activations", ColourRole::Vermillion },
    { ComponentKind::KvCache, "kv_cache", "KV cache", ColourRole::ReddishPurple },
    { ComponentKind::Temporaries, "temporaries", "Temporaries", ColourRole::Yellow },
    { ComponentKind::Overhead, "overhead", "Overhead", ColourRole::Grey },
} };

/// The report's bar segments, bottom to top (every kind but the timeline's temporaries).
inline constexpr std::array<ComponentKind, 7> kReportComponents
    = { ComponentKind::Weights, ComponentKind::MasterWeights, ComponentKind::Gradients, ComponentKind::OptimizerStates,
          ComponentKind::Activations, ComponentKind::KvCache, ComponentKind::Overhead };

constexpr const ComponentInfo& componentInfo(ComponentKind k)
{
    return kComponents[static_cast<std::size_t>(k)];
}
constexpr std::string_view componentKey(ComponentKind k)
{
    return componentInfo(k).key;
}
constexpr std::string_view componentLabel(ComponentKind k)
{
    return componentInfo(k).label;
}
/// The kind with report key `key` (the colour of an unknown key is the overhead's).
constexpr const ComponentInfo* findComponent(std::string_view key)
{
    for (const ComponentInfo& c : kComponents)
        if (c.key == key)
            return &c;
    return nullptr;
}

static_assert(
    [] {
        for (std::size_t i = 0; i < kComponents.size(); ++i)
            if (static_cast<std::size_t>(kComponents[i].kind) != i)
                return false;
        return true;
    }(),
    "kComponents is indexed by ComponentKind");

} // namespace vramlab
