// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/units.h"

#include <optional>
#include <string>
#include <string_view>

namespace vramlab {

/// Storage types of weights, gradients, optimizer states, activations and the KV cache.
enum class DType {
    Fp32,
    Bf16,
    Fp16,
    Fp8,
    Int8,
    Int4,
    Nf4,
    Nf4NoDq,
    Nf4Torchao
}; ///< Nf4: bitsandbytes with double quantization (4.127 bits); Nf4NoDq: fp32 absmax per 64 (4.5 bits);
///< Nf4Torchao: torchao's NF4Tensor (int8 scale per 64, bf16 factor per 256 scales)

/// Bytes of one element for the plain types (fp32 4, bf16/fp16 2, fp8/int8 1).
/// Int4 and NF4 are sub-byte: use storageBytes().
double bytesPerElement(DType t);

/// Exact bytes to store `n` elements of type `t`, including the quantization
/// constants of the block formats:
///  - int4: 4 bits + one fp16 scale and one fp16 zero point per group of 128 (GPTQ/AWQ);
///  - nf4: 4 bits + one 8-bit absmax per block of 64, plus (double quantization,
///    Dettmers et al. 2023) one fp32 absmax per 256 blocks: 4.127 bits per weight;
///  - int8: 8 bits + one fp32 scale per 4096 elements (row-wise LLM.int8 on a 4096 row).
Bytes storageBytes(DType t, Count n);

std::string_view toString(DType t);
std::optional<DType> parseDType(std::string_view s);

} // namespace vramlab
