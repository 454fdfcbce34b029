// SPDX-License-Identifier: MIT
#include "vramlab/dtype.h"

#include <array>
#include <utility>

namespace vramlab {

namespace {
constexpr std::array<std::pair<DType, std::string_view>, 8> kNames = { {
    { DType::Fp32, "fp32" },
    { DType::Bf16, "bf16" },
    { DType::Fp16, "fp16" },
    { DType::Fp8, "fp8" },
    { DType::Int8, "int8" },
    { DType::Int4, "int4" },
    { DType::Nf4, "nf4" },
    { DType::Nf4NoDq, "nf4 (no double quantization)" },
} };
} // namespace

double bytesPerElement(DType t)
{
    switch (t) {
    case DType::Fp32:
        return 4;
    case DType::Bf16:
    case DType::Fp16:
        return 2;
    case DType::Fp8:
    case DType::Int8:
        return 1;
    case DType::Int4:
    case DType::Nf4:
    case DType::Nf4NoDq:
        return 0.5;
    }
    return 0;
}

Bytes storageBytes(DType t, Count n)
{
    switch (t) {
    case DType::Fp32:
        return checkedMul(n, 4);
    case DType::Bf16:
    case DType::Fp16:
        return checkedMul(n, 2);
    case DType::Fp8:
        return n;
    case DType::Int8:
        return checkedAdd(n, ceilDiv(n, 4096) * 4);
    case DType::Int4:
        return checkedAdd(ceilDiv(n, 2), ceilDiv(n, 128) * 4);
    case DType::Nf4: {
        const Count blocks = ceilDiv(n, 64);
        return checkedAdd(checkedAdd(ceilDiv(n, 2), blocks), ceilDiv(blocks, 256) * 4);
    }
    case DType::Nf4NoDq: // bitsandbytes quantize_4bit(blocksize=64) without compress_statistics: fp32 absmax per block
        return checkedAdd(ceilDiv(n, 2), ceilDiv(n, 64) * 4);
    }
    return 0;
}

std::string_view toString(DType t)
{
    for (const auto& [d, name] : kNames)
        if (d == t)
            return name;
    return "?";
}

std::optional<DType> parseDType(std::string_view s)
{
    for (const auto& [d, name] : kNames)
        if (name == s)
            return d;
    return std::nullopt;
}

} // namespace vramlab
