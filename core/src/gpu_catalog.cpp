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
    case DType::Nf4Torchao:
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
        { "a100-40gb", "NVIDIA A100 SXM4 40GB", 40960 * kMiB, 19.5, 156, 312, 312, 0, 624, 1555, 300, 32 },
        { "a100-80gb", "NVIDIA A100 SXM4 80GB", 81920 * kMiB, 19.5, 156, 312, 312, 0, 624, 2039, 300, 32 },
        { "h100-sxm-80gb", "NVIDIA H100 SXM5 80GB", 81559 * kMiB, 67, 494.7, 989.4, 989.4, 1978.9, 1978.9, 3350, 450,
            64 },
        { "h100-pcie-80gb", "NVIDIA H100 PCIe 80GB", 81559 * kMiB, 51.2, 378, 756, 756, 1513, 1513, 2000, 64, 64 },
        { "h200-141gb", "NVIDIA H200 SXM 141GB", 143771 * kMiB, 67, 494.7, 989.4, 989.4, 1978.9, 1978.9, 4800, 450,
            64 },
        { "b200-180gb", "NVIDIA B200 180GB", 183359 * kMiB, 80, 1100, 2250, 2250, 4500, 4500, 8000, 900, 64 },
        { "l4-24gb", "NVIDIA L4 24GB", 23034 * kMiB, 30.3, 60, 121, 121, 242.5, 242.5, 300, 32, 32 },
        { "l40s-48gb", "NVIDIA L40S 48GB", 46068 * kMiB, 91.6, 183, 362.05, 362.05, 733, 733, 864, 32, 32 },
        { "rtx-4090-24gb", "NVIDIA GeForce RTX 4090 24GB", 24564 * kMiB, 82.6, 82.6, 165.2, 165.2, 330.3, 660.6, 1008,
            32, 32 },
        { "a10-24gb", "NVIDIA A10 24GB", 23028 * kMiB, 31.2, 62.5, 125, 125, 0, 250, 600, 32, 32 },
        { "v100-32gb", "NVIDIA V100 SXM2 32GB", 32768 * kMiB, 15.7, 0, 0, 125, 0, 0, 900, 150, 16 },
        { "mi300x-192gb", "AMD Instinct MI300X 192GB", 192 * kGiB, 163.4, 653.7, 1307.4, 1307.4, 2614.9, 2614.9, 5300,
            448, 64 },

        // Added for issue 16; the sources are listed per entry and in the README's table.
        // Dense peaks: where a vendor quotes only sparse figures (marked *), the entry is half
        // of it. GeForce tensor rates are the FP32-accumulate ones (what PyTorch's bf16/fp16
        // GEMMs use; half the FP16-accumulate rate), as for rtx-4090-24gb. Memory is the
        // "MiB" total of a published nvidia-smi output, with ECC at the card's default.
        // PCIe cards whose NVLink bridge joins only two of them state PCIe (as h100-pcie-80gb
        // does): the planner uses one bandwidth for every collective up to 8-way TP.
        // PCIe 3 x16 16, PCIe 4 x16 32, PCIe 5 x16 64 GB/s per direction.

        // NVIDIA Ampere GA102 GPU Architecture whitepaper, "RTX 3090" column: FP32 35.6,
        // FP16/BF16 tensor with FP32 accumulate 71 (142*), TF32 35.6 (71*), INT8 284 (568*),
        // 936 GB/s; no FP8. Memory: nvidia-smi "24576MiB", https://github.com/noonghunna/club-3090/issues/390
        { "rtx-3090-24gb", "NVIDIA GeForce RTX 3090 24GB", 24576 * kMiB, 35.6, 35.6, 71, 71, 0, 284, 936, 32, 32 },
        // NVIDIA Ada Lovelace GPU Architecture whitepaper, "RTX 3090 Ti" column (vs RTX 4090): FP32 40,
        // FP16/BF16 with FP32 accumulate 80 (160*), TF32 40 (80*), INT8 320 (640*), 1008 GB/s.
        // Memory: "24564 MiB", https://github.com/noonghunna/club-3090/issues/353
        { "rtx-3090-ti-24gb", "NVIDIA GeForce RTX 3090 Ti 24GB", 24564 * kMiB, 40, 40, 80, 80, 0, 320, 1008, 32, 32 },
        // Ada whitepaper, appendix table "RTX 4080 16GB": FP32 48.7, FP16/BF16 with FP32
        // accumulate 97.5 (194.9*), FP8 with FP32 accumulate 194.9 (389.9*), TF32 48.7 (97.5*),
        // INT8 389.9 (779.8*), 716.8 GB/s. Memory: nvidia-smi "16376MiB" (public GitHub capture).
        { "rtx-4080-16gb", "NVIDIA GeForce RTX 4080 16GB", 16376 * kMiB, 48.7, 48.7, 97.5, 97.5, 194.9, 389.9, 716.8,
            32, 32 },
        // NVIDIA RTX Blackwell GPU Architecture whitepaper, appendix table "RTX 5090": FP32 104.8,
        // FP16/BF16 with FP32 accumulate 209.5 (419*), FP8 with FP32 accumulate 419 (838*),
        // TF32 104.8 (209.5*), INT8 838 (1676*), 1792 GB/s, PCIe 5. Memory: nvidia-smi
        // "32607MiB", https://github.com/noonghunna/club-3090/issues/741
        { "rtx-5090-32gb", "NVIDIA GeForce RTX 5090 32GB", 32607 * kMiB, 104.8, 104.8, 209.5, 209.5, 419, 838, 1792, 64,
            64 },
        // NVIDIA RTX A6000 datasheet: FP32 38.7, tensor 309.7* (FP16; dense 154.8; TF32 half,
        // INT8 twice the FP16 rate on GA102), 768 GB/s; no FP8. Memory: nvidia-smi "49140MiB"
        // (ECC off, the default; public GitHub capture).
        { "rtx-a6000-48gb", "NVIDIA RTX A6000 48GB", 49140 * kMiB, 38.7, 77.4, 154.8, 154.8, 0, 309.7, 768, 32, 32 },
        // NVIDIA RTX 6000 Ada Generation datasheet: FP32 91.1, tensor 1457.0* (FP8; dense 728.5,
        // FP16/BF16 364.25, TF32 182.1; full-rate FP32 accumulate on the professional card),
        // 960 GB/s. Memory: nvidia-smi "49140MiB" (ECC off, the default; public GitHub capture).
        { "rtx-6000-ada-48gb", "NVIDIA RTX 6000 Ada Generation 48GB", 49140 * kMiB, 91.1, 182.1, 364.25, 364.25, 728.5,
            728.5, 960, 32, 32 },
        // NVIDIA A40 datasheet: FP32 37.4, TF32 74.8, BF16/FP16 149.7, INT8 299.3 TOPS (dense;
        // twice with sparsity), 696 GB/s, PCIe 4 (NVLink bridge pairs two cards); no FP8.
        // Memory: nvidia-smi "46068MiB" (ECC on, the data-center default; public GitHub capture).
        { "a40-48gb", "NVIDIA A40 48GB", 46068 * kMiB, 37.4, 74.8, 149.7, 149.7, 0, 299.3, 696, 32, 32 },
        // NVIDIA L40 datasheet: FP32 90.5, TF32 90.5, BF16/FP16 181.05, FP8 362, INT8 362
        // (dense; twice with sparsity), 864 GB/s, PCIe 4. Memory: nvidia-smi "46068MiB" (ECC on,
        // the default; public GitHub capture), as l40s-48gb.
        { "l40-48gb", "NVIDIA L40 48GB", 46068 * kMiB, 90.5, 90.5, 181.05, 181.05, 362, 362, 864, 32, 32 },
        // NVIDIA T4 datasheet: FP32 8.1, mixed precision FP16/FP32 65, INT8 130 TOPS, 320 GB/s,
        // PCIe 3 x16; no TF32, BF16 or FP8 (bf16 runs at the fp16 rate via peakTflops, as v100).
        // Memory: nvidia-smi "15360MiB", https://github.com/modal-labs/modal-client/pull/2797
        { "t4-16gb", "NVIDIA T4 16GB", 15360 * kMiB, 8.1, 0, 0, 65, 0, 130, 320, 16, 16 },
        // NVIDIA H100 Tensor Core GPU datasheet, "H100 NVL" column: FP32 60, TF32 835*,
        // BF16/FP16 1671*, FP8 3341*, INT8 3341*, 3.9 TB/s, PCIe 5 (NVLink bridge 600 GB/s
        // joins pairs). Memory: nvidia-smi "95830MiB", https://github.com/NVIDIA/gpu-admin-tools/issues/4
        { "h100-nvl-94gb", "NVIDIA H100 NVL 94GB", 95830 * kMiB, 60, 417.5, 835.5, 835.5, 1670.5, 1670.5, 3900, 64,
            64 },
        // One GCD of an AMD Instinct MI250: the OAM's two GCDs are two devices to ROCm and PyTorch,
        // each with half the package (AMD ROCm docs, "AMD Instinct MI250 microarchitecture": OAM
        // matrix FP32 90.5, FP16/BF16/INT8 362.1, 3.2 TB/s = 1.6 per GCD; no TF32 or FP8). FP32 is
        // the matrix rate (what an fp32 GEMM runs at; vector is half). Link: one 50 GB/s Infinity
        // Fabric link between GCDs of different OAMs, the slowest hop of an 8-GCD ring; PCIe 4
        // x16 to the host. Memory: rocminfo's pool of a 104-CU GCD, 67092480 KB (65520 MiB),
        // https://github.com/ROCm/rocm_smi_lib/issues/160
        { "mi250-gcd-64gb", "AMD Instinct MI250 (one GCD) 64GB", 65520 * kMiB, 45.25, 0, 181.05, 181.05, 0, 181.05,
            1600, 50, 32 },
    };
    return catalog;
}

std::optional<GpuSpec> findGpu(std::string_view name)
{
    for (const GpuSpec& g : gpuCatalog())
        if (g.name == name)
            return g;
    // The name without its memory suffix ("rtx-4090" for "rtx-4090-24gb") when only one entry has it.
    std::optional<GpuSpec> only;
    for (const GpuSpec& g : gpuCatalog())
        if (!name.empty() && g.name.size() > name.size() && g.name.starts_with(name) && g.name[name.size()] == '-') {
            if (only)
                return std::nullopt;
            only = g;
        }
    return only;
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
    // Words of a catalog name that say which form of the GPU, not which GPU: a device name lacks them.
    auto form = [](const std::string& w) { return w == "sxm" || w == "pcie" || w == "gcd"; };
    const bool pcie = has("pcie");
    std::optional<GpuSpec> best;
    Bytes bestDistance = 0;
    int bestModelWords = 0;
    for (const GpuSpec& g : gpuCatalog()) {
        bool matches = (g.name.find("pcie") != std::string::npos) == pcie;
        bool sameMemoryWord = false; // "80gb" in both names: a MIG instance reports less memory
        int modelWords = 0; // "rtx 3090 ti" is a closer match than "rtx 3090", whatever the memory
        for (const std::string& w : words(g.name)) {
            if (w.ends_with("gb"))
                sameMemoryWord = has(w);
            else if (!form(w) && !has(w))
                matches = false;
            else if (!form(w))
                ++modelWords;
        }
        const Bytes distance = sameMemoryWord ? -1
            : g.memoryBytes > totalBytes      ? g.memoryBytes - totalBytes
                                              : totalBytes - g.memoryBytes;
        if (matches
            && (!best || modelWords > bestModelWords || (modelWords == bestModelWords && distance < bestDistance))) {
            best = g;
            bestDistance = distance;
            bestModelWords = modelWords;
        }
    }
    return best;
}

} // namespace vramlab
