// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <vector>

namespace vramlab::cli {

/// Each command writes its result to stdout and returns the exit code; bad input
/// throws InputError (the caller prints it as one line and exits 2).
int runEstimate(const std::vector<std::string>& args);
int runSweep(const std::vector<std::string>& args);
int runFit(const std::vector<std::string>& args);
int runTimeline(const std::vector<std::string>& args);
int runPlan(const std::vector<std::string>& args);
int runPresets(const std::vector<std::string>& args);
int runGpus(const std::vector<std::string>& args);
int runKeys(const std::vector<std::string>& args);
int runImportHf(const std::vector<std::string>& args);
int runImportDeepSpeed(const std::vector<std::string>& args);
int runImportTorchtitan(const std::vector<std::string>& args);
int runImportTrl(const std::vector<std::string>& args);
int runImportAxolotl(const std::vector<std::string>& args);
int runValidate(const std::vector<std::string>& args);
int runSnapshot(const std::vector<std::string>& args); ///< snapshot_command.cpp

} // namespace vramlab::cli
