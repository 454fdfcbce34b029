// SPDX-License-Identifier: MIT
// Loading a command's scenario file, with errors attributed to it (shared by the commands).
#pragma once

#include "cli_args.h"
#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/scenario_io.h"

#include <string>

namespace vramlab::cli {

inline std::string onlyFile(const CliArgs& a, const char* command)
{
    if (a.positionals().size() != 1)
        throw InputError(command, "expected exactly one scenario file");
    return a.positionals().front();
}

/// Loads and validates; errors that come from the scenario name its file.
inline Scenario load(const std::string& file)
{
    Scenario sc = loadScenarioFile(file);
    try {
        validateScenario(sc);
    } catch (const InputError& e) {
        throw e.withFile(file);
    }
    return sc;
}

template <typename F> auto withFile(const std::string& file, F&& f)
{
    try {
        return f();
    } catch (const InputError& e) {
        throw e.withFile(file);
    } catch (const SizeOverflow& e) {
        throw InputError("", std::string("the configuration is too large: ") + e.what(), file);
    }
}

} // namespace vramlab::cli
