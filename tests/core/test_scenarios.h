// SPDX-License-Identifier: MIT
// Scenarios shared by the core tests.
#pragma once

#include "vramlab/presets.h"
#include "vramlab/scenario.h"
#include "vramlab/step_timeline.h"

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

/// Small numbers worked out by hand in tst_timeline and tst_frameworks: one GPU, four
/// layers of 10 B, one micro-batch (start 310 B: weights 100 + optimizer 200 + overhead 10).
inline StepInputs handStep()
{
    StepInputs in;
    in.training = true;
    in.weights = 100;
    in.gradients = 100;
    in.optimizer = 200;
    in.baseOverhead = 10;
    in.embeddingActs = 1;
    in.layerActs = 40;
    in.headActs = 5;
    in.lossForward = 7;
    in.lossBackward = 8;
    in.backwardWorkingSet = 3;
    in.layers = 4;
    return in;
}

/// Parameters of Llama-3-8B.
inline constexpr Count kLlama3_8bParams = 8'030'261'248;

} // namespace vramlab::test
