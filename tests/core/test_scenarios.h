// SPDX-License-Identifier: MIT
// Scenarios shared by the core tests.
#pragma once

#include "vramlab/presets.h"
#include "vramlab/scenario.h"

namespace vramlab::test {

/// Llama-3-8B training at 4096 tokens on one H100 SXM (mixed-bf16, AdamW, flash).
inline Scenario llama3_8b()
{
    Scenario sc;
    sc.model = findPreset("llama-3-8b")->model;
    sc.run.sequenceLength = 4096;
    sc.run.gpu = findGpu("h100-sxm-80gb");
    return sc;
}

/// Parameters of Llama-3-8B.
inline constexpr Count kLlama3_8bParams = 8'030'261'248;

} // namespace vramlab::test
