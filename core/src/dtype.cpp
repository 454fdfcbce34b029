// SPDX-License-Identifier: MIT
#include "vramlab/dtype.h"

#include "vramlab/choice_names.h"

namespace vramlab {

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
    case DType::Nf4Torchao:
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
    case DType::Nf4Torchao: {
        // torchao/dtypes/nf4tensor.py@77ca57d16844 (the torchao torchtune 1814feb ran with) NF4Tensor.from_tensor
        // with to_nf4's block_size 64, scaler_block_size 256 on a bf16 weight: quantized_data uint8 (two codes a
        // byte), quantized_scalers int8 (one per block), quantization_factor bf16 (one per 256 blocks),
        // scaler_mean (a bf16 scalar) and its own 16-entry bf16 nf4 table. from_tensor asserts that the blocks
        // divide evenly; the estimator refuses a weight where they do not.
        const Count blocks = ceilDiv(n, 64);
        return checkedAdd(checkedAdd(ceilDiv(n, 2), blocks), ceilDiv(blocks, 256) * 2 + 2 + 16 * 2);
    }
    }
    return 0;
}

std::string_view toString(DType t)
{
    return nameOf(kDTypeNames, t);
}

std::optional<DType> parseDType(std::string_view s)
{
    return valueNamed<DType>(kDTypeNames, s);
}

} // namespace vramlab
