// SPDX-License-Identifier: MIT
// Quick questions without a scenario file: `--KEY VALUE` words that set one scenario key each.
#pragma once

#include "vramlab/scenario.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace vramlab::cli {

/// Keys set on the command line, in order: every key of `vramlab-cli keys` as `--run.sequence_length`,
/// or a short alias (`--seq`, `--gpu`, `--method`, ...).
struct ScenarioOverrides {
    std::vector<std::pair<std::string, std::string>> values; ///< key path, the word as typed
    bool empty() const { return values.empty(); }
};

/// The short spellings and the keys they set ("seq" -> "run.sequence_length").
const std::vector<std::pair<std::string, std::string>>& overrideAliases();

/// Takes every `--KEY VALUE` pair whose KEY is a scenario key or an alias out of `words`;
/// a key without a value is an InputError naming it.
ScenarioOverrides takeOverrides(std::vector<std::string>& words);

/// FILE's scenario (or, without one, the overrides' alone) with the overrides applied to its
/// JSON and read by the scenario reader, which checks them as it checks a file. A value is
/// JSON where it parses as JSON (8192, true, {"every": 2}), else a string; `model.preset`
/// replaces the whole model.
Scenario loadWithOverrides(const std::optional<std::string>& file, const ScenarioOverrides& o);

} // namespace vramlab::cli
