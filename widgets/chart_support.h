// SPDX-License-Identifier: MIT
#pragma once

#include "plot_theme.h"
#include "vramlab/report.h"

#include <QString>
#include <QVector>

#include <array>

namespace vramlab {

/// The seven bar segments, bottom to top, as the report names them (the core's registry).
inline constexpr std::array<const char*, kReportComponents.size()> kComponentKeys = [] {
    std::array<const char*, kReportComponents.size()> keys {};
    for (std::size_t i = 0; i < keys.size(); ++i)
        keys[i] = componentKey(kReportComponents[i]).data(); // literals: NUL-terminated
    return keys;
}();

/// The registry's label of a report key ("Optimizer states"); an unknown key as it is.
QString componentLabel(const QString& key);
/// "45.07 GiB" (binary units, as GPU memory is sold and reported).
QString bytesText(Bytes bytes);
double toGiB(Bytes bytes);
/// "FITS: 34.6 GiB of 79.6 GiB, 45 GiB free" / "DOES NOT FIT: ..., 12.3 GiB over" / "MAY NOT FIT:
/// at least 62.9 GiB of 79.6 GiB, a lower bound" (why: Report::lowerBound, in the warnings too).
QString verdictText(const Report& report);
/// The verdict's colour: fits, caution (a lower bound that fits) or overflow.
QColor verdictColor(const Report& report, const PlotTheme& theme);
/// FLOPs, step time and throughput in one line.
QString computeText(const Report& report);

} // namespace vramlab
