// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/atomic_file.h"
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

/// The object of `doc` that holds the field `key` ("run.parallelism" for
/// "run.parallelism.gpus"), made an object along the way where it is not one.
nlohmann::json& fieldObject(nlohmann::json& doc, std::string_view key);

/// The scenario as a complete, explicit document; unknown keys of the original survive.
nlohmann::json scenarioToJson(const Scenario& scenario);
/// Every figure of a GPU as a scenario's custom `run.gpu` object states it (also what
/// `vramlab-cli gpus --json` lists).
nlohmann::json gpuSpecJson(const GpuSpec& gpu);

/// scenarioToJson() as the text of a file that loadScenarioFile() opens again: indented for
/// people, or compact when indenting would pass kMaxScenarioFileBytes (a big unknown-key
/// payload). Throws InputError when even the compact text would not fit, rather than save
/// a file that could not be opened.
std::string scenarioFileText(const Scenario& scenario);

/// scenarioFileText() written with writeFileAtomically(); errors name the file.
void saveScenarioFile(const std::string& path, const Scenario& scenario);

} // namespace vramlab
