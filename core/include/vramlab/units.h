// SPDX-License-Identifier: MIT
#pragma once

#include <charconv>
#include <cstdint>
#include <string>

namespace vramlab {

/// Sizes in bytes and element counts. Signed 64-bit: exact to 9.2e18, enough for
/// 10^15 parameters x 16 bytes and 10^7-token sequences; every product goes through
/// checkedMul so an absurd configuration is an error, never a wrapped number.
using Bytes = std::int64_t;
using Count = std::int64_t;

inline constexpr Bytes kKiB = 1024;
inline constexpr Bytes kMiB = 1024 * kKiB;
inline constexpr Bytes kGiB = 1024 * kMiB;
inline constexpr double kGB = 1e9;

[[noreturn]] void throwSizeOverflow();

/// a * b, throwing SizeOverflow when the result does not fit in 63 bits. Inline: the
/// estimate calls these hundreds of times per slider move.
inline Count checkedMul(Count a, Count b)
{
    Count r = 0;
    if (__builtin_mul_overflow(a, b, &r))
        throwSizeOverflow();
    return r;
}
inline Count checkedMul(Count a, Count b, Count c)
{
    return checkedMul(checkedMul(a, b), c);
}
inline Count checkedMul(Count a, Count b, Count c, Count d)
{
    return checkedMul(checkedMul(a, b, c), d);
}
/// a + b, throwing SizeOverflow on overflow.
inline Count checkedAdd(Count a, Count b)
{
    Count r = 0;
    if (__builtin_add_overflow(a, b, &r))
        throwSizeOverflow();
    return r;
}
inline Count checkedAdd(Count a, Count b, Count c)
{
    return checkedAdd(checkedAdd(a, b), c);
}
/// acc += v, throwing SizeOverflow on overflow.
inline void accumulate(Count& acc, Count v)
{
    acc = checkedAdd(acc, v);
}
/// ceil(a / b) for a >= 0, b > 0.
constexpr Count ceilDiv(Count a, Count b)
{
    return a / b + (a % b != 0 ? 1 : 0);
} // no a + b overflow
/// Round bytes up to a multiple of `granule` bytes.
constexpr Bytes roundUp(Bytes bytes, Bytes granule)
{
    return ceilDiv(bytes, granule) * granule;
}

/// `v` as printf's "%.{precision}g" (general), "%.{precision}f" (fixed) or "%.{precision}e"
/// would write it, through std::to_chars: the same text at a fraction of printf's cost
/// (formulas format dozens of numbers per estimate).
std::string formatDouble(double v, std::chars_format format, int precision);
/// "23.20 GB" (decimal) or "21.61 GiB" (binary), chosen by `binary`.
std::string formatBytes(Bytes bytes, bool binary = true);
/// formatBytes(bytes), with as many more decimals as it takes to differ from `other`'s
/// figure: a fitting and a failing peak never print as the same number.
std::string formatBytesApart(Bytes bytes, Bytes other);
/// "8,030,261,248"
std::string formatCount(Count n);
/// "5.70e+14" style for FLOP counts: "570.1 TFLOP" etc.
std::string formatFlops(double flops);
/// "450 \u00b5s", "7.66 ms", "89 ms", "4.56 s" (`decimals` digits after the point), "39.8 min",
/// "39.8 h", "2.1 days": no exponents, 3-4 significant digits.
std::string formatSeconds(double seconds, int decimals = 2);

} // namespace vramlab
