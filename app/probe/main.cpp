// SPDX-License-Identifier: MIT
// vramlab-probe: measures on a real GPU what vramlab predicts (host C++, no Qt, no kernels).
#include "command_main.h"
#include "cuda_device.h"
#include "probe_commands.h"

#include <cstdio>

namespace {

const char* const kUsage = R"(usage: vramlab-probe COMMAND [ARGS]

Measures on this machine's GPU what vramlab predicts.

commands:
  info [--json]                       driver, runtime, device, clocks, memory, catalog entry
  fit SCENARIO.json [--json] [--margin-mib N] [--test-oom]
                                      allocates the predicted tensors of one GPU, buffer by
                                      buffer, and reports predicted and measured bytes
  bench SCENARIO.json [--json] [--dtype fp32|tf32|bf16|fp16|fp8] [--samples N]
                                      times the scenario's GEMM shapes and a device copy
  --version, --help

--json: progress as JSON lines on stdout, then the report as the last line.
exit: 0 success, 2 bad input, 3 no usable GPU or driver (one line on stderr), 1 CUDA failure.
)";

} // namespace

int main(int argc, char** argv)
{
    using namespace vramlab;
    return commandMain("vramlab-probe", kUsage, VRAMLAB_VERSION, argc, argv,
        [](const std::string& cmd, const std::vector<std::string>& rest) -> std::optional<int> {
            try {
                if (cmd == "info")
                    return probe::runInfo(rest);
                if (cmd == "fit")
                    return probe::runFit(rest);
                if (cmd == "bench")
                    return probe::runBench(rest);
                return std::nullopt;
            } catch (const probe::NoUsableGpu& e) {
                std::fprintf(stderr, "vramlab-probe: no usable GPU: %s\n", e.what());
                return 3;
            }
        });
}
