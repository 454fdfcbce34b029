// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/dtype.h"
#include "vramlab/units.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vramlab {

/// One accelerator: memory, dense (non-sparse) peak throughput per dtype and bandwidths.
struct GpuSpec {
    std::string name; ///< catalog key, "h100-sxm-80gb"
    std::string displayName; ///< "NVIDIA H100 SXM 80GB"
    Bytes memoryBytes = 0; ///< total device memory as the driver reports it
    double fp32Tflops = 0; ///< dense peaks, TFLOP/s (0 = not supported)
    double tf32Tflops = 0;
    double bf16Tflops = 0;
    double fp16Tflops = 0;
    double fp8Tflops = 0;
    double int8Tops = 0;
    double memoryBandwidthGBs = 0; ///< HBM/GDDR, GB/s
    double interconnectGBs = 0; ///< GPU-to-GPU per direction (NVLink/xGMI, else PCIe), GB/s
    double hostLinkGBs = 0; ///< host link per direction (PCIe), GB/s

    /// Peak for a compute dtype; bf16 falls back to fp16 and fp16 to fp32 where absent.
    double peakTflops(DType compute) const;
};

/// The built-in catalog (A100 40/80, H100 SXM/PCIe/NVL, H200, B200, L4, L40, L40S, A40, T4,
/// RTX 3090/4090/5090, RTX A6000, RTX 6000 Ada, MI300X, ...).
const std::vector<GpuSpec>& gpuCatalog();
/// By catalog name, or by that name without its memory suffix where one entry alone has it
/// ("rtx-4090" is rtx-4090-24gb; "a100" names two and finds none).
std::optional<GpuSpec> findGpu(std::string_view name);
/// The catalog entry of a device as the driver names it ("NVIDIA H100 80GB HBM3",
/// "NVIDIA A100-SXM4-80GB MIG 3g.40gb"): the key's model words must all be in the name
/// (h100, rtx + 4090); a PCIe entry needs "pcie" in the name; then the entry with the most
/// model words ("rtx 3090 ti" over "rtx 3090", "h100 nvl" over "h100"); then the closest memory size.
std::optional<GpuSpec> matchGpu(std::string_view deviceName, Bytes totalBytes);

} // namespace vramlab
