// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/scenario.h"

#include <nlohmann/json.hpp>

#include <string>

namespace vramlab {

/// Largest scenario file read (a scenario is a few kilobytes; anything bigger is not one).
inline constexpr std::size_t kMaxScenarioFileBytes = 4 * 1024 * 1024;

/// Reads a version-1 scenario document. Explicit model keys override the preset; missing
/// keys take the spec's defaults; unknown keys become warnings and are kept in
/// `document` for the round trip. Throws InputError naming the key path.
Scenario readScenario(const nlohmann::json& doc);

/// Parses and reads a scenario file; errors name the file.
Scenario loadScenarioFile(const std::string& path);

/// Reads a whole text file (at most `maxBytes`), throwing InputError naming the file.
std::string readTextFile(const std::string& path, std::size_t maxBytes = kMaxScenarioFileBytes);

/// Parses JSON text, throwing InputError with the file, line and column on a syntax error.
nlohmann::json parseJsonText(const std::string& text, const std::string& file);

/// The scenario as a complete, explicit document; unknown keys of the original survive.
nlohmann::json scenarioToJson(const Scenario& scenario);

/// Writes text to `path` atomically (temporary file in the same folder, then rename), so
/// a failed write never leaves a half file or destroys the old one.
void writeFileAtomically(const std::string& path, const std::string& text);

/// scenarioToJson() written atomically, indented for people.
void saveScenarioFile(const std::string& path, const Scenario& scenario);

} // namespace vramlab
