// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/choice_names.h"
#include "vramlab/scenario.h"

#include <nlohmann/json.hpp>

#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace vramlab {

/// A field's value as the scenario file spells it (a choice by its name); monostate: unset,
/// the key is left out of the file.
using FieldValue = std::variant<std::monostate, Count, double, bool, std::string>;

enum class FieldKind {
    Integer,
    Real,
    Boolean,
    Choice, ///< one of `choices`, by name
    Text,
    Custom, ///< read and written by its own functions (an object or a string, a list)
    Unmodelled, ///< a key that changes memory but is not modelled: only `modelledJson` is accepted
};

/// One key of the scenario file (spec/scenario-v1.md): the single place that says its path,
/// kind, range, unit and meaning, and how it is read from and written to a Scenario. The
/// reader, the writer, sweeps, fits, the planner, lesson validation and the window's controls
/// all go through this table, so a new key is one entry plus its model code.
struct ScenarioField {
    std::string_view key; ///< full key path: "run.parallelism.gpus"
    FieldKind kind = FieldKind::Integer;
    double min = 0, max = 0; ///< Integer, Real: the accepted range
    bool maxOpen = false; ///< Real: strictly below max
    std::string_view unit; ///< "tokens", "bytes", ...; empty for none
    std::string_view description;
    std::span<const ChoiceName> choices; ///< Choice: the accepted names
    FieldValue (*get)(const Scenario&) = nullptr;
    void (*set)(Scenario&, const FieldValue&) = nullptr; ///< throws InputError on a value it cannot take
    /// Custom: reads the key's JSON value (present, not null); errors name `keyPath`.
    void (*read)(Scenario&, const nlohmann::json& value, const std::string& keyPath, std::vector<std::string>& warnings)
        = nullptr;
    /// Custom: the key's JSON value, or null to leave the key out.
    nlohmann::json (*write)(const Scenario&) = nullptr;
    std::string_view modelledJson; ///< Unmodelled: the one value accepted ("null": only absence)
    /// Whether the key is written for this scenario (null: always); a key left out reads back
    /// as the same model (a dense model has no model.moe keys).
    bool (*written)(const Scenario&) = nullptr;
};

/// Every key, in reading order (a preset before the shapes it presets).
std::span<const ScenarioField> scenarioFields();
const ScenarioField* findField(std::string_view key);
/// The object a key lives in: "run.parallelism.gpus" -> "run.parallelism".
std::string_view fieldParent(std::string_view key);
/// The key's own name: "run.parallelism.gpus" -> "gpus".
std::string_view fieldName(std::string_view key);
/// The field's value as a scenario file writes it (null when unset).
nlohmann::json fieldJson(const ScenarioField& f, const Scenario& sc);
/// "expected one of a, b, c" / "an integer from 1 to 100": what the field accepts.
std::string fieldExpectation(const ScenarioField& f);

} // namespace vramlab
