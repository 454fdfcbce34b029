// SPDX-License-Identifier: MIT
// A fake CUDA runtime for testing vramlab-probe without a GPU: the 22 functions the probe
// calls, over an imaginary device (VRAMLAB_FAKE_GPU_BYTES, default 80 GiB; a 512 MiB
// context; 2 MiB allocation granularity). Pointers are never dereferenced; every copy and
// memset is checked to stay inside a live allocation. At exit, a buffer still allocated
// makes the process exit 99, so "frees everything on every path" is tested.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <unistd.h>

namespace {

constexpr size_t kMiB = 1024 * 1024;
constexpr size_t kGranularity = 2 * kMiB;
constexpr size_t kContext = 512 * kMiB;

struct FakeDevice {
    size_t total = 80 * 1024 * kMiB;
    size_t used = kContext;
    uintptr_t next = 0x7f0000000000;
    std::map<uintptr_t, size_t> live; // base -> requested bytes
    cudaError_t last = cudaSuccess;

    FakeDevice()
    {
        if (const char* bytes = std::getenv("VRAMLAB_FAKE_GPU_BYTES"))
            total = std::strtoull(bytes, nullptr, 10);
    }
    ~FakeDevice()
    {
        if (!live.empty()) {
            std::fprintf(stderr, "fake_cudart: %zu buffers were never freed\n", live.size());
            _exit(99);
        }
    }
    static size_t rounded(size_t bytes) { return (bytes + kGranularity - 1) / kGranularity * kGranularity; }
    /// Whether [p, p + bytes) lies inside one live allocation.
    bool inside(const void* p, size_t bytes) const
    {
        const auto at = reinterpret_cast<uintptr_t>(p);
        auto it = live.upper_bound(at);
        if (it == live.begin())
            return false;
        --it;
        return at + bytes <= it->first + it->second;
    }
    cudaError_t fail(cudaError_t e) { return last = e; }
};

FakeDevice& device()
{
    static FakeDevice d;
    return d;
}

} // namespace

extern "C" {

cudaError_t CUDARTAPI cudaDriverGetVersion(int* v)
{
    return *v = 13000, cudaSuccess;
}
cudaError_t CUDARTAPI cudaRuntimeGetVersion(int* v)
{
    return *v = CUDART_VERSION, cudaSuccess;
}
cudaError_t CUDARTAPI cudaGetDeviceCount(int* n)
{
    return *n = 1, cudaSuccess;
}
cudaError_t CUDARTAPI cudaSetDevice(int d)
{
    return d == 0 ? cudaSuccess : device().fail(cudaErrorInvalidDevice);
}
cudaError_t CUDARTAPI cudaGetDeviceProperties(cudaDeviceProp* p, int)
{
    *p = cudaDeviceProp {};
    std::strcpy(p->name, "NVIDIA H100 80GB HBM3 (fake)");
    p->major = 9;
    p->minor = 0;
    p->multiProcessorCount = 132;
    p->memoryBusWidth = 5120;
    p->totalGlobalMem = device().total;
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaDeviceGetAttribute(int* v, cudaDeviceAttr attr, int)
{
    *v = attr == cudaDevAttrClockRate ? 1980000 : attr == cudaDevAttrMemoryClockRate ? 2619000 : 0;
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaGetLastError(void)
{
    const cudaError_t e = device().last;
    device().last = cudaSuccess;
    return e;
}
const char* CUDARTAPI cudaGetErrorString(cudaError_t e)
{
    return e == cudaErrorMemoryAllocation ? "out of memory" : e == cudaSuccess ? "no error" : "invalid argument";
}
cudaError_t CUDARTAPI cudaMemGetInfo(size_t* freeBytes, size_t* totalBytes)
{
    *freeBytes = device().total - device().used;
    *totalBytes = device().total;
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaMalloc(void** p, size_t bytes)
{
    FakeDevice& d = device();
    const size_t r = FakeDevice::rounded(bytes);
    if (bytes == 0 || r > d.total - d.used)
        return d.fail(cudaErrorMemoryAllocation);
    d.used += r;
    d.live[d.next] = bytes;
    *p = reinterpret_cast<void*>(d.next);
    d.next += r + kGranularity; // a gap, so an overrun is never inside the next buffer
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaFree(void* p)
{
    FakeDevice& d = device();
    if (!p)
        return cudaSuccess;
    auto it = d.live.find(reinterpret_cast<uintptr_t>(p));
    if (it == d.live.end())
        return d.fail(cudaErrorInvalidValue);
    d.used -= FakeDevice::rounded(it->second);
    d.live.erase(it);
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaDeviceSynchronize(void)
{
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaMemset(void* p, int, size_t bytes)
{
    return device().inside(p, bytes) ? cudaSuccess : device().fail(cudaErrorInvalidValue);
}
cudaError_t CUDARTAPI cudaMemcpy(void* dst, const void*, size_t bytes, cudaMemcpyKind kind)
{
    return kind == cudaMemcpyHostToDevice && device().inside(dst, bytes) ? cudaSuccess
                                                                         : device().fail(cudaErrorInvalidValue);
}
cudaError_t CUDARTAPI cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t)
{
    return kind == cudaMemcpyDeviceToDevice && device().inside(dst, bytes) && device().inside(src, bytes)
        ? cudaSuccess
        : device().fail(cudaErrorInvalidValue);
}
cudaError_t CUDARTAPI cudaStreamCreateWithFlags(cudaStream_t* s, unsigned int)
{
    static int stream;
    *s = reinterpret_cast<cudaStream_t>(&stream);
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaStreamDestroy(cudaStream_t)
{
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaEventCreate(cudaEvent_t* e)
{
    static int event;
    *e = reinterpret_cast<cudaEvent_t>(&event);
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaEventRecord(cudaEvent_t, cudaStream_t)
{
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaEventSynchronize(cudaEvent_t)
{
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaEventElapsedTime(float* ms, cudaEvent_t, cudaEvent_t)
{
    return *ms = 1.0f, cudaSuccess;
} // 0.1 ms a launch
cudaError_t CUDARTAPI cudaEventDestroy(cudaEvent_t)
{
    return cudaSuccess;
}

} // extern "C"
