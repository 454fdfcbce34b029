// SPDX-License-Identifier: MIT
#include "scenario_overrides.h"

#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/scenario_fields.h"
#include "vramlab/scenario_io.h"

#include <nlohmann/json.hpp>

namespace vramlab::cli {

using nlohmann::json;

const std::vector<std::pair<std::string, std::string>>& overrideAliases()
{
    static const std::vector<std::pair<std::string, std::string>> aliases = {
        { "preset", "model.preset" },
        { "gpu", "run.gpu" },
        { "mode", "run.mode" },
        { "method", "run.finetune.method" },
        { "rank", "run.finetune.rank" },
        { "seq", "run.sequence_length" },
        { "micro-batch", "run.micro_batch_size" },
        { "accumulation", "run.gradient_accumulation_steps" },
        { "precision", "run.precision" },
        { "optimizer", "run.optimizer" },
        { "checkpointing", "run.checkpointing" },
        { "attention", "run.attention" },
        { "framework", "run.framework" },
        { "loss", "run.loss" },
        { "compile", "run.compile" },
        { "gpus", "run.parallelism.gpus" },
        { "zero", "run.parallelism.zero_stage" },
        { "tp", "run.parallelism.tensor_parallel" },
        { "pp", "run.parallelism.pipeline_parallel" },
    };
    return aliases;
}

namespace {

/// The key an option names, or nothing when it is not a scenario key.
std::optional<std::string> keyOf(const std::string& word)
{
    if (word.rfind("--", 0) != 0)
        return std::nullopt;
    const std::string name = word.substr(2);
    for (const auto& [alias, key] : overrideAliases())
        if (name == alias)
            return key;
    if (const ScenarioField* f = findField(name); f && f->kind != FieldKind::Unmodelled)
        return name;
    return std::nullopt;
}

json valueOf(const std::string& text)
{
    const json parsed = json::parse(text, nullptr, false);
    return parsed.is_discarded() ? json(text) : parsed;
}

} // namespace

ScenarioOverrides takeOverrides(std::vector<std::string>& words)
{
    ScenarioOverrides o;
    std::vector<std::string> rest;
    for (size_t i = 0; i < words.size(); ++i) {
        const std::optional<std::string> key = keyOf(words[i]);
        if (!key) {
            rest.push_back(words[i]);
            continue;
        }
        if (i + 1 >= words.size())
            throw InputError(words[i], "expected a value for " + *key);
        o.values.emplace_back(*key, words[++i]);
    }
    words = std::move(rest);
    return o;
}

Scenario loadWithOverrides(const std::optional<std::string>& file, const ScenarioOverrides& o)
{
    json doc = file ? parseJsonText(readTextFile(*file), *file)
                    : json { { "format", "vramlab.scenario" }, { "version", 1 }, { "model", json::object() },
                          { "run", json::object() } };
    std::string name;
    for (const auto& [key, text] : o.values) {
        if (!doc.is_object())
            break; // the reader names what is wrong with the document
        if (key == "model.preset") // a preset is the whole model: shapes from the file would amend it
            doc["model"] = json::object();
        fieldObject(doc, key)[std::string(fieldName(key))] = valueOf(text);
        name.append(name.empty() ? "" : ", ").append(fieldName(key)).append(" ").append(text);
    }
    if (!file && !doc.contains("name"))
        doc["name"] = name;
    const std::string where = file ? *file : "command line";
    try {
        Scenario sc = readScenario(doc);
        validateScenario(sc);
        return sc;
    } catch (const InputError& e) {
        throw e.withFile(where);
    }
}

} // namespace vramlab::cli
