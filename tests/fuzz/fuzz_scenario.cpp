// SPDX-License-Identifier: MIT
// libFuzzer target: any bytes through the scenario reader, the estimate and the serving engines. Bad input may
// only end in InputError or SizeOverflow; a crash, a sanitizer report or another exception
// is a bug (each one found becomes a case in tests/fuzz/regressions/).
#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/report_json.h"
#include "vramlab/scenario_io.h"
#include "vramlab/serving_model.h"

#include <cmath>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size > vramlab::kMaxScenarioFileBytes)
        return 0;
    const std::string text(reinterpret_cast<const char*>(data), size);
    vramlab::Scenario sc;
    try {
        sc = vramlab::readScenario(vramlab::parseJsonText(text, "fuzz.json"));
    } catch (const vramlab::InputError&) {
        return 0;
    } catch (const vramlab::SizeOverflow&) {
        return 0;
    }
    // A serving scenario: the engine's budget too (hybrid models have only that one).
    if (sc.run.serving) {
        try {
            const vramlab::ServingEstimate e = vramlab::servingEstimate(sc.model, sc.run);
            if (!std::isfinite(e.maxConcurrency) || e.maxConcurrency < 0 || e.kvCacheTokens < 0)
                __builtin_trap();
            for (const vramlab::ServingRank& k : e.ranks)
                if (k.stateBytes < 0 || k.statePerSequenceBytes < 0 || k.weightsBytes < 0)
                    __builtin_trap();
        } catch (const vramlab::InputError&) {
        } catch (const vramlab::SizeOverflow&) {
        }
    }
    try {
        const vramlab::Report r = vramlab::estimate(sc);
        // Nothing shown to a user may be NaN or infinite.
        const vramlab::FlopsEstimate& f = r.flops;
        for (double v : { f.perStep, f.perToken, f.hardwarePerStep, f.stepTimeS, f.tokensPerS, f.peakTflops })
            if (!std::isfinite(v) || v < 0)
                __builtin_trap();
        if (r.total < 0
            || r.peak < r.total - r.bytesOf("gradients") - r.stepInputs.zero3Gather - r.bytesOf("activations"))
            __builtin_trap();
        (void)vramlab::reportToJson(r).dump();
        (void)vramlab::scenarioToJson(sc).dump();
    } catch (const vramlab::InputError&) {
    } catch (const vramlab::SizeOverflow&) {
    }
    return 0;
}
