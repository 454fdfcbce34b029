// SPDX-License-Identifier: MIT
// FLOPs per token and step, recomputation, and step time from the GPU catalog.
#include "test_scenarios.h"
#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/flops_model.h"
#include "vramlab/presets.h"

#include <QtTest>

using namespace vramlab;

namespace {
/// The spec's example: Llama-3-8B, 8 x H100, ZeRO-3, 8 accumulation steps.
Scenario llama8b()
{
    Scenario sc = test::llama3_8b();
    sc.run.gradientAccumulationSteps = 8;
    sc.run.parallelism.gpus = 8;
    sc.run.parallelism.zeroStage = 3;
    return sc;
}
} // namespace

class TestFlops : public QObject {
    Q_OBJECT
private slots:
    void sixPTPlusAttention()
    {
        const Scenario sc = llama8b();
        const Report r = estimate(sc);
        // Matmul parameters: everything but the 128256 x 4096 input embedding and the norms.
        const double n = 8'030'261'248.0 - 128256.0 * 4096 - 65 * 4096;
        const double attention = 2.0 * 2 * 4096 * 4096 * 32; // QK^T and PV, 32 layers, 4096 tokens, q width 4096
        QCOMPARE(r.flops.forwardPerToken, 2 * n + attention);
        QCOMPARE(r.flops.perToken, 3 * (2 * n + attention));
        QCOMPARE(r.flops.tokensPerStep, Count(4096) * 8 * 8);
        QCOMPARE(r.flops.perStep, r.flops.perToken * 4096 * 64);
        // One step time, by cause: compute = model FLOPs / (8 x 989.4 TFLOP/s x 0.4); flash's
        // backward recomputes QK^T (half the forward attention term) at the same rate.
        const StepTimeParts& t = r.flops.time;
        QCOMPARE(t.computeS, r.flops.perStep / (8 * 989.4e12 * 0.4));
        QCOMPARE(t.recomputeS, attention / 2 * 4096 * 64 / (8 * 989.4e12 * 0.4));
        // ZeRO-3 over 8 GPUs, 8 micro-batches: per micro-batch a reduce-scatter of the fp32
        // gradients (mixed-bf16 keeps them in fp32) and two all-gathers of the bf16 weights,
        // 7/8 of each, at the H100's 450 GB/s NVLink.
        const double moved = 8 * 7.0 / 8 * (8'030'261'248.0 * 4 + 2 * 8'030'261'248.0 * 2);
        QVERIFY2(std::abs(t.dataParallelS / (moved / 450e9) - 1) < 1e-12,
            qPrintable(QString::number(t.dataParallelS / (moved / 450e9))));
        QCOMPARE(t.tensorParallelS + t.pipelineS + t.offloadS, 0.0);
        QCOMPARE(r.flops.stepTimeS, t.total());
        QVERIFY(std::abs(r.flops.tokensPerS - 4096.0 * 64 / r.flops.stepTimeS) < 1e-6);
        // The MFU the step implies: model FLOPs over what the GPUs could do in that time.
        QCOMPARE(r.flops.mfu, r.flops.perStep / (8 * 989.4e12 * r.flops.stepTimeS));
        QVERIFY(r.flops.mfu < 0.4);
        QCOMPARE(r.flops.efficiency, 0.4);
    }

    void recomputationIsHardwareOnly()
    {
        Scenario sc = llama8b();
        sc.run.attention = AttentionImpl::Eager;
        const Report none = estimate(sc);
        QCOMPARE(none.flops.hardwarePerStep, none.flops.perStep);
        sc.run.checkpointing.kind = Checkpointing::Kind::Full;
        const Report full = estimate(sc);
        QCOMPARE(full.flops.perStep, none.flops.perStep); // model FLOPs do not change
        // One more forward of the layers (the LM head is not checkpointed): ~ +33%.
        const double extra = (full.flops.hardwarePerStep - full.flops.perStep) / full.flops.perStep;
        QVERIFY2(extra > 0.30 && extra < 0.334, qPrintable(QString::number(extra)));
        sc.run.checkpointing.kind = Checkpointing::Kind::Selective;
        const double sel = (estimate(sc).flops.hardwarePerStep - none.flops.perStep) / none.flops.perStep;
        QVERIFY2(sel > 0.02 && sel < 0.05, qPrintable(QString::number(sel))); // "~2.7% extra" at GPT-3 scale
    }

    // Step times print in the unit a reader thinks in: never "1.434e+05 s" or "0.007663 s".
    void durationsHaveUnits()
    {
        QCOMPARE(formatSeconds(1.434e5), std::string("39.8 h"));
        QCOMPARE(formatSeconds(0.007663), std::string("7.66 ms"));
        QCOMPARE(formatSeconds(0.0891), std::string("89.1 ms"));
        QCOMPARE(formatSeconds(0.25), std::string("250 ms"));
        QCOMPARE(formatSeconds(4.561), std::string("4.56 s"));
        QCOMPARE(formatSeconds(579.45), std::string("9.7 min"));
        QCOMPARE(formatSeconds(4.5e-4), std::string("450 \u00b5s"));
        QCOMPARE(formatSeconds(5 * 86400.0), std::string("5.0 days"));
    }

    void slidingWindowCapsAttention()
    {
        Scenario sc;
        sc.model = findPreset("mistral-7b")->model;
        sc.run.sequenceLength = 16384;
        const Report windowed = estimate(sc);
        sc.model.slidingWindow = 0;
        const Report full = estimate(sc);
        QCOMPARE(full.flops.attentionPerToken / windowed.flops.attentionPerToken, 4.0); // 16384 / 4096
    }

    void loraSkipsFrozenWeightGradients()
    {
        Scenario sc = llama8b();
        sc.run.finetune.method = FinetuneMethod::Lora;
        const Report r = estimate(sc);
        QCOMPARE(r.flops.perToken, 2 * r.flops.forwardPerToken + 2.0 * double(r.loraParams));
    }

    void inferenceDecodeIsBandwidthBound()
    {
        Scenario sc;
        sc.model = findPreset("llama-2-7b")->model;
        sc.run.mode = Mode::Inference;
        sc.run.inference.contextLength = 4096;
        sc.run.gpu = findGpu("a100-80gb");
        const Report r = estimate(sc);
        // One token reads 13.5 GB of weights and 2.1 GB of KV cache at 2039 GB/s: ~7.6 ms.
        const double bytes = double(r.bytesOf("weights") + r.bytesOf("kv_cache"));
        QCOMPARE(r.flops.stepTimeS, bytes / 2039e9);
        // A bandwidth-bound decode is never labelled with an MFU (issue 20).
        const std::string said = stepTimeSummary(r.flops);
        QVERIFY2(
            said.find("bandwidth-bound") != std::string::npos && said.find("MFU") == std::string::npos, said.c_str());
        QVERIFY(r.flops.tokensPerS > 120 && r.flops.tokensPerS < 140);
    }

    void customGpuWithoutBandwidthIsFinite()
    {
        Scenario sc;
        sc.model = findPreset("llama-2-7b")->model;
        sc.run.mode = Mode::Inference;
        GpuSpec g;
        g.name = "custom";
        g.memoryBytes = 12 * kGiB;
        g.bf16Tflops = 100; // no bandwidth given
        sc.run.gpu = g;
        const Report r = estimate(sc);
        QVERIFY(std::isfinite(r.flops.stepTimeS) && r.flops.stepTimeS > 0);
        QVERIFY(std::isfinite(r.flops.tokensPerS) && r.flops.tokensPerS > 0);
    }

    void catalogPeaks()
    {
        QCOMPARE(findGpu("a100-80gb")->peakTflops(DType::Bf16), 312.0);
        QCOMPARE(findGpu("h100-sxm-80gb")->peakTflops(DType::Fp8), 1978.9);
        QCOMPARE(findGpu("a100-80gb")->peakTflops(DType::Fp8), 312.0); // no FP8 on Ampere: bf16 rate
        QCOMPARE(findGpu("v100-32gb")->peakTflops(DType::Bf16), 125.0); // no bf16: fp16 tensor cores
        for (const char* g : { "a100-40gb", "a100-80gb", "h100-sxm-80gb", "h100-pcie-80gb", "h200-141gb", "b200-180gb",
                 "l4-24gb", "l40s-48gb", "rtx-4090-24gb", "mi300x-192gb" })
            QVERIFY2(findGpu(g).has_value(), g);
    }
};

QTEST_APPLESS_MAIN(TestFlops)
#include "tst_flops.moc"
