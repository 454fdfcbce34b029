// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/model_spec.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vramlab {

/// A published model's shapes and its published parameter count.
struct Preset {
    std::string key; ///< "llama-3-8b"
    std::string family; ///< "Llama": the picker's group
    ModelSpec model; ///< model.name is the display name
    Count publishedParams; ///< as published (exact where the source gives it exactly)
    bool publishedExact; ///< false: the source rounds ("175B")
    std::string source; ///< where the shapes and the count come from
};

const std::vector<Preset>& presets();
std::optional<Preset> findPreset(std::string_view key);

} // namespace vramlab
