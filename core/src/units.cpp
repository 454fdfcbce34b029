// SPDX-License-Identifier: MIT
#include "vramlab/units.h"

#include "vramlab/errors.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace vramlab {

void throwSizeOverflow()
{
    throw SizeOverflow();
}

std::string formatDouble(double v, std::chars_format format, int precision)
{
    // Whole numbers, the most common case in formulas, print as integers (to_chars with a
    // precision is several times slower): "%.4g" of 8 is "8", "%.2f" of 3 is "3.00".
    constexpr double kExactInteger = 9007199254740992.0; // 2^53
    if (v == std::trunc(v) && std::fabs(v) < kExactInteger && !(v == 0 && std::signbit(v)) && precision >= 0) {
        const auto whole = static_cast<long long>(v);
        const auto magnitude = static_cast<unsigned long long>(whole < 0 ? -whole : whole);
        if (format == std::chars_format::fixed)
            return std::to_string(whole).append(precision > 0 ? "." : "").append(static_cast<size_t>(precision), '0');
        unsigned long long limit = 1; // "%.{p}g" prints integers below 10^p without an exponent
        for (int i = 0; i < std::max(precision, 1) && limit < 10'000'000'000'000'000ULL; ++i)
            limit *= 10;
        if (format == std::chars_format::general && magnitude < limit)
            return std::to_string(whole);
    }
    char buf[400]; // a fixed 1e308 with decimals fits
    if (const std::to_chars_result r = std::to_chars(buf, buf + sizeof buf, v, format, precision); r.ec == std::errc())
        return std::string(buf, r.ptr);
    std::string big(330 + static_cast<size_t>(std::max(precision, 0)), '\0'); // a precision in the hundreds
    big.resize(
        static_cast<size_t>(std::to_chars(big.data(), big.data() + big.size(), v, format, precision).ptr - big.data()));
    return big;
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
    if (unit == 0)
        return std::to_string(bytes) + " B";
    if (binary && bytes > 0 && bytes < (Bytes(1) << 53)) {
        // bytes / 1024^unit is exact in a double: "%.2f" rounds bytes x 100 / 2^(10 unit)
        // half to even, which integers do exactly and ten times faster than to_chars
        // (bytes < 2^53, so bytes x 100 < 2^60 fits 64 bits).
        const int shift = 10 * unit;
        const unsigned long long x = static_cast<unsigned long long>(bytes) * 100;
        unsigned long long q = x >> shift;
        const unsigned long long rem = x - (q << shift);
        const unsigned long long half = 1ULL << (shift - 1);
        if (rem > half || (rem == half && (q & 1) != 0))
            ++q;
        const unsigned cents = static_cast<unsigned>(q % 100);
        return std::to_string(q / 100)
            .append(1, '.')
            .append(1, char('0' + cents / 10))
            .append(1, char('0' + cents % 10))
            .append(" ")
            .append(binaryUnits[unit]);
    }
    return formatDouble(v, std::chars_format::fixed, 2)
        .append(" ")
        .append(binary ? binaryUnits[unit] : decimalUnits[unit]);
}

std::string formatBytesApart(Bytes bytes, Bytes other)
{
    std::string text = formatBytes(bytes);
    if (bytes == other || text != formatBytes(other))
        return text;
    // Same figure at two decimals: more decimals of the same unit until they differ.
    int unit = 0;
    double v = static_cast<double>(bytes), w = static_cast<double>(other);
    for (; std::fabs(v) >= 1024.0 && unit < 6; ++unit)
        v /= 1024.0, w /= 1024.0;
    static const char* const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
    for (int decimals = 3; decimals <= 9; ++decimals) {
        std::string a = formatDouble(v, std::chars_format::fixed, decimals);
        if (a != formatDouble(w, std::chars_format::fixed, decimals))
            return a.append(" ").append(units[unit]);
    }
    return formatCount(bytes) + " B";
}

std::string formatCount(Count n)
{
    // The magnitude as unsigned: -INT64_MIN does not fit in a Count.
    const auto magnitude = n < 0 ? std::uint64_t(0) - static_cast<std::uint64_t>(n) : static_cast<std::uint64_t>(n);
    char digits[24];
    const int count = static_cast<int>(std::to_chars(digits, digits + sizeof digits, magnitude).ptr - digits);
    char out[32]; // 20 digits, 6 commas and the sign
    int at = 0;
    if (n < 0)
        out[at++] = '-';
    for (int i = 0; i < count; ++i) {
        if (i != 0 && (count - i) % 3 == 0)
            out[at++] = ',';
        out[at++] = digits[i];
    }
    return std::string(out, static_cast<size_t>(at));
}

std::string formatSeconds(double seconds, int decimals)
{
    // Never "1.434e+05 s" or "0.007663 s": the unit a reader thinks in, 3-4 digits.
    const double a = std::fabs(seconds);
    if (a > 0 && a < 1e-3)
        return formatDouble(seconds * 1e6, std::chars_format::fixed, a < 1e-5 ? 2 : 0) + " \u00b5s";
    if (a < 1)
        return formatDouble(seconds * 1e3, std::chars_format::fixed, a < 0.01 ? 2 : (a < 0.1 ? 1 : 0)) + " ms";
    if (a < 120)
        return formatDouble(seconds, std::chars_format::fixed, decimals) + " s";
    if (a < 2 * 3600.0)
        return formatDouble(seconds / 60, std::chars_format::fixed, 1) + " min";
    if (a < 3 * 86400.0)
        return formatDouble(seconds / 3600, std::chars_format::fixed, 1) + " h";
    return formatDouble(seconds / 86400, std::chars_format::fixed, 1) + " days";
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
    return formatDouble(flops, std::chars_format::general, 3).append(" ").append(units[unit]);
}

} // namespace vramlab
