// SPDX-License-Identifier: MIT
// libFuzzer target: any bytes as a Hugging Face config.json, then the scenario built from it.
#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/hf_import.h"
#include "vramlab/scenario_io.h"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size > vramlab::kMaxScenarioFileBytes)
        return 0;
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const vramlab::HfImport imported = vramlab::importHfConfig(vramlab::parseJsonText(text, "config.json"));
        const vramlab::Scenario sc = vramlab::scenarioFromHf(imported, "fuzz");
        // What the importer accepts must read back and estimate without surprises.
        (void)vramlab::estimate(vramlab::readScenario(vramlab::scenarioToJson(sc)));
    } catch (const vramlab::InputError&) {
    } catch (const vramlab::SizeOverflow&) {
    }
    return 0;
}
