// SPDX-License-Identifier: MIT
// vramlab-probe: measures on a real GPU what vramlab predicts (host C++, no Qt, no kernels).
#include "cuda_device.h"
#include "probe_commands.h"
#include "vramlab/errors.h"

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

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
    const std::vector<std::string> words(argv + 1, argv + argc);
    if (words.empty() || words[0] == "--help" || words[0] == "-h" || words[0] == "help") {
        std::fputs(kUsage, words.empty() ? stderr : stdout);
        return words.empty() ? 2 : 0;
    }
    if (words[0] == "--version") {
        std::printf("vramlab-probe %s\n", VRAMLAB_VERSION);
        return 0;
    }
    const std::vector<std::string> rest(words.begin() + 1, words.end());
    try {
        const std::string& cmd = words[0];
        if (cmd == "info")
            return probe::runInfo(rest);
        if (cmd == "fit")
            return probe::runFit(rest);
        if (cmd == "bench")
            return probe::runBench(rest);
        std::fprintf(stderr, "vramlab-probe: unknown command \"%s\" (see vramlab-probe --help)\n", cmd.c_str());
        return 2;
    } catch (const InputError& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 2;
    } catch (const SizeOverflow& e) {
        std::fprintf(stderr, "the configuration is too large: %s\n", e.what());
        return 2;
    } catch (const probe::NoUsableGpu& e) {
        std::fprintf(stderr, "vramlab-probe: no usable GPU: %s\n", e.what());
        return 3;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "vramlab-probe: %s\n", e.what());
        return 1;
    }
}
