// SPDX-License-Identifier: MIT
// One estimate (target < 20 us) and a 10,000-point sweep (target < 50 ms) on one core.
#include "vramlab/estimator.h"
#include "vramlab/presets.h"
#include "vramlab/sweep.h"

#include <benchmark/benchmark.h>

using namespace vramlab;

namespace {

Scenario llama8bOn8H100()
{
    Scenario sc;
    sc.name = "Llama-3-8B full fine-tune on 8x H100";
    sc.model = findPreset("llama-3-8b")->model;
    sc.run.sequenceLength = 4096;
    sc.run.gradientAccumulationSteps = 8;
    sc.run.checkpointing.kind = Checkpointing::Kind::Full;
    sc.run.parallelism.gpus = 8;
    sc.run.parallelism.zeroStage = 3;
    sc.run.gpu = findGpu("h100-sxm-80gb");
    return sc;
}

void BM_Estimate(benchmark::State& state)
{
    const Scenario sc = llama8bOn8H100();
    for (auto _ : state)
        benchmark::DoNotOptimize(estimate(sc));
}
BENCHMARK(BM_Estimate)->Unit(benchmark::kMicrosecond);

void BM_EstimateDeepSeekPipeline(benchmark::State& state)
{
    Scenario sc = llama8bOn8H100();
    sc.model = findPreset("deepseek-v3")->model;
    sc.run.parallelism = {};
    sc.run.parallelism.gpus = 2048;
    sc.run.parallelism.pipelineParallel = 16;
    sc.run.parallelism.expertParallel = 64;
    sc.run.parallelism.zeroStage = 1;
    for (auto _ : state)
        benchmark::DoNotOptimize(estimate(sc));
}
BENCHMARK(BM_EstimateDeepSeekPipeline)->Unit(benchmark::kMicrosecond);

void BM_Sweep10k(benchmark::State& state)
{
    const Scenario sc = llama8bOn8H100();
    for (auto _ : state)
        benchmark::DoNotOptimize(sweep(sc, SweepParam::SequenceLength, 128, 1'000'000, 10'000));
}
BENCHMARK(BM_Sweep10k)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
