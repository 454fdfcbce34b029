// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/report.h"

#include <QString>
#include <QVector>

#include <array>

namespace vramlab {

/// The seven bar segments, bottom to top, as the report names them.
inline constexpr std::array<const char*, 7> kComponentKeys
    = { "weights", "master_weights", "gradients", "optimizer_states", "activations", "kv_cache", "overhead" };

QString componentLabel(const QString& key);
/// "45.07 GiB" (binary units, as GPU memory is sold and reported).
QString bytesText(Bytes bytes);
double toGiB(Bytes bytes);
/// "FITS: 34.6 GiB free of 79.6 GiB" / "DOES NOT FIT: 12.3 GiB over 79.6 GiB".
QString verdictText(const Report& report);
/// FLOPs, step time and throughput in one line.
QString computeText(const Report& report);

} // namespace vramlab
