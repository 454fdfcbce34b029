// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/probe_report.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace vramlab::probe {

/// No driver, no device, or a driver too old for the runtime: exit 3 with this reason.
class NoUsableGpu : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Throws std::runtime_error naming the failed call (a CUDA error once the device is open: exit 1).
void check(int cudaStatus, const char* call);

/// Creates the context on device 0 and describes it (catalog match included).
ProbeDevice openDevice();

/// Never allocate into the last 512 MiB or 2 % of the device, whichever is larger: other
/// processes, the driver and cuBLAS need some, and free memory is not all allocatable.
inline Bytes defaultMarginBytes(Bytes totalBytes)
{
    return std::max<Bytes>(512 * kMiB, totalBytes / 50);
}

/// Free and total device memory now.
struct MemInfo {
    Bytes freeBytes = 0, totalBytes = 0;
};
MemInfo memInfo();

/// Device buffers freed on every path (exceptions included), last first.
class DeviceBuffers {
public:
    DeviceBuffers() = default;
    DeviceBuffers(const DeviceBuffers&) = delete;
    DeviceBuffers& operator=(const DeviceBuffers&) = delete;
    ~DeviceBuffers() { clear(); }
    /// cudaMalloc; nullptr (and the error cleared) when the device refuses.
    void* allocate(Bytes bytes);
    void clear();

private:
    std::vector<void*> m_ptrs;
};

/// Writes `report` or a progress line as one JSON line on stdout, flushed at once so a
/// reader sees it while the probe runs.
void emitJsonLine(const nlohmann::json& line);

} // namespace vramlab::probe
