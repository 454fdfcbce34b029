// SPDX-License-Identifier: MIT
// `bench`: the scenario's own GEMM shapes through cuBLASLt, and a device-to-device copy.
#include "cublaslt_library.h"
#include "cuda_device.h"
#include "probe_commands.h"
#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/gpu_catalog.h"
#include "vramlab/probe_plan.h"
#include "vramlab/scenario_io.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace vramlab::probe {

namespace {

constexpr Bytes kWorkspaceBytes = 32 * kMiB; // cuBLASLt's recommendation for Hopper
constexpr int kWarmupLaunches = 10;
constexpr int kLaunchesPerSample = 10;

/// How one compute dtype is handed to cuBLASLt.
struct GemmTypes {
    const char* name;
    cudaDataType_t ab, d;
    cublasComputeType_t compute;
    int abBytes, dBytes;
    uint32_t pattern; ///< bits of a value near 1.0 in the A/B type (zeros would draw less power)
};

const GemmTypes kTypes[] = {
    { "fp32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 4, 4, 0x3f800000u },
    { "tf32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4, 0x3f800000u },
    { "bf16", CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2, 2, 0x3f80u },
    { "fp16", CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 2, 2, 0x3c00u },
    { "fp8", CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1, 2, 0x38u }, // TN only, bf16 out
};

const GemmTypes& typesNamed(const std::string& name)
{
    for (const GemmTypes& t : kTypes)
        if (name == t.name)
            return t;
    throw InputError("--dtype", "expected one of fp32, tf32, bf16, fp16, fp8, got \"" + name + "\"");
}

double peakOf(const GpuSpec& gpu, const std::string& dtype)
{
    if (dtype == "tf32")
        return gpu.tf32Tflops;
    return gpu.peakTflops(parseDType(dtype).value_or(DType::Bf16));
}

/// Fills `bytes` of device memory with `pattern` (an element of `elementBytes`) varied in
/// its low mantissa bits, from a host staging buffer.
void fill(void* dst, Bytes bytes, const GemmTypes& t)
{
    std::vector<unsigned char> host(static_cast<size_t>(std::min<Bytes>(bytes, 4 * kMiB)));
    for (size_t i = 0; i + static_cast<size_t>(t.abBytes) <= host.size(); i += static_cast<size_t>(t.abBytes)) {
        const uint32_t v = t.pattern | static_cast<uint32_t>((i / static_cast<size_t>(t.abBytes)) & 7);
        std::memcpy(host.data() + i, &v, static_cast<size_t>(t.abBytes)); // little-endian: the low bytes
    }
    for (Bytes done = 0; done < bytes; done += static_cast<Bytes>(host.size())) {
        const size_t n = static_cast<size_t>(std::min<Bytes>(static_cast<Bytes>(host.size()), bytes - done));
        check(
            cudaMemcpy(static_cast<unsigned char*>(dst) + done, host.data(), n, cudaMemcpyHostToDevice), "cudaMemcpy");
    }
}

/// Median milliseconds of one launch of `launch` on `stream`, after warm-up.
template <typename F> double medianMs(cudaStream_t stream, int samples, F launch)
{
    cudaEvent_t start = nullptr, stop = nullptr;
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
    std::vector<double> ms;
    for (int i = 0; i < kWarmupLaunches; ++i)
        launch();
    for (int s = 0; s < samples; ++s) {
        check(cudaEventRecord(start, stream), "cudaEventRecord");
        for (int i = 0; i < kLaunchesPerSample; ++i)
            launch();
        check(cudaEventRecord(stop, stream), "cudaEventRecord");
        check(cudaEventSynchronize(stop), "cudaEventSynchronize");
        float elapsed = 0;
        check(cudaEventElapsedTime(&elapsed, start, stop), "cudaEventElapsedTime");
        ms.push_back(static_cast<double>(elapsed) / kLaunchesPerSample);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

/// Times D (m x n) = A^T B with A stored k x m and B k x n ("TN", the layout FP8 needs).
/// Returns 0 when cuBLASLt has no algorithm for the shape.
double timeGemm(const CublasLtLibrary& lt, cublasLtHandle_t handle, const GemmTypes& t, Count m, Count n, Count k,
    void* a, void* b, void* d, void* workspace, cudaStream_t stream, int samples)
{
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
    cublasLtMatmulPreference_t pref = nullptr;
    const cublasOperation_t transA = CUBLAS_OP_T;
    const size_t wsBytes = kWorkspaceBytes;
    bool ok = lt.matmulDescCreate(&op, t.compute, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS
        && lt.matmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &transA, sizeof transA) == CUBLAS_STATUS_SUCCESS
        && lt.matrixLayoutCreate(&la, t.ab, static_cast<uint64_t>(k), static_cast<uint64_t>(m), k)
            == CUBLAS_STATUS_SUCCESS
        && lt.matrixLayoutCreate(&lb, t.ab, static_cast<uint64_t>(k), static_cast<uint64_t>(n), k)
            == CUBLAS_STATUS_SUCCESS
        && lt.matrixLayoutCreate(&ld, t.d, static_cast<uint64_t>(m), static_cast<uint64_t>(n), m)
            == CUBLAS_STATUS_SUCCESS
        && lt.preferenceCreate(&pref) == CUBLAS_STATUS_SUCCESS
        && lt.preferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsBytes, sizeof wsBytes)
            == CUBLAS_STATUS_SUCCESS;
    cublasLtMatmulHeuristicResult_t heuristic {};
    int found = 0;
    ok = ok && lt.algoGetHeuristic(handle, op, la, lb, ld, ld, pref, 1, &heuristic, &found) == CUBLAS_STATUS_SUCCESS
        && found > 0;
    const float alpha = 1, beta = 0;
    auto launch = [&] {
        return lt.matmul(
            handle, op, &alpha, a, la, b, lb, &beta, d, ld, d, ld, &heuristic.algo, workspace, wsBytes, stream);
    };
    // One checked launch first: a launch that fails returns at once and would time as "fast".
    ok = ok && launch() == CUBLAS_STATUS_SUCCESS;
    const double ms = ok ? medianMs(stream, samples, launch) : 0;
    if (pref)
        lt.preferenceDestroy(pref);
    for (cublasLtMatrixLayout_t l : { la, lb, ld })
        if (l)
            lt.matrixLayoutDestroy(l);
    if (op)
        lt.matmulDescDestroy(op);
    return ms;
}

/// Median GB/s of a device-to-device cudaMemcpyAsync of `bytes`, each byte counted once.
double timeCopy(Bytes bytes, cudaStream_t stream, int samples)
{
    DeviceBuffers buffers;
    void* src = buffers.allocate(bytes);
    void* dst = buffers.allocate(bytes);
    if (!src || !dst)
        return 0;
    check(cudaMemset(src, 1, static_cast<size_t>(bytes)), "cudaMemset");
    const double ms = medianMs(stream, samples,
        [&] { cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes), cudaMemcpyDeviceToDevice, stream); });
    return ms > 0 ? static_cast<double>(bytes) / (ms * 1e-3) / kGB : 0;
}

} // namespace

int runBench(const std::vector<std::string>& args)
{
    const Arguments a = parseArguments(args, true, { "--dtype", "--samples" }, {});
    const Scenario scenario = loadScenarioFile(a.scenarioFile);
    Report report;
    GemmPlan plan;
    try {
        report = estimate(scenario);
        plan = probeGemmPlan(scenario, report);
    } catch (const InputError& e) {
        throw e.withFile(a.scenarioFile);
    }
    std::string dtype = std::string(toString(plan.compute));
    if (const std::string* d = a.value("--dtype"))
        dtype = *d;
    // Quantized serving weights are dequantized for their GEMMs (bitsandbytes, GPTQ kernels aside).
    const bool dequantized = dtype == "int8" || dtype == "int4" || dtype == "nf4";
    const GemmTypes* types = &typesNamed(dequantized ? "bf16" : dtype);
    const int samples = a.value("--samples") ? int(parseInteger("--samples", *a.value("--samples"), 1, 1000)) : 7;
    const Output out { a.json };

    ProbeReport rep = startReport("bench", scenario.name);
    ProbeBench& bench = rep.bench.emplace();
    bench.notes = plan.notes;
    if (types->ab == CUDA_R_8F_E4M3 && rep.device.ccMajor * 10 + rep.device.ccMinor < 89) {
        bench.notes.push_back("fp8 GEMMs need compute capability 8.9 or newer: timed in bf16");
        types = &typesNamed("bf16");
    } else if (dequantized) {
        bench.notes.push_back(dtype + " weights are dequantized to bf16 for their GEMMs: timed in bf16");
    }
    bench.dtype = types->name;
    const std::optional<GpuSpec> gpu = findGpu(rep.device.catalogGpu);
    bench.peakTflops = gpu ? peakOf(*gpu, bench.dtype) : 0;
    bench.catalogBandwidthGBs = gpu ? gpu->memoryBandwidthGBs : 0;
    bench.predictedStepTimeS = report.flops.stepTimeS;
    bench.assumedMfu = report.flops.efficiency;

    const Bytes margin = defaultMarginBytes(rep.device.totalBytes);
    cudaStream_t stream = nullptr;
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    const CublasLtLibrary lt;
    if (!lt.loaded())
        bench.gemmError = lt.error();
    cublasLtHandle_t handle = nullptr;
    if (lt.loaded() && lt.create(&handle) != CUBLAS_STATUS_SUCCESS)
        bench.gemmError = "cublasLtCreate failed";

    const Count shapes = static_cast<Count>(plan.shapes.size());
    double flopsPerStep = 0;
    for (Count i = 0; handle && i < shapes; ++i) {
        GemmShape s = plan.shapes[static_cast<size_t>(i)];
        out.progress("timing " + s.layer + " " + std::string(toString(s.pass)), i, shapes);
        if (types->ab == CUDA_R_8F_E4M3) { // FP8 needs dimensions in multiples of 16
            s.m = roundUp(s.m, 16), s.n = roundUp(s.n, 16), s.k = roundUp(s.k, 16);
        }
        const Bytes aBytes = checkedMul(s.m, s.k, types->abBytes), bBytes = checkedMul(s.k, s.n, types->abBytes);
        const Bytes dBytes = checkedMul(s.m, s.n, types->dBytes);
        if (aBytes + bBytes + dBytes + kWorkspaceBytes > memInfo().freeBytes - margin) {
            bench.notes.push_back(
                s.layer + " " + std::string(toString(s.pass)) + ": operands do not fit next to the margin, not timed");
            continue;
        }
        DeviceBuffers buffers;
        void* pa = buffers.allocate(aBytes);
        void* pb = buffers.allocate(bBytes);
        void* pd = buffers.allocate(dBytes);
        void* ws = buffers.allocate(kWorkspaceBytes);
        if (!pa || !pb || !pd || !ws) {
            bench.notes.push_back(s.layer + " " + std::string(toString(s.pass)) + ": cudaMalloc failed, not timed");
            continue;
        }
        fill(pa, aBytes, *types);
        fill(pb, bBytes, *types);
        const double ms = timeGemm(lt, handle, *types, s.m, s.n, s.k, pa, pb, pd, ws, stream, samples);
        if (ms <= 0) {
            bench.notes.push_back(
                s.layer + " " + std::string(toString(s.pass)) + ": no cuBLASLt algorithm for this shape and dtype");
            continue;
        }
        bench.gemms.push_back(
            { s.layer, std::string(toString(s.pass)), s.m, s.n, s.k, s.perStep, ms, s.flops() / (ms * 1e-3) / 1e12 });
        bench.gemmStepTimeS += static_cast<double>(s.perStep) * ms * 1e-3;
        flopsPerStep += static_cast<double>(s.perStep) * s.flops();
    }
    if (handle)
        lt.destroy(handle);
    if (bench.gemmStepTimeS > 0 && bench.peakTflops > 0)
        bench.mfuCeiling = flopsPerStep / bench.gemmStepTimeS / (bench.peakTflops * 1e12);

    // Device-to-device copy well above L2 (50 MB on H100): 1 GiB, less on a small device.
    out.progress("timing device-to-device copy", shapes, shapes);
    bench.copyBytes = std::min<Bytes>(kGiB, (memInfo().freeBytes - margin) / 2 / kMiB * kMiB);
    if (bench.copyBytes >= 64 * kMiB)
        bench.copyGBs = timeCopy(bench.copyBytes, stream, samples);
    else
        bench.copyBytes = 0;
    cudaStreamDestroy(stream);
    out.report(rep);
    if (!bench.gemmError.empty()) {
        std::fprintf(stderr, "vramlab-probe: GEMMs could not be timed: %s\n", bench.gemmError.c_str());
        return 3;
    }
    return 0;
}

} // namespace vramlab::probe
