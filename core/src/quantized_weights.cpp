// SPDX-License-Identifier: MIT
#include "vramlab/quantized_weights.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace vramlab {

namespace {

// Block layouts of ggml/src/ggml-common.h (ggml-org/llama.cpp, the block_* structs; QK_K = 256):
// block_q4_0 {d; qs[16]} = 18 B per 32, block_q8_0 {d; qs[32]} = 34 B per 32,
// block_q4_K {d, dmin, scales[12], qs[128]} = 144 B per 256, block_q6_K {ql[128], qh[64],
// scales[16], d} = 210 B per 256, block_iq4_xs {d, scales_h, scales_l[4], qs[128]} = 136 B per 256, ...
constexpr std::array<GgmlTypeInfo, 22> kTypes = { {
    { GgmlType::F32, "f32", 1, 4 },
    { GgmlType::F16, "f16", 1, 2 },
    { GgmlType::Bf16, "bf16", 1, 2 },
    { GgmlType::Q4_0, "q4_0", 32, 18 },
    { GgmlType::Q4_1, "q4_1", 32, 20 },
    { GgmlType::Q5_0, "q5_0", 32, 22 },
    { GgmlType::Q5_1, "q5_1", 32, 24 },
    { GgmlType::Q8_0, "q8_0", 32, 34 },
    { GgmlType::Q2_K, "q2_K", 256, 84 },
    { GgmlType::Q3_K, "q3_K", 256, 110 },
    { GgmlType::Q4_K, "q4_K", 256, 144 },
    { GgmlType::Q5_K, "q5_K", 256, 176 },
    { GgmlType::Q6_K, "q6_K", 256, 210 },
    { GgmlType::IQ1_S, "iq1_s", 256, 50 },
    { GgmlType::IQ1_M, "iq1_m", 256, 56 },
    { GgmlType::IQ2_XXS, "iq2_xxs", 256, 66 },
    { GgmlType::IQ2_XS, "iq2_xs", 256, 74 },
    { GgmlType::IQ2_S, "iq2_s", 256, 82 },
    { GgmlType::IQ3_XXS, "iq3_xxs", 256, 98 },
    { GgmlType::IQ3_S, "iq3_s", 256, 110 },
    { GgmlType::IQ4_NL, "iq4_nl", 32, 18 },
    { GgmlType::IQ4_XS, "iq4_xs", 256, 136 },
} };

std::string lower(std::string_view s)
{
    std::string out(s);
    std::transform(
        out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

/// llama-quant.cpp use_more_bits(i_layer, n_layers): the first and last eighth and every
/// third layer in between get the bigger type in the _M mixes.
bool useMoreBits(Count i, Count n)
{
    return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

/// llama-quant.cpp: a k-quant needs rows that are a multiple of QK_K (256); otherwise the
/// quantizer falls back ("tensor cols ... are not divisible by 256, required for ...").
GgmlType fallbackIfIncompatible(GgmlType t, Count cols)
{
    if (ggmlTypeInfo(t).blockValues != 256 || cols % 256 == 0)
        return t;
    switch (t) {
    case GgmlType::Q2_K:
    case GgmlType::Q3_K:
    case GgmlType::IQ4_XS:
        return GgmlType::IQ4_NL;
    case GgmlType::Q4_K:
        return GgmlType::Q5_0;
    case GgmlType::Q5_K:
        return GgmlType::Q5_1;
    case GgmlType::Q6_K:
        return GgmlType::Q8_0;
    default:
        return GgmlType::Q8_0;
    }
}

} // namespace

const GgmlTypeInfo& ggmlTypeInfo(GgmlType t)
{
    for (const GgmlTypeInfo& i : kTypes)
        if (i.type == t)
            return i;
    return kTypes[1];
}

std::optional<GgmlType> parseGgmlType(std::string_view name)
{
    const std::string n = lower(name);
    for (const GgmlTypeInfo& i : kTypes)
        if (lower(i.name) == n)
            return i.type;
    return std::nullopt;
}

Bytes ggmlBytes(GgmlType t, Count n)
{
    const GgmlTypeInfo& i = ggmlTypeInfo(t);
    return checkedMul(ceilDiv(n, i.blockValues), i.blockBytes);
}

std::string quantizationName(const WeightQuant& q)
{
    switch (q.kind) {
    case QuantKind::None:
        return "none";
    case QuantKind::Awq:
        return "awq";
    case QuantKind::Gptq:
        return "gptq";
    case QuantKind::Marlin:
        return "marlin";
    case QuantKind::Fp8:
        return "fp8";
    case QuantKind::Fp8Block:
        return "fp8-block";
    case QuantKind::BnbNf4:
        return "bnb-nf4";
    case QuantKind::BnbInt8:
        return "bnb-int8";
    case QuantKind::Gguf:
        return q.ggufFileType;
    }
    return "?";
}

Bytes quantizedLinearBytes(const WeightQuant& q, Count in, Count out, DType dtype)
{
    const Count n = checkedMul(in, out);
    const Count groups = q.groupSize > 0 ? ceilDiv(in, q.groupSize) : 1;
    switch (q.kind) {
    case QuantKind::None:
        return storageBytes(dtype, n);
    case QuantKind::Awq:
        // vllm/model_executor/layers/quantization/awq.py, AWQLinearMethod.create_weights:
        // qweight int32 [in, out/8], qzeros int32 [in/group, out/8], scales fp16 [in/group, out].
        return checkedAdd(n / 2, checkedMul(groups, out / 8 * 4 + out * 2));
    case QuantKind::Gptq:
        // vllm/model_executor/layers/quantization/gptq.py, GPTQLinearMethod.create_weights (4 bits):
        // qweight int32 [in/8, out], g_idx int32 [in], qzeros int32 [in/group, out/8], scales fp16 [in/group, out].
        return checkedAdd(checkedAdd(n / 2, in * 4), checkedMul(groups, out / 8 * 4 + out * 2));
    case QuantKind::Marlin:
        // vllm/model_executor/layers/quantization/marlin.py, MarlinLinearMethod.create_weights:
        // B int32 [in/16, out*16/8] (4 bits a weight), s fp16 [in/group, out]; no zero points.
        return checkedAdd(n / 2, checkedMul(groups, out * 2));
    case QuantKind::Fp8:
        // vllm/model_executor/layers/quantization/fp8.py: fp8 weight, one fp32 weight_scale per
        // tensor (and one fp32 input_scale with static activation scales).
        return checkedAdd(n, 8);
    case QuantKind::Fp8Block:
        // fp8.py with weight_block_size [b, b] (DeepSeek-V3 / Qwen3 FP8 checkpoints):
        // weight_scale_inv fp32 [ceil(out/b), ceil(in/b)].
        return checkedAdd(n, checkedMul(ceilDiv(in, q.fp8Block), ceilDiv(out, q.fp8Block), 4));
    case QuantKind::BnbNf4:
        // bitsandbytes functional.quantize_4bit(blocksize=64, compress_statistics=True), as the
        // pre-quantized checkpoints store it: packed 4-bit weights, one uint8 absmax per 64 values,
        // one fp32 absmax per 256 blocks (vllm/model_executor/model_loader/bitsandbytes_loader.py loads them as
        // stored).
        return storageBytes(DType::Nf4, n);
    case QuantKind::BnbInt8:
        // bitsandbytes Int8Params (LLM.int8): int8 weight, one fp32 scale (SCB) per output row.
        return checkedAdd(n, checkedMul(out, 4));
    case QuantKind::Gguf:
        return 0; // per tensor: ggufTensorType()
    }
    return 0;
}

bool knownGgufFileType(std::string_view fileType)
{
    const std::string f = lower(fileType);
    return f == "q4_k_m" || f == "q5_k_m" || parseGgmlType(f).has_value();
}

GgmlType ggufTensorType(std::string_view fileType, std::string_view module, Count layer, Count layers, Count cols)
{
    // src/llama-quant.cpp (ggml-org/llama.cpp, llama_tensor_get_type, builds b4000-b6000):
    // float files keep every matrix in their type; the output matrix goes to Q6_K unless the base
    // type is Q8_0; Q4_K_M / Q5_K_M raise attn_v and ffn_down to Q6_K on use_more_bits() layers.
    const std::string f = lower(fileType);
    GgmlType base = GgmlType::F16;
    bool mixM = false;
    if (f == "q4_k_m" || f == "q5_k_m") {
        base = f == "q4_k_m" ? GgmlType::Q4_K : GgmlType::Q5_K;
        mixM = true;
    } else if (auto t = parseGgmlType(f)) {
        base = *t;
    }
    const bool floatFile = base == GgmlType::F16 || base == GgmlType::Bf16 || base == GgmlType::F32;
    if (floatFile)
        return base;
    GgmlType t = base;
    if (module == "output")
        t = base == GgmlType::Q8_0 ? GgmlType::Q8_0 : (cols % 256 == 0 ? GgmlType::Q6_K : GgmlType::Q8_0);
    else if (mixM && (module == "attn_v" || module == "ffn_down") && useMoreBits(layer, layers))
        t = GgmlType::Q6_K;
    return fallbackIfIncompatible(t, cols);
}

} // namespace vramlab
