// SPDX-License-Identifier: MIT
// `fit`: the predicted buffers of one GPU, allocated for real and measured.
#include "cuda_device.h"
#include "probe_commands.h"
#include "vramlab/errors.h"
#include "vramlab/probe_plan.h"
#include "vramlab/scenario_io.h"

#include <cuda_runtime_api.h>

#include <algorithm>

namespace vramlab::probe {

int runFit(const std::vector<std::string>& args)
{
    const Arguments a = parseArguments(args, true, { "--margin-mib" }, { "--test-oom" });
    const Scenario scenario = loadScenarioFile(a.scenarioFile);
    ProbeAllocationPlan plan;
    try {
        plan = probeAllocationPlan(scenario);
    } catch (const InputError& e) {
        throw e.withFile(a.scenarioFile);
    }
    const std::optional<Bytes> margin = a.value("--margin-mib")
        ? std::optional<Bytes>(kMiB * parseInteger("--margin-mib", *a.value("--margin-mib"), 0, 1 << 30))
        : std::nullopt;
    const Output out { a.json };

    ProbeReport rep = startReport("fit", scenario.name);
    ProbeFit& fit = rep.fit.emplace();
    fit.oomTest = a.has("--test-oom");
    fit.predictedFits = plan.report.fits;
    fit.contextBytes = rep.device.totalBytes - rep.device.freeBytes;
    fit.safetyMarginBytes = margin.value_or(defaultMarginBytes(rep.device.totalBytes));

    // The device's allocation granularity: what a 1-byte cudaMalloc takes from free memory.
    {
        DeviceBuffers probeByte;
        const Bytes before = memInfo().freeBytes;
        if (probeByte.allocate(1))
            fit.granularityBytes = before - memInfo().freeBytes;
    }

    // One row per component: the context (measured, not allocated), then the plan's
    // components in the order it allocates them.
    fit.components.push_back({ "cuda_context", "", 0, 0, fit.contextBytes, 0, 0 });
    for (const ProbeBuffer& b : plan.buffers) {
        if (fit.components.back().key != b.component)
            fit.components.push_back({ std::string(b.component), "", 0, 0, 0, 0, 0 });
        ++fit.components.back().buffers;
    }
    // Label and predicted bytes from the report: a top-level component or an overhead part.
    for (ProbeFitComponent& c : fit.components) {
        for (const std::vector<Component>* parts : { &plan.report.components, &plan.report.overheadParts })
            for (const Component& part : *parts)
                if (c.key == part.key) {
                    c.label = part.label;
                    c.predictedBytes = part.bytes;
                }
    }

    DeviceBuffers buffers;
    fit.freeBeforeBytes = memInfo().freeBytes;
    Bytes componentStartFree = fit.freeBeforeBytes;
    const Count total = static_cast<Count>(plan.buffers.size());
    size_t row = 1; // the first allocated component
    for (Count i = 0; i < total; ++i) {
        const ProbeBuffer& b = plan.buffers[static_cast<size_t>(i)];
        const bool nextComponent = fit.components[row].key != b.component;
        if (nextComponent) {
            check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
            const Bytes nowFree = memInfo().freeBytes;
            fit.components[row].measuredBytes = componentStartFree - nowFree;
            componentStartFree = nowFree;
            ++row;
        }
        if (i == 0 || nextComponent || i % 256 == 0)
            out.progress("allocating " + std::string(b.component), i, total);
        // Stay out of the margin unless asked to find the OOM.
        if (!fit.oomTest
            && roundUp(b.bytes, std::max<Bytes>(1, fit.granularityBytes))
                > memInfo().freeBytes - fit.safetyMarginBytes) {
            fit.stoppedAt = b.name + " (" + formatBytes(b.bytes) + "): would enter the safety margin";
            break;
        }
        void* p = buffers.allocate(b.bytes);
        if (!p) {
            fit.stoppedAt = b.name + " (" + formatBytes(b.bytes) + "): cudaMalloc out of memory";
            break;
        }
        check(cudaMemset(p, 0, static_cast<size_t>(b.bytes)), "cudaMemset"); // touch: commit the pages
        ProbeFitComponent& c = fit.components[row];
        c.requestedBytes = checkedAdd(c.requestedBytes, b.bytes);
        ++c.allocatedBuffers;
    }
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    if (row < fit.components.size())
        fit.components[row].measuredBytes = componentStartFree - memInfo().freeBytes;
    fit.fits = fit.stoppedAt.empty();
    out.progress("freeing", total, total);
    buffers.clear();
    out.report(rep);
    return 0;
}

} // namespace vramlab::probe
