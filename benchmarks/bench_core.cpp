// SPDX-License-Identifier: MIT
// One estimate with formulas (target < 5 us), the lean one sweeps and the planner use
// (< 2 us, whatever the layer count), a 10,000-point sweep (< 15 ms) and the planner
// (>= 1,000,000 setups per second, whatever the global batch) on one core.
#include "vramlab/estimator.h"
#include "vramlab/planner.h"
#include "vramlab/presets.h"
#include "vramlab/step_timeline.h"
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

/// The report the window, the CLI's estimate and the review show: the same estimate plus the
/// caching-allocator replay's counters (never on the sweeps', fits' or planner's path).
void BM_EstimateWithAllocatorReplay(benchmark::State& state)
{
    const Scenario sc = llama8bOn8H100();
    EstimateOptions options;
    options.replayAllocator = true;
    for (auto _ : state)
        benchmark::DoNotOptimize(estimate(sc, options));
}
BENCHMARK(BM_EstimateWithAllocatorReplay)->Unit(benchmark::kMicrosecond);

/// The lean path sweeps, fits and the planner take (no formulas); the argument is the
/// layer count: the time must not grow with it.
void BM_EstimateLean(benchmark::State& state)
{
    Scenario sc = llama8bOn8H100();
    sc.model.numLayers = state.range(0);
    EstimateCache cache;
    for (auto _ : state)
        benchmark::DoNotOptimize(estimate(sc.model, sc.run, EstimateOptions { false }, &cache));
}
BENCHMARK(BM_EstimateLean)->Arg(32)->Arg(1024)->Arg(100'000)->Unit(benchmark::kMicrosecond);

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

/// Planner throughput: configurations estimated (peak + step time) per second.
void plannerBenchmark(benchmark::State& state, const Scenario& sc, Count gpus, Count globalBatch)
{
    PlanRequest req;
    req.gpus = gpus;
    req.globalBatch = globalBatch;
    Count configs = 0;
    for (auto _ : state) {
        const PlanResult p = plan(sc, req);
        configs += p.evaluated;
        benchmark::DoNotOptimize(p.top.data());
    }
    state.counters["configs_per_s"] = benchmark::Counter(static_cast<double>(configs), benchmark::Counter::kIsRate);
    state.counters["configs"] = static_cast<double>(configs) / static_cast<double>(state.iterations());
}

void BM_PlanLlama8bOn8(benchmark::State& state)
{
    plannerBenchmark(state, llama8bOn8H100(), 8, 64);
}
BENCHMARK(BM_PlanLlama8bOn8)->Unit(benchmark::kMillisecond);

void BM_PlanLlama70bOn64(benchmark::State& state)
{
    Scenario sc = llama8bOn8H100();
    sc.model = findPreset("llama-3-70b")->model;
    plannerBenchmark(state, sc, 64, 512);
}
BENCHMARK(BM_PlanLlama70bOn64)->Unit(benchmark::kMillisecond);

/// The same with 10,000,000 sequences per step: setups per second must not fall with the
/// batch (divisors up to its square root, nothing kept per setup but the top ten).
void BM_PlanLlama70bOn64Batch10M(benchmark::State& state)
{
    Scenario sc = llama8bOn8H100();
    sc.model = findPreset("llama-3-70b")->model;
    plannerBenchmark(state, sc, 64, 10'000'000);
}
BENCHMARK(BM_PlanLlama70bOn64Batch10M)->Unit(benchmark::kMillisecond);

/// The Timeline tab: step 2 of Llama-3-8B with 8 micro-batches, every event recorded.
void BM_TimelineRecorded(benchmark::State& state)
{
    const Report r = estimate(llama8bOn8H100());
    for (auto _ : state)
        benchmark::DoNotOptimize(simulateStep(r.stepInputs, 2, true));
}
BENCHMARK(BM_TimelineRecorded)->Unit(benchmark::kMicrosecond);

} // namespace

BENCHMARK_MAIN();
