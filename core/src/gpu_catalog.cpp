// SPDX-License-Identifier: MIT
#include "vramlab/gpu_catalog.h"

#include <algorithm>
#include <cctype>

namespace vramlab {

double GpuSpec::peakTflops(DType compute) const
{
    switch (compute) {
    case DType::Fp8:
        if (fp8Tflops > 0)
            return fp8Tflops;
        [[fallthrough]];
    case DType::Bf16:
        if (bf16Tflops > 0)
            return bf16Tflops;
        [[fallthrough]];
    case DType::Fp16:
        if (fp16Tflops > 0)
            return fp16Tflops;
        [[fallthrough]];
    case DType::Fp32:
        return tf32Tflops > 0 ? tf32Tflops : fp32Tflops; // PyTorch allows TF32 matmuls
    case DType::Int8:
    case DType::Int4:
    case DType::Nf4:
    case DType::Nf4NoDq:
        return int8Tops > 0 ? int8Tops : fp16Tflops;
    }
    return fp32Tflops;
}

const std::vector<GpuSpec>& gpuCatalog()
{
    // Vendor datasheets, dense (no 2:4 sparsity) tensor-core peaks. Memory is what the
    // driver reports (nvidia-smi "MiB"), which is what an allocation can ever reach.
    // Interconnect is per direction: NVLink 3 300, NVLink 4 450, NVLink 5 900 GB/s;
    // PCIe 4 x16 32, PCIe 5 x16 64 GB/s.
    static const std::vector<GpuSpec> catalog = {
        {"a100-40gb", "NVIDIA A100 SXM4 40GB", 40960 * kMiB, 19.5, 156, 312, 312, 0, 624, 1555, 300, 32},
        {"a100-80gb", "NVIDIA A100 SXM4 80GB", 81920 * kMiB, 19.5, 156, 312, 312, 0, 624, 2039, 300, 32},
        {"h100-sxm-80gb", "NVIDIA H100 SXM5 80GB", 81559 * kMiB, 67, 494.7, 989.4, 989.4, 1978.9, 1978.9, 3350, 450, 64},
        {"h100-pcie-80gb", "NVIDIA H100 PCIe 80GB", 81559 * kMiB, 51.2, 378, 756, 756, 1513, 1513, 2000, 64, 64},
        {"h200-141gb", "NVIDIA H200 SXM 141GB", 143771 * kMiB, 67, 494.7, 989.4, 989.4, 1978.9, 1978.9, 4800, 450, 64},
        {"b200-180gb", "NVIDIA B200 180GB", 183359 * kMiB, 80, 1100, 2250, 2250, 4500, 4500, 8000, 900, 64},
        {"l4-24gb", "NVIDIA L4 24GB", 23034 * kMiB, 30.3, 60, 121, 121, 242.5, 242.5, 300, 32, 32},
        {"l40s-48gb", "NVIDIA L40S 48GB", 46068 * kMiB, 91.6, 183, 362.05, 362.05, 733, 733, 864, 32, 32},
        {"rtx-4090-24gb", "NVIDIA GeForce RTX 4090 24GB", 24564 * kMiB, 82.6, 82.6, 165.2, 165.2, 330.3, 660.6, 1008, 32, 32},
        {"a10-24gb", "NVIDIA A10 24GB", 23028 * kMiB, 31.2, 62.5, 125, 125, 0, 250, 600, 32, 32},
        {"v100-32gb", "NVIDIA V100 SXM2 32GB", 32768 * kMiB, 15.7, 0, 0, 125, 0, 0, 900, 150, 16},
        {"mi300x-192gb", "AMD Instinct MI300X 192GB", 192 * kGiB, 163.4, 653.7, 1307.4, 1307.4, 2614.9, 2614.9, 5300, 448, 64},
    };
    return catalog;
}

std::optional<GpuSpec> findGpu(std::string_view name)
{
    for (const GpuSpec& g : gpuCatalog())
        if (g.name == name)
            return g;
    return std::nullopt;
}

std::optional<GpuSpec> matchGpu(std::string_view deviceName, Bytes totalBytes)
{
    // Lower-case words of the name, split at anything not a letter or digit.
    auto words = [](std::string_view text) {
        std::vector<std::string> out(1);
        for (char c : text) {
            if (std::isalnum(static_cast<unsigned char>(c)))
                out.back() += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            else if (!out.back().empty())
                out.emplace_back();
        }
        if (out.back().empty())
            out.pop_back();
        return out;
    };
    std::vector<std::string> name = words(deviceName);
    name.erase(std::find(name.begin(), name.end(), "mig"), name.end()); // "MIG 3g.40gb" names the instance, not the GPU
    auto has = [&](const std::string& w) { return std::find(name.begin(), name.end(), w) != name.end(); };
    const bool pcie = has("pcie");
    std::optional<GpuSpec> best;
    Bytes bestDistance = 0;
    for (const GpuSpec& g : gpuCatalog()) {
        bool matches = (g.name.find("pcie") != std::string::npos) == pcie;
        bool sameMemoryWord = false; // "80gb" in both names: a MIG instance reports less memory
        for (const std::string& w : words(g.name)) {
            if (w.ends_with("gb"))
                sameMemoryWord = has(w);
            else if (w != "sxm" && w != "pcie" && !has(w))
                matches = false;
        }
        const Bytes distance = sameMemoryWord ? -1 : g.memoryBytes > totalBytes ? g.memoryBytes - totalBytes : totalBytes - g.memoryBytes;
        if (matches && (!best || distance < bestDistance)) {
            best = g;
            bestDistance = distance;
        }
    }
    return best;
}

} // namespace vramlab
