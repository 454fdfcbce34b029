// SPDX-License-Identifier: MIT
#include "cuda_device.h"

#include "vramlab/gpu_catalog.h"

#include <cuda_runtime_api.h>

#include <cstdio>

namespace vramlab::probe {

void check(int status, const char* call)
{
    const auto e = static_cast<cudaError_t>(status);
    if (e == cudaSuccess)
        return;
    cudaGetLastError(); // clear a non-sticky error
    throw std::runtime_error(std::string(call) + ": " + cudaGetErrorString(e));
}

ProbeDevice openDevice()
{
    ProbeDevice d;
    // The static runtime loads libcuda.so.1 itself: without a driver this succeeds with 0.
    cudaDriverGetVersion(&d.driverVersion);
    cudaRuntimeGetVersion(&d.runtimeVersion);
    if (d.driverVersion == 0)
        throw NoUsableGpu("no NVIDIA driver (libcuda.so.1 could not be loaded)");
    // Until a context exists, any failure means there is no GPU this probe can use.
    auto need = [](cudaError_t e, const char* call) {
        if (e != cudaSuccess) {
            cudaGetLastError();
            throw NoUsableGpu(std::string(call) + ": " + cudaGetErrorString(e));
        }
    };
    int count = 0; // left unwritten on error
    need(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
    if (count == 0)
        throw NoUsableGpu("the driver reports no CUDA device");
    need(cudaSetDevice(0), "cudaSetDevice");
    need(cudaFree(nullptr), "creating the CUDA context"); // the context exists before any measurement

    cudaDeviceProp p {};
    check(cudaGetDeviceProperties(&p, 0), "cudaGetDeviceProperties");
    d.name = p.name;
    d.ccMajor = p.major;
    d.ccMinor = p.minor;
    d.sms = p.multiProcessorCount;
    d.memoryBusBits = p.memoryBusWidth;
    int kHz = 0; // clockRate and memoryClockRate left cudaDeviceProp in CUDA 13
    if (cudaDeviceGetAttribute(&kHz, cudaDevAttrClockRate, 0) == cudaSuccess)
        d.smClockMHz = kHz / 1000;
    if (cudaDeviceGetAttribute(&kHz, cudaDevAttrMemoryClockRate, 0) == cudaSuccess)
        d.memoryClockMHz = kHz / 1000;
    cudaGetLastError();
    const MemInfo mem = memInfo();
    d.totalBytes = mem.totalBytes;
    d.freeBytes = mem.freeBytes;
    d.mig = d.name.find("MIG") != std::string::npos;
    if (const auto gpu = matchGpu(d.name, d.totalBytes))
        d.catalogGpu = gpu->name;
    return d;
}

MemInfo memInfo()
{
    size_t freeBytes = 0, totalBytes = 0;
    check(cudaMemGetInfo(&freeBytes, &totalBytes), "cudaMemGetInfo");
    return { static_cast<Bytes>(freeBytes), static_cast<Bytes>(totalBytes) };
}

void* DeviceBuffers::allocate(Bytes bytes)
{
    void* p = nullptr;
    if (cudaMalloc(&p, static_cast<size_t>(bytes)) != cudaSuccess) {
        cudaGetLastError(); // out of memory is not sticky
        return nullptr;
    }
    m_ptrs.push_back(p);
    return p;
}

void DeviceBuffers::clear()
{
    cudaDeviceSynchronize();
    for (auto it = m_ptrs.rbegin(); it != m_ptrs.rend(); ++it)
        cudaFree(*it);
    m_ptrs.clear();
}

void emitJsonLine(const nlohmann::json& line)
{
    const std::string text = line.dump() + "\n";
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
}

} // namespace vramlab::probe
