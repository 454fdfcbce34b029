// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/probe_report.h"

#include <string>
#include <vector>

namespace vramlab::probe {

/// Where progress and the report go: JSON lines on stdout (--json), else text.
struct Output {
    bool json = false;
    void progress(const std::string& phase, Count done, Count total) const;
    /// The final report: one JSON line, or text for people.
    void report(const ProbeReport& report) const;
};

/// Each command returns the exit code; bad input throws InputError (exit 2), no GPU
/// throws NoUsableGpu (exit 3).
int runInfo(const std::vector<std::string>& args);
int runFit(const std::vector<std::string>& args);
int runBench(const std::vector<std::string>& args);

/// Flags shared by the commands: the scenario file, --json and `--name VALUE` options.
struct Arguments {
    std::string scenarioFile;
    bool json = false;
    std::vector<std::pair<std::string, std::string>> options; ///< --margin-mib 512
    std::vector<std::string> flags; ///< --test-oom
    bool has(const std::string& flag) const;
    const std::string* value(const std::string& option) const;
};
/// The integer value of `option` in [lo, hi], else InputError naming the option.
long long parseInteger(const std::string& option, const std::string& text, long long lo, long long hi);
/// A report of `command` with the device opened (throws NoUsableGpu without one).
ProbeReport startReport(const std::string& command, const std::string& scenarioName);

/// `valueOptions` take the next word; `flagOptions` stand alone. Throws InputError.
Arguments parseArguments(const std::vector<std::string>& args, bool needsScenario,
    const std::vector<std::string>& valueOptions, const std::vector<std::string>& flagOptions);

} // namespace vramlab::probe
