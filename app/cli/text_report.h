// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/report.h"

#include <string>

namespace vramlab::cli {

/// The report as an aligned table for a terminal: components with bytes, share and
/// formula, the verdict, FLOPs and step time.
std::string textReport(const Report& report);

} // namespace vramlab::cli
