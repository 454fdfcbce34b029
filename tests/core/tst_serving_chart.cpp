// SPDX-License-Identifier: MIT
// The Serving page's chart data: the budget bars are the serving model's bytes and fill the
// GPU exactly, the budget line is the engine's, the concurrency curve is the model run again
// at each length, and llama.cpp's slots share n_ctx.
#include "vramlab/errors.h"
#include "vramlab/scenario_io.h"
#include "vramlab/serving_chart.h"

#include <QtTest>

using namespace vramlab;
using nlohmann::json;

namespace {

/// vllm-i10517 (tests/data/published/serving): Llama 3.1 8B on an RTX 3090 with vLLM 0.6.4.
Scenario llama31(Count maxModelLen, const std::string& engine = "vllm")
{
    json serving = { { "engine", engine } };
    if (engine == "vllm")
        serving.update({ { "engine_version", "0.6.4" }, { "max_model_len", maxModelLen },
            { "gpu_memory_utilization", 0.9 }, { "non_torch_gib", 0.35 } });
    else if (engine == "llama.cpp")
        serving.update({ { "n_ctx", maxModelLen }, { "n_gpu_layers", 33 }, { "compute_buffer_mib", 512 } });
    return readScenario({ { "model", { { "preset", "llama-3-8b" }, { "max_position_embeddings", 131072 } } },
        { "run",
            { { "mode", "serving" }, { "gpu", { { "base", "rtx-3090-24gb" }, { "memory_gib", 23.58 } } },
                { "serving", serving } } } });
}

} // namespace

class TestServingChart : public QObject {
    Q_OBJECT
private slots:
    void vllmBarsFillTheGpu()
    {
        const Scenario sc = llama31(20000);
        const ServingEstimate e = servingEstimate(sc.model, sc.run);
        const ServingBudgetChart c = servingBudgetChart(sc.run, e);
        QCOMPARE(c.bars.size(), size_t(1));
        const ServingBar& bar = c.bars.front();
        QStringList keys;
        for (const ServingSegment& s : bar.segments)
            keys << QString::fromStdString(s.key);
        QCOMPARE(keys, QStringList({ "weights", "activation_peak", "non_torch", "cuda_graphs", "kv_cache", "unused" }));
        const ServingRank& k = e.ranks.front();
        QCOMPARE(bar.bytesOf("weights"), k.weightsBytes);
        QCOMPARE(bar.bytesOf("activation_peak"), k.activationPeakBytes);
        QCOMPARE(bar.bytesOf("non_torch"), Bytes(0.35 * double(kGiB)));
        QCOMPARE(bar.bytesOf("cuda_graphs"), Bytes(0)); // rule 3 does not subtract graphs
        QCOMPARE(bar.bytesOf("kv_cache"), k.kvCacheBytes);
        // The budget is 0.9 x 23.58 GiB; the cache takes all of it that the rest leaves.
        const Bytes total = Bytes(23.58 * double(kGiB));
        QCOMPARE(c.gpuBytes, total);
        QCOMPARE(*c.budgetBytes, Bytes(0.9 * double(total)));
        QCOMPARE(bar.usedBytes(), *c.budgetBytes);
        QCOMPARE(bar.usedBytes() + bar.bytesOf("unused"), total);
        QCOMPARE(c.budgetLabel, std::string("gpu_memory_utilization 0.90: 21.22 GiB"));
        QCOMPARE(*e.gpuBlocks, Count(1957)); // the log's 1,952 (0.26 % off)
        QCOMPARE(servingVerdict(e), std::string("STARTS: 31,312 KV tokens, 1.57x at 20,000 tokens"));
    }

    // At 29,000 tokens vLLM 0.6.4 refuses to start: the cache holds 23,648 tokens (1,478 blocks).
    void vllmFailureIsInTheVerdict()
    {
        const Scenario sc = llama31(29000);
        const ServingEstimate e = servingEstimate(sc.model, sc.run);
        QVERIFY(e.startupFails);
        QCOMPARE(servingVerdict(e), std::string("DOES NOT START: 23,712 KV tokens, 0.82x at 29,000 tokens"));
    }

    void concurrencyCurveRunsTheModelAtEachLength()
    {
        const Scenario sc = llama31(20000);
        const ServingEstimate e = servingEstimate(sc.model, sc.run);
        const ConcurrencyCurve c = concurrencyCurve(sc.model, sc.run, e);
        std::vector<Count> contexts;
        for (const ConcurrencyPoint& p : c.points)
            contexts.push_back(p.context);
        QCOMPARE(
            contexts, std::vector<Count>({ 256, 512, 1024, 2048, 4096, 8192, 16384, 20000, 32768, 65536, 131072 }));
        QCOMPARE(c.current.context, Count(20000));
        QCOMPARE(c.current.concurrency, e.maxConcurrency);
        QCOMPARE(c.points[7].concurrency, e.maxConcurrency);
        // At 2,048 tokens the profiling batch is 2,048 tokens too (20,000 at 20,000): 2,409 blocks of
        // 16 tokens hold 18.82 requests, more than 31,312 / 2,048.
        QCOMPARE(c.points[3].concurrency, 2409.0 * 16 / 2048.0);
        QVERIFY(!c.points[3].startupFails);
        // Past the cache (31,312 tokens at 20,000; less with a longer profiling batch) vLLM refuses.
        QVERIFY(c.points[8].startupFails && c.points[10].startupFails);
        for (size_t i = 1; i < c.points.size(); ++i)
            QVERIFY(c.points[i].concurrency < c.points[i - 1].concurrency);
    }

    void llamaCppDevicesAndSlots()
    {
        const Scenario sc = llama31(8192, "llama.cpp");
        const ServingEstimate e = servingEstimate(sc.model, sc.run);
        const ServingBudgetChart c = servingBudgetChart(sc.run, e);
        QCOMPARE(c.bars.size(), size_t(2));
        QCOMPARE(c.bars[0].label, std::string("CUDA0"));
        QCOMPARE(c.bars[0].bytesOf("kv_cache"), Bytes(1024) * kMiB); // 32 layers x 8,192 cells x 2 x 1,024 x 2 bytes
        QCOMPARE(c.bars[0].bytesOf("compute_buffer"), Bytes(512) * kMiB);
        QCOMPARE(c.bars[0].usedBytes() + c.bars[0].bytesOf("unused"), c.gpuBytes);
        QCOMPARE(c.bars[1].label, std::string("CPU"));
        QVERIFY(!c.bars[1].capacityBytes); // host memory: no GPU line, no margin
        QCOMPARE(c.bars[1].segments.size(), size_t(3));
        QVERIFY(!c.budgetBytes);
        const ConcurrencyCurve curve = concurrencyCurve(sc.model, sc.run, e);
        QCOMPARE(curve.points.size(), size_t(6)); // 256 ... 8192
        QCOMPARE(curve.points.front().concurrency, 32.0); // 8,192 cells / 256 tokens per slot
        QCOMPARE(curve.current.context, Count(8192));
        QCOMPARE(curve.current.concurrency, 1.0);
    }

    void refusesAScenarioThatDoesNotServe()
    {
        Scenario sc = llama31(20000);
        const ServingEstimate e = servingEstimate(sc.model, sc.run);
        sc.run.serving.reset();
        QVERIFY_THROWS_EXCEPTION(InputError, concurrencyCurve(sc.model, sc.run, e));
    }
};

QTEST_APPLESS_MAIN(TestServingChart)
#include "tst_serving_chart.moc"
