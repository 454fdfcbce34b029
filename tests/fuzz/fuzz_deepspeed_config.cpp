// SPDX-License-Identifier: MIT
// libFuzzer target: any bytes as a DeepSpeed config, applied to a scenario (vramlab-cli import-deepspeed).
#include "vramlab/deepspeed_config.h"
#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/scenario_io.h"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size > vramlab::kMaxScenarioFileBytes)
        return 0;
    static const vramlab::Scenario base = vramlab::readScenario(vramlab::parseJsonText(
        R"({"format": "vramlab.scenario", "version": 1, "name": "fuzz", "model": {"preset": "llama-3.2-1b"},
            "run": {"sequence_length": 512, "parallelism": {"gpus": 8}, "gpu": "h100-sxm-80gb"}})",
        "base.json"));
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        vramlab::Scenario sc = base;
        (void)vramlab::applyDeepSpeedConfig(sc, vramlab::parseJsonText(text, "ds_config.json"));
        // What the import accepts must read back and estimate without surprises (or be refused by name).
        (void)vramlab::estimate(vramlab::readScenario(vramlab::scenarioToJson(sc)));
    } catch (const vramlab::InputError&) {
    } catch (const vramlab::SizeOverflow&) {
    }
    return 0;
}
