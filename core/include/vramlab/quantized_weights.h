// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/dtype.h"
#include "vramlab/units.h"

#include <optional>
#include <string>
#include <string_view>

namespace vramlab {

/// ggml tensor types (ggml/src/ggml-common.h block layouts).
enum class GgmlType {
    F32,
    F16,
    Bf16,
    Q4_0,
    Q4_1,
    Q5_0,
    Q5_1,
    Q8_0,
    Q2_K,
    Q3_K,
    Q4_K,
    Q5_K,
    Q6_K,
    IQ1_S,
    IQ1_M,
    IQ2_XXS,
    IQ2_XS,
    IQ2_S,
    IQ3_XXS,
    IQ3_S,
    IQ4_NL,
    IQ4_XS
};

struct GgmlTypeInfo {
    GgmlType type;
    std::string_view name; ///< ggml's lower-case name: "q8_0", "q4_K"
    Count blockValues; ///< values per block (1 for the float types)
    Count blockBytes; ///< bytes per block, scales and minimums included
};

const GgmlTypeInfo& ggmlTypeInfo(GgmlType t);
/// "q8_0", "Q8_0", "f16", "IQ4_XS" (case-insensitive).
std::optional<GgmlType> parseGgmlType(std::string_view name);
/// Bytes of a row of `n` values (n is rounded up to whole blocks, as ggml_row_size would refuse).
Bytes ggmlBytes(GgmlType t, Count n);

/// How a checkpoint's linear weights are stored once the engine has loaded them.
enum class QuantKind { None, Awq, Gptq, Marlin, Fp8, Fp8Block, BnbNf4, BnbInt8, Gguf };

struct WeightQuant {
    QuantKind kind = QuantKind::None;
    Count groupSize = 128; ///< AWQ/GPTQ/Marlin group (-1: one group per column)
    Count fp8Block = 128; ///< Fp8Block: square blocks of this side
    std::string ggufFileType; ///< Gguf: "Q4_K_M", "Q5_K_M" or a plain type "Q8_0", "F16"
};

std::string quantizationName(const WeightQuant& q);

/// Bytes of one linear layer's weight, `in` x `out`, as loaded (vLLM's create_weights of
/// each method; sources in quantized_weights.cpp). `dtype`: the unquantized type.
Bytes quantizedLinearBytes(const WeightQuant& q, Count in, Count out, DType dtype);

/// The ggml type llama.cpp's quantizer gives one 2-D tensor of a GGUF file type
/// (src/llama-quant.cpp, llama_tensor_get_type). `module`: "attn_v", "ffn_down",
/// "output", "token_embd" or another; `layer`/`layers` for the mixes that vary by layer;
/// `cols`: the row length (k-quants need a multiple of 256).
GgmlType ggufTensorType(std::string_view fileType, std::string_view module, Count layer, Count layers, Count cols);

/// True when `fileType` is a GGUF file type this model reproduces.
bool knownGgufFileType(std::string_view fileType);

} // namespace vramlab
