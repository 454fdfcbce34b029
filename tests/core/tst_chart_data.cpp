// SPDX-License-Identifier: MIT
// The charts' data, computed once in the core for the picture and the CSV: sweep ranges
// (learned positions clamp the sequence), the compare variants and their rules, the
// timeline the estimate already simulated, and one CSV writer per kind.
#include "test_scenarios.h"
#include "vramlab/chart_data.h"
#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/report_text.h"
#include "vramlab/scenario_io.h"
#include "vramlab/serving_model.h"
#include "vramlab/text_escape.h"

#include <QtTest>

#include <sstream>

using namespace vramlab;

namespace {

Scenario example(const char* file)
{
    return loadScenarioFile(std::string(VRAMLAB_TEST_DATA_DIR "/scenarios/") + file);
}

Scenario gpt2()
{
    Scenario sc;
    sc.model = findPreset("gpt2")->model;
    sc.run.sequenceLength = 1024;
    sc.run.gpu = findGpu("h100-sxm-80gb");
    return sc;
}

std::vector<std::string> lines(const std::string& text)
{
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        out.push_back(line);
    return out;
}

bool sameEvents(const StepTimeline& a, const StepTimeline& b)
{
    if (a.events.size() != b.events.size() || a.peak != b.peak || a.step != b.step)
        return false;
    for (size_t i = 0; i < a.events.size(); ++i) {
        const TimelineEvent &x = a.events[i], &y = b.events[i];
        if (x.bytes != y.bytes || x.phase != y.phase || x.layer != y.layer || x.microBatch != y.microBatch
            || x.what != y.what)
            return false;
    }
    return true;
}

} // namespace

class TestChartData : public QObject {
    Q_OBJECT
private slots:
    void chartKindNamesRoundTrip()
    {
        QCOMPARE(chartKindNames().size(), size_t(10));
        for (std::string_view name : chartKindNames())
            QCOMPARE(chartKindName(*parseChartKind(name)), name);
        QCOMPARE(parseChartKind("sweep-seq"), std::optional<ChartKind>(ChartKind::SweepSequence));
        QVERIFY(!parseChartKind("pie"));
        QCOMPARE(parseChartKind("serving-budget"), std::optional<ChartKind>(ChartKind::ServingBudget));
        QCOMPARE(parseChartKind("plan"), std::optional<ChartKind>(ChartKind::Plan));
    }

    void servingBudgetCsvRows()
    {
        ServingBudgetChart chart;
        ServingBar gpu;
        gpu.label = "rank 0, layers 0-31";
        gpu.capacityBytes = Bytes(25769803776); // 24 GiB
        gpu.segments = { { "weights", "Weights", Bytes(16060522496), ColourRole::Blue },
            { "kv_cache", "KV cache", Bytes(1610612736), ColourRole::ReddishPurple } };
        ServingBar cpu;
        cpu.label = "CPU";
        cpu.segments = { { "weights", "Weights", Bytes(1073741824), ColourRole::Blue } };
        chart.bars = { gpu, cpu };
        QCOMPARE(servingBudgetCsv(chart),
            std::string("bar,segment,label,bytes,gib,capacity_bytes\n"
                        "\"rank 0, layers 0-31\",weights,Weights,16060522496,14.958,25769803776\n"
                        "\"rank 0, layers 0-31\",kv_cache,KV cache,1610612736,1.500,25769803776\n"
                        "CPU,weights,Weights,1073741824,1.000,\n"));
    }

    void servingBudgetCsvOfAPublishedCase()
    {
        // vLLM issue 10517: Llama 3.1 8B on an RTX 3090 at max_model_len 20000.
        const std::string file
            = VRAMLAB_TEST_DATA_DIR "/published/serving/scenarios/vllm-i10517-llama31-8b-rtx3090-len20000.json";
        const Scenario sc = readScenario(parseJsonText(readTextFile(file), file).at("runs").at(0).at("scenario"));
        const ServingEstimate e = servingEstimate(sc.model, sc.run);
        const std::vector<std::string> csv = lines(chartCsv(ChartKind::ServingBudget, { sc }, {}));
        const ServingBudgetChart chart = servingBudgetChart(sc.run, e);
        QCOMPARE(csv.size(), 1 + chart.bars.size() * chart.bars.front().segments.size());
        int found = 0;
        for (const std::string& row : csv)
            if (row.find(",kv_cache,") != std::string::npos) {
                const std::string bytes = row.substr(row.find(",KV cache,") + 10);
                QCOMPARE(bytes.substr(0, bytes.find(',')), std::to_string(e.limiting().kvCacheBytes));
                ++found;
            }
        QCOMPARE(found, 1);
        QCOMPARE(e.limiting().kvCacheBytes, e.kvCacheBytes);
        QCOMPARE(servingVerdictOf(sc), servingVerdict(e));
        // A training scenario has no serving chart: said, never another chart.
        QVERIFY_THROWS_EXCEPTION(InputError, chartCsv(ChartKind::ServingBudget, { test::llama3_8b() }, {}));
        QVERIFY_THROWS_EXCEPTION(InputError, chartCsv(ChartKind::ServingConcurrency, { test::llama3_8b() }, {}));
        const std::vector<std::string> curve = lines(chartCsv(ChartKind::ServingConcurrency, { sc }, {}));
        QCOMPARE(curve.size(), 1 + concurrencyCurve(sc.model, sc.run, e).points.size());
    }

    void reviewReportCarriesTheServingNumbers()
    {
        const std::string file
            = VRAMLAB_TEST_DATA_DIR "/published/serving/scenarios/vllm-i10517-llama31-8b-rtx3090-len20000.json";
        const Scenario sc = readScenario(parseJsonText(readTextFile(file), file).at("runs").at(0).at("scenario"));
        const ServingEstimate e = servingEstimate(sc.model, sc.run);
        const std::string md = reviewMarkdown(sc, estimate(sc), {});
        QVERIFY(md.find("## Serving: vllm") != std::string::npos);
        QVERIFY(md.find(markdownEscape(servingVerdict(e))) != std::string::npos);
        QVERIFY(md.find(std::to_string(e.kvCacheBytes) + " bytes") != std::string::npos);
        QVERIFY(!e.logLines.empty());
        QVERIFY(md.find("    " + e.logLines.front() + "\n") != std::string::npos);
        const ReportTable t = servingBudgetTable(servingBudgetChart(sc.run, e));
        QCOMPARE(t.rows.size(), e.ranks.size());
        QCOMPARE(t.header.front(), std::string("Rank / device"));
        QCOMPARE(t.header.back(), std::string("Used"));
        // A training scenario's report has no serving section.
        QVERIFY(servingReviewMarkdown(test::llama3_8b()).empty());
        QVERIFY(
            reviewMarkdown(test::llama3_8b(), estimate(test::llama3_8b()), {}).find("## Serving") == std::string::npos);
    }

    void concurrencyCsvRows()
    {
        ConcurrencyCurve curve;
        curve.points = { { 256, 122.3125, false }, { 20000, 1.5656, false }, { 131072, 0, true } };
        curve.current = curve.points[1];
        QCOMPARE(concurrencyCsv(curve),
            std::string("context_tokens,max_concurrency,startup_fails,current\n"
                        "256,122.312,false,false\n"
                        "20000,1.5656,false,true\n"
                        "131072,0,true,false\n"));
    }

    void planCsvAndMarkdownRows()
    {
        PlanCandidate c;
        c.zeroStage = 3;
        c.tensorParallel = 2;
        c.sequenceParallel = true;
        c.microBatch = 4;
        c.accumulation = 8;
        c.checkpointing.kind = Checkpointing::Kind::Full;
        c.offloadOptimizer = true;
        c.peak = 123456789;
        c.fits = true;
        c.time.computeS = 1.5;
        c.time.recomputeS = 0.25;
        c.tokensPerS = 12345.5;
        c.why = "fastest";
        PlanResult result;
        result.top = { c };
        QCOMPARE(planCsv(result),
            std::string(
                "rank,zero_stage,tensor_parallel,sequence_parallel,pipeline_parallel,expert_parallel,"
                "micro_batch,accumulation,checkpointing,offload_optimizer,offload_params,summary,peak_bytes,"
                "fits,lower_bound,step_time_s,tokens_per_s,why\n"
                "1,3,2,true,1,1,4,8,full,true,false,\"ZeRO-3, TP 2 + sequence parallel, PP 1, micro-batch 4 x 8, "
                "checkpointing full, offload optimizer\",123456789,true,false,1.75,12345.5,fastest\n"));
        // A row whose peak is a lower bound says so in both (torchtitan FSDP inside pipelining, say).
        PlanResult bounded = result;
        bounded.top[0].lowerBound = true;
        QVERIFY(planCsv(bounded).find(",123456789,true,true,1.75,") != std::string::npos);
        QVERIFY(planMarkdown(bounded).find("| maybe (lower bound) |") != std::string::npos);
        const std::vector<std::string> md = lines(planMarkdown(result));
        QCOMPARE(md.size(), size_t(3));
        QCOMPARE(md[2],
            std::string("| 1 | ZeRO\\-3, TP 2 \\+ sequence parallel, PP 1, micro\\-batch 4 x 8, checkpointing full, "
                        "offload optimizer | 0.115 | 123456789 | yes | 1.75 | 12345.5 | fastest |"));
    }

    void planCsvOfTheDefaultPlan()
    {
        const Scenario sc = loadScenarioFile(VRAMLAB_SOURCE_DIR "/resources/scenarios/llama-3-8b-8xh100.json");
        PlanRequest req;
        req.gpus = sc.run.parallelism.gpus;
        const PlanResult r = plan(sc, req);
        QVERIFY(!r.top.empty());
        const std::vector<std::string> csv = lines(chartCsv(ChartKind::Plan, { sc }, {}));
        QCOMPARE(csv.size(), 1 + r.top.size());
        QVERIFY(csv[1].find("," + std::to_string(r.top[0].peak) + ",true,") != std::string::npos);
        QCOMPARE(chartCsv(ChartKind::Plan, { sc }, {}), planCsv(r));
    }

    void sweepRanges()
    {
        // RoPE: 128..131072 tokens; batches 1..512; 64 log-spaced points.
        const Scenario llama = test::llama3_8b();
        const SweepRange seq = sweepRange(llama, SweepParam::SequenceLength);
        QCOMPARE(seq.from, Count(128));
        QCOMPARE(seq.to, Count(131072));
        QCOMPARE(seq.points, 64);
        QVERIFY(seq.logScale);
        const SweepRange mb = sweepRange(llama, SweepParam::MicroBatchSize);
        QCOMPARE(mb.from, Count(1));
        QCOMPARE(mb.to, Count(512));
        QCOMPARE(sweepRange(llama, SweepParam::ContextLength).to, Count(131072));
        // Learned positions: GPT-2 stops at its 1024 rows.
        const SweepRange g = sweepRange(gpt2(), SweepParam::SequenceLength);
        QCOMPARE(g.from, Count(128));
        QCOMPARE(g.to, Count(1024));
        QCOMPARE(sweepRange(gpt2(), SweepParam::MicroBatchSize).to, Count(512)); // only the sequence is clamped
        // Below 128 rows the range starts three octaves lower: 8..64.
        const SweepRange tiny = sweepRange(example("gpt2-tiny.json"), SweepParam::SequenceLength);
        QCOMPARE(tiny.from, Count(8));
        QCOMPARE(tiny.to, Count(64));
    }

    void sweepParamFollowsTheMode()
    {
        Scenario sc = test::llama3_8b();
        QCOMPARE(sweepParamFor(ChartKind::SweepSequence, sc), SweepParam::SequenceLength);
        QCOMPARE(sweepParamFor(ChartKind::SweepBatch, sc), SweepParam::MicroBatchSize);
        sc.run.mode = Mode::Inference;
        QCOMPARE(sweepParamFor(ChartKind::SweepSequence, sc), SweepParam::ContextLength);
        QCOMPARE(sweepParamFor(ChartKind::SweepBatch, sc), SweepParam::BatchSize);
        QCOMPARE(sweepAxisLabel(SweepParam::SequenceLength), std::string("sequence length (tokens)"));
    }

    void gpt2TinySweepIsItsRange()
    {
        // Before: the chart clamped to 64 and failed ("--to: expected at least --from (128)"),
        // the CSV did not clamp and failed at 128 tokens. Now both are this series.
        const Scenario sc = example("gpt2-tiny.json");
        const SweepSeries s = sweepSeries(sc, SweepParam::SequenceLength);
        QCOMPARE(s.points.front().value, Count(8));
        QCOMPARE(s.points.back().value, Count(64));
        QCOMPARE(s.points.size(), size_t(46)); // 64 log-spaced points over 8..64, duplicates dropped
        QVERIFY(!s.boundary); // no GPU: no fit search
        // At 64 tokens the series is the estimate: activations as PyTorch measured them.
        QCOMPARE(s.points.back().bytesOf("activations"), Bytes(895'492));
        QCOMPARE(s.points.back().peak, estimate(sc).peak);

        const std::vector<std::string> csv = lines(chartCsv(ChartKind::SweepSequence, { sc }, {}));
        QCOMPARE(csv.size(), size_t(1 + 46));
        QCOMPARE(csv.front(),
            std::string("run.sequence_length,weights,master_weights,gradients,optimizer_states,activations,"
                        "kv_cache,overhead,total,peak,fits,lower_bound"));
        QCOMPARE(csv.back(), std::string("64,2234368,0,2234368,4468736,895492,0,570425852,580258816,581597692,,false"));
    }

    /// A sweep of a run whose peak is a lower bound (QLoRA under Hugging Face without autocast: PEFT's fp32 casts
    /// are not modelled there) says so on every row: "fits" there may not hold.
    void sweepRowsSayLowerBound()
    {
        Scenario sc = test::llama3_8b();
        sc.run.framework = Framework::HfTransformers;
        sc.run.finetune.method = FinetuneMethod::Qlora;
        sc.run.precision = Precision::Bf16;
        sc.run.parallelism = Parallelism {};
        const std::vector<std::string> csv = lines(chartCsv(ChartKind::SweepSequence, { sc }, {}));
        QVERIFY(csv.size() > 2);
        for (size_t i = 1; i < csv.size(); ++i)
            QVERIFY2(csv[i].ends_with(",true"), csv[i].c_str());
    }

    void sweepBoundaryIsTheFitSearch()
    {
        Scenario sc = test::llama3_8b(); // the window's default: 8 GPUs, ZeRO-3
        sc.run.parallelism.gpus = 8;
        sc.run.parallelism.zeroStage = 3;
        sc.run.gradientAccumulationSteps = 8;
        const SweepSeries s = sweepSeries(sc, SweepParam::SequenceLength);
        QCOMPARE(s.points.size(), size_t(64));
        QCOMPARE(s.points.front().value, Count(128));
        QCOMPARE(s.points.back().value, Count(131072));
        QVERIFY(s.boundary);
        Scenario at = sc, past = sc;
        at.run.sequenceLength = *s.boundary - 1;
        past.run.sequenceLength = *s.boundary;
        QVERIFY(estimate(at).fits);
        QVERIFY(!estimate(past).fits);
    }

    void methodVariantsAndTheirRules()
    {
        Scenario sc = example("gpt2-tiny.json"); // fp32
        sc.run.finetune.rank = 16;
        const std::vector<ChartColumn> cols = methodVariants(sc);
        QCOMPARE(cols.size(), size_t(4));
        QCOMPARE(cols[0].label, std::string("Inference"));
        QCOMPARE(cols[1].label, std::string("Full training"));
        QCOMPARE(cols[2].label, std::string("LoRA r=16"));
        QCOMPARE(cols[3].label, std::string("QLoRA r=16"));
        for (const ChartColumn& c : cols)
            QVERIFY2(c.report, c.error.c_str());
        // Inference: one sequence at the training length; QLoRA: fp32 becomes mixed bf16.
        Scenario inf = sc;
        inf.run.mode = Mode::Inference;
        inf.run.inference.batchSize = 1;
        inf.run.inference.contextLength = 64;
        QCOMPARE(cols[0].report->peak, estimate(inf).peak);
        QCOMPARE(cols[1].report->peak, estimate(sc).peak);
        Scenario qlora = sc;
        qlora.run.finetune.method = FinetuneMethod::Qlora;
        qlora.run.precision = Precision::MixedBf16;
        QCOMPARE(cols[3].report->peak, estimate(qlora).peak);
        // K and V of 2 layers, 64 tokens, 128 wide, in 16 bits (served weights and cache are not fp32).
        QCOMPARE(cols[0].report->bytesOf("kv_cache"), Bytes(2 * 2 * 64 * 128 * 2));
    }

    void zeroVariantsAndTheirRules()
    {
        Scenario sc = test::llama3_8b(); // one GPU: the comparison runs on 8
        sc.run.parallelism.offloadParams = true;
        const std::vector<ChartColumn> cols = zeroVariants(sc);
        QCOMPARE(cols.size(), size_t(4));
        QCOMPARE(cols[0].label, std::string("DP (no ZeRO), 8 GPUs"));
        QCOMPARE(cols[3].label, std::string("ZeRO-3"));
        Scenario eight = sc;
        eight.run.parallelism.offloadParams = false;
        eight.run.parallelism.gpus = 8;
        for (int stage = 0; stage < 4; ++stage) {
            eight.run.parallelism.zeroStage = stage;
            QCOMPARE(cols[size_t(stage)].report->total, estimate(eight).total);
        }
        // ZeRO-1 shards the optimizer states 8 ways: 16 GB of Adam states become 2 GB.
        QCOMPARE(cols[1].report->bytesOf("optimizer_states") * 8, cols[0].report->bytesOf("optimizer_states"));
    }

    void invalidColumnKeepsItsError()
    {
        Scenario bad = test::llama3_8b();
        bad.run.parallelism.gpus = 3;
        bad.run.parallelism.tensorParallel = 2;
        const std::vector<ChartColumn> cols
            = chartColumns(ChartKind::CompareFiles, { test::llama3_8b(), bad }, { "a", "b" });
        QCOMPARE(cols.size(), size_t(2));
        QVERIFY(cols[0].report);
        QVERIFY(!cols[1].report);
        QVERIFY(!cols[1].error.empty());
        const std::vector<std::string> csv = lines(columnsCsv(cols));
        QCOMPARE(csv.size(), size_t(3));
        QCOMPARE(csv[0],
            std::string("column,weights,master_weights,gradients,optimizer_states,activations,kv_cache,overhead,total,"
                        "peak,fits,lower_bound"));
        QCOMPARE(QString::fromStdString(csv[2]), QStringLiteral("b,,,,,,,,,,invalid,"));
        QVERIFY(csv[1].starts_with("a," + std::to_string(cols[0].report->bytesOf("weights")) + ","));
        QVERIFY(csv[1].ends_with("," + std::to_string(cols[0].report->peak) + ",false,false")); // 8B trained on one GPU
        QVERIFY_THROWS_EXCEPTION(InputError, chartColumns(ChartKind::Timeline, { bad }, {}));
    }

    void timelineIsSimulatedOnceByTheEstimate()
    {
        // The window's estimate keeps the step it simulated for the peak; the chart reuses it.
        const Report r = estimate(test::llama3_8b(), EstimateOptions { true, true });
        QVERIFY(!r.timeline.events.empty());
        const StepTimeline again = simulateStep(r.stepInputs, 2);
        QVERIFY(sameEvents(r.timeline, again));
        QVERIFY(sameEvents(timelineSeries(r), again));
        QCOMPARE(r.timeline.peak, r.peak);
        QVERIFY(sameEvents(timelineSeries(r, 1), simulateStep(r.stepInputs, 1)));
        // Sweeps and fits need only the bytes: nothing recorded.
        QVERIFY(estimate(test::llama3_8b(), EstimateOptions { false }).timeline.events.empty());
        QCOMPARE(estimate(test::llama3_8b(), EstimateOptions { false }).peak, r.peak);
    }

    void timelineRefusals()
    {
        Scenario deep = test::llama3_8b();
        deep.model.numLayers = 100'000;
        const Report r = estimate(deep, EstimateOptions { true, true }); // the peak still comes
        QVERIFY(r.timeline.events.empty());
        QVERIFY(r.peak > 0);
        try {
            (void)timelineSeries(r);
            QFAIL("expected the event limit");
        } catch (const InputError& e) {
            QVERIFY(std::string(e.what()).find("the timeline records at most 200,000 events") != std::string::npos);
        }
        Scenario serving = test::llama3_8b();
        serving.run.mode = Mode::Inference;
        QVERIFY_THROWS_EXCEPTION(InputError, timelineSeries(estimate(serving)));
        const std::vector<std::string> csv = lines(chartCsv(ChartKind::Timeline, { test::llama3_8b() }, {}));
        QCOMPARE(csv.size(), 1 + estimate(test::llama3_8b(), EstimateOptions { true, true }).timeline.events.size());
    }
};

QTEST_APPLESS_MAIN(TestChartData)
#include "tst_chart_data.moc"
