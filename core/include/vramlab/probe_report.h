// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/units.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace vramlab {

/// Largest probe report read (a report is tens of kilobytes).
inline constexpr std::size_t kMaxProbeReportFileBytes = 16 * 1024 * 1024;
inline constexpr int kProbeReportVersion = 1;

/// What `vramlab-probe info` found: the device and the software that drives it.
struct ProbeDevice {
    std::string name; ///< "NVIDIA H100 80GB HBM3" (a MIG instance's name includes its profile)
    int driverVersion = 0; ///< CUDA driver API version, 12080 = 12.8
    int runtimeVersion = 0; ///< CUDA runtime the probe was built with
    int ccMajor = 0, ccMinor = 0; ///< compute capability
    int sms = 0;
    int smClockMHz = 0, memoryClockMHz = 0, memoryBusBits = 0;
    Bytes totalBytes = 0, freeBytes = 0;
    bool mig = false;
    std::string catalogGpu; ///< catalog key it matches, empty when none
};

/// One report component in `fit`: what the estimate predicted and what the device gave.
struct ProbeFitComponent {
    std::string key; ///< report component key: weights, gradients, activations, cuda_context, ...
    std::string label; ///< "Weights", "CUDA context" (the estimate's label)
    Bytes predictedBytes = 0;
    Bytes requestedBytes = 0; ///< sum of the cudaMalloc sizes (0 for the context, which is measured)
    Bytes measuredBytes = 0; ///< fall of cudaMemGetInfo's free memory while it was allocated
    Count buffers = 0; ///< planned buffers
    Count allocatedBuffers = 0;
};

struct ProbeFit {
    Bytes contextBytes = 0; ///< total - free once the context exists (includes other processes)
    Bytes granularityBytes = 0; ///< free-memory fall of a 1-byte cudaMalloc
    Bytes safetyMarginBytes = 0; ///< never allocated into (unless oom_test)
    Bytes freeBeforeBytes = 0;
    bool oomTest = false;
    bool fits = false; ///< every planned buffer was allocated and touched
    bool predictedFits = false; ///< the estimate's verdict for the catalog GPU of the scenario
    std::string stoppedAt; ///< the buffer that did not fit, empty when all did
    std::vector<ProbeFitComponent> components;
};

struct ProbeGemm {
    std::string layer, pass; ///< "qkv", "forward" (see GemmShape)
    Count m = 0, n = 0, k = 0;
    Count perStep = 0;
    double ms = 0; ///< median time of one launch
    double tflops = 0; ///< achieved
};

struct ProbeBench {
    std::string dtype; ///< compute dtype timed: fp32, tf32, bf16, fp16, fp8
    double peakTflops = 0; ///< the catalog's dense peak for that dtype (0: no catalog entry)
    std::string gemmError; ///< why no GEMM was timed (no cuBLASLt, dtype unsupported), else empty
    std::vector<ProbeGemm> gemms;
    double gemmStepTimeS = 0; ///< sum of per_step x ms: the step's linear layers alone
    double predictedStepTimeS = 0; ///< the estimate's step time at its assumed MFU
    double assumedMfu = 0; ///< that MFU (run.mfu)
    double mfuCeiling = 0; ///< linear-layer FLOPs / gemm_step_time / peak
    Bytes copyBytes = 0; ///< size of the device-to-device copy timed
    double copyGBs = 0; ///< bytes copied per second, each byte once (nvbandwidth convention)
    double catalogBandwidthGBs = 0;
    std::vector<std::string> notes;
};

/// A `vramlab-probe` report: the device, and the fit or bench results of one scenario.
struct ProbeReport {
    std::string command; ///< info, fit or bench
    std::string probeVersion;
    std::string scenario; ///< scenario name (fit, bench)
    ProbeDevice device;
    std::optional<ProbeFit> fit;
    std::optional<ProbeBench> bench;
};

/// Progress line of a running probe: {"progress": {"phase": ..., "done": n, "total": n}}.
struct ProbeProgress {
    std::string phase; ///< "allocating weights", "timing qkv forward", ...
    Count done = 0, total = 0;
};

nlohmann::json probeReportToJson(const ProbeReport& report);
/// Checks every key (type, range, the sections its command needs); throws InputError
/// naming `file` and the key path.
ProbeReport readProbeReport(const nlohmann::json& doc, const std::string& file = {});
ProbeReport loadProbeReportFile(const std::string& path);
nlohmann::json probeProgressToJson(const ProbeProgress& progress);
/// The progress of a line that has a "progress" object; nullopt for any other document.
std::optional<ProbeProgress> readProbeProgress(const nlohmann::json& doc);

} // namespace vramlab
