// SPDX-License-Identifier: MIT
// libFuzzer target: any bytes through the probe report reader (what the GUI imports from
// another machine) and the progress-line reader. Bad input may only end in InputError; a
// crash, a sanitizer report or another exception is a bug (each one found becomes a case
// in tests/fuzz/regressions/). An accepted report must survive a round trip unchanged.
#include "vramlab/errors.h"
#include "vramlab/probe_report.h"
#include "vramlab/scenario_io.h"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size > vramlab::kMaxProbeReportFileBytes)
        return 0;
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const nlohmann::json doc = vramlab::parseJsonText(text, "fuzz.json");
        (void)vramlab::readProbeProgress(doc);
        const vramlab::ProbeReport rep = vramlab::readProbeReport(doc, "fuzz.json");
        const nlohmann::json again = vramlab::probeReportToJson(rep);
        if (vramlab::probeReportToJson(vramlab::readProbeReport(again)) != again)
            __builtin_trap();
        if (rep.device.freeBytes > rep.device.totalBytes)
            __builtin_trap();
    } catch (const vramlab::InputError&) {
    }
    return 0;
}
