// SPDX-License-Identifier: MIT
// libFuzzer target: any bytes as a YAML config, read and applied to a scenario as TRL's and as axolotl's
// (vramlab-cli import-trl, import-axolotl).
#include "vramlab/axolotl_config.h"
#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/scenario_io.h"
#include "vramlab/trl_config.h"
#include "vramlab/yaml_reader.h"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size > vramlab::kMaxYamlFileBytes)
        return 0;
    static const vramlab::Scenario base = vramlab::readScenario(vramlab::parseJsonText(
        R"({"format": "vramlab.scenario", "version": 1, "name": "fuzz", "model": {"preset": "llama-3-8b"},
            "run": {"parallelism": {"gpus": 8}, "gpu": "h100-sxm-80gb"}})",
        "base.json"));
    const std::string text(reinterpret_cast<const char*>(data), size);
    nlohmann::json config;
    try {
        config = vramlab::parseYamlText(text, "config.yaml");
        (void)config.dump(); // whatever the reader accepts is valid JSON (UTF-8 strings)
    } catch (const vramlab::InputError&) {
        return 0;
    }
    // Both YAML imports; what either accepts must read back and estimate without surprises (or be refused by name).
    for (const auto apply : { &vramlab::applyTrlConfig, &vramlab::applyAxolotlConfig }) {
        try {
            vramlab::Scenario sc = base;
            (void)apply(sc, config);
            (void)vramlab::estimate(vramlab::readScenario(vramlab::scenarioToJson(sc)));
        } catch (const vramlab::InputError&) {
        } catch (const vramlab::SizeOverflow&) {
        }
    }
    return 0;
}
