// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/model_spec.h"
#include "vramlab/run_spec.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace vramlab {

/// A scenario file (spec/scenario-v1.md): a model and how it is run.
struct Scenario {
    std::string name;
    ModelSpec model;
    RunSpec run;
    /// The document as read, so unknown keys survive a save (round trip).
    nlohmann::json document = nlohmann::json::object();
    /// Unknown keys and other non-fatal remarks found while reading.
    std::vector<std::string> warnings;
};

} // namespace vramlab
