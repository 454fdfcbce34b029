// SPDX-License-Identifier: MIT
#include "vramlab/units.h"

#include "vramlab/errors.h"

#include <cmath>
#include <cstdint>
#include <cstdio>

namespace vramlab {

void throwSizeOverflow()
{
    throw SizeOverflow();
}

std::string formatBytes(Bytes bytes, bool binary)
{
    static const char* const binaryUnits[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
    static const char* const decimalUnits[] = { "B", "kB", "MB", "GB", "TB", "PB", "EB" };
    const double base = binary ? 1024.0 : 1000.0;
    double v = static_cast<double>(bytes);
    int unit = 0;
    while (std::fabs(v) >= base && unit < 6) {
        v /= base;
        ++unit;
    }
    char buf[64];
    if (unit == 0)
        std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
    else
        std::snprintf(buf, sizeof buf, "%.2f %s", v, binary ? binaryUnits[unit] : decimalUnits[unit]);
    return buf;
}

std::string formatCount(Count n)
{
    // The magnitude as unsigned: -INT64_MIN does not fit in a Count.
    const auto magnitude = n < 0 ? std::uint64_t(0) - static_cast<std::uint64_t>(n) : static_cast<std::uint64_t>(n);
    std::string digits = std::to_string(magnitude);
    std::string out;
    const int lead = static_cast<int>(digits.size() % 3);
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i != 0 && static_cast<int>(i % 3) == lead)
            out += ',';
        out += digits[i];
    }
    return n < 0 ? "-" + out : out;
}

std::string formatSeconds(double seconds, int decimals)
{
    char buf[48];
    if (seconds < 1)
        std::snprintf(buf, sizeof buf, "%.0f ms", seconds * 1e3);
    else
        std::snprintf(buf, sizeof buf, "%.*f s", decimals, seconds);
    return buf;
}

std::string formatFlops(double flops)
{
    static const char* const units[]
        = { "FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP", "EFLOP", "ZFLOP", "YFLOP" };
    int unit = 0;
    while (std::fabs(flops) >= 1000.0 && unit < 8) {
        flops /= 1000.0;
        ++unit;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3g %s", flops, units[unit]);
    return buf;
}

} // namespace vramlab
