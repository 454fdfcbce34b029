// SPDX-License-Identifier: MIT
// Weights, master copy, gradients and optimizer states per GPU.
#include "test_scenarios.h"
#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/model_states.h"
#include "vramlab/presets.h"

#include <QtTest>

using namespace vramlab;

namespace {
using test::llama3_8b;
constexpr Count P8 = test::kLlama3_8bParams;
} // namespace

class TestModelStates : public QObject {
    Q_OBJECT
private slots:
    void precisionRegimes_data()
    {
        QTest::addColumn<int>("precision");
        QTest::addColumn<qint64>("weights");
        QTest::addColumn<qint64>("master");
        QTest::addColumn<qint64>("grads");
        QTest::addColumn<qint64>("adam");
        QTest::newRow("fp32: 4+4+8") << int(Precision::Fp32) << qint64(4) << qint64(0) << qint64(4) << qint64(8);
        QTest::newRow("bf16 pure: 2+2+4") << int(Precision::Bf16) << qint64(2) << qint64(0) << qint64(2) << qint64(4);
        QTest::newRow("mixed-bf16: 2+4+4+8")
            << int(Precision::MixedBf16) << qint64(2) << qint64(4) << qint64(4) << qint64(8);
        QTest::newRow("mixed-fp16: 2+4+4+8")
            << int(Precision::MixedFp16) << qint64(2) << qint64(4) << qint64(4) << qint64(8);
    }
    void precisionRegimes()
    {
        QFETCH(int, precision);
        QFETCH(qint64, weights);
        QFETCH(qint64, master);
        QFETCH(qint64, grads);
        QFETCH(qint64, adam);
        Scenario sc = llama3_8b();
        sc.run.precision = Precision(precision);
        const Report r = estimate(sc);
        QCOMPARE(r.bytesOf("weights"), weights * P8);
        QCOMPARE(r.bytesOf("master_weights"), master * P8);
        QCOMPARE(r.bytesOf("gradients"), grads * P8);
        QCOMPARE(r.bytesOf("optimizer_states"), adam * P8);
    }

    void overridesGiveTheClassic16Bytes()
    {
        // ZeRO paper's mixed-precision Adam: 2 (fp16 weights) + 2 (fp16 grads) + 12 (master, m, v).
        Scenario sc = llama3_8b();
        sc.run.gradientDtype = DType::Bf16;
        const Report r = estimate(sc);
        QCOMPARE(
            r.bytesOf("weights") + r.bytesOf("master_weights") + r.bytesOf("gradients") + r.bytesOf("optimizer_states"),
            16 * P8);
        sc.run.masterWeights = false;
        QCOMPARE(estimate(sc).bytesOf("master_weights"), Bytes(0));
    }

    void zeroStages_data()
    {
        QTest::addColumn<int>("stage");
        QTest::addColumn<qint64>("weights");
        QTest::addColumn<qint64>("master");
        QTest::addColumn<qint64>("grads");
        QTest::addColumn<qint64>("adam");
        // 8 GPUs; ZeRO shards with ceil(P / 8) elements per rank.
        const qint64 shard = (P8 + 7) / 8;
        QTest::newRow("ZeRO-0") << 0 << qint64(2 * P8) << qint64(4 * P8) << qint64(4 * P8) << qint64(8 * P8);
        QTest::newRow("ZeRO-1") << 1 << qint64(2 * P8) << 4 * shard << qint64(4 * P8) << 8 * shard;
        QTest::newRow("ZeRO-2") << 2 << qint64(2 * P8) << 4 * shard << 4 * shard << 8 * shard;
        QTest::newRow("ZeRO-3") << 3 << 2 * shard << 4 * shard << 4 * shard << 8 * shard;
    }
    void zeroStages()
    {
        QFETCH(int, stage);
        QFETCH(qint64, weights);
        QFETCH(qint64, master);
        QFETCH(qint64, grads);
        QFETCH(qint64, adam);
        Scenario sc = llama3_8b();
        sc.run.parallelism.gpus = 8;
        sc.run.parallelism.zeroStage = stage;
        const Report r = estimate(sc);
        QCOMPARE(r.bytesOf("weights"), weights);
        QCOMPARE(r.bytesOf("master_weights"), master);
        QCOMPARE(r.bytesOf("gradients"), grads);
        QCOMPARE(r.bytesOf("optimizer_states"), adam);
        // ZeRO-3 gathers the largest layer (218,112,000 params) twice (current + prefetch) in bf16.
        const Component* gather = nullptr;
        for (const Component& c : r.overheadParts)
            if (c.key == "zero3_gather")
                gather = &c;
        QCOMPARE(gather != nullptr, stage == 3);
        if (gather)
            QCOMPARE(gather->bytes, Bytes(2 * 218'112'000 * 2));
    }

    void optimizers_data()
    {
        QTest::addColumn<int>("optimizer");
        QTest::addColumn<double>("bytesPerParam");
        QTest::newRow("adamw") << int(Optimizer::AdamW) << 8.0;
        QTest::newRow("sgd") << int(Optimizer::Sgd) << 0.0;
        QTest::newRow("sgd-momentum") << int(Optimizer::SgdMomentum) << 4.0;
        QTest::newRow("lion") << int(Optimizer::Lion) << 4.0;
        // 2 x (1 B + 4 B per 256) = 2.03125 B/param for the big matrices (bitsandbytes optim/optimizer.py@0.48.2
        // Optimizer2State.init_state: blocksize 256 since 0.44.0).
        QTest::newRow("adamw-8bit") << int(Optimizer::AdamW8bit) << 2.03125;
    }
    void optimizers()
    {
        QFETCH(int, optimizer);
        QFETCH(double, bytesPerParam);
        Scenario sc = llama3_8b();
        sc.run.optimizer = Optimizer(optimizer);
        const double got = double(estimate(sc).bytesOf("optimizer_states")) / double(P8);
        QVERIFY2(std::abs(got - bytesPerParam) < 0.0005, qPrintable(QString::number(got, 'g', 8)));
    }

    void adafactorIsFactored()
    {
        // One 4096 x 14336 matrix: row + column second moments, 4 B each, no momentum.
        RunSpec run;
        run.optimizer = Optimizer::Adafactor;
        const ModelStateBytes s = modelStates({ { "w", 4096, 14336, 1, true } }, run);
        QCOMPARE(s.optimizer, Bytes((4096 + 14336) * 4));
        const ModelStateBytes v = modelStates({ { "norm", 1, 4096, 1, true } }, run);
        QCOMPARE(v.optimizer, Bytes(4096 * 4));
    }

    void eightBitSmallTensorsStay32Bit()
    {
        RunSpec run;
        run.optimizer = Optimizer::AdamW8bit;
        QCOMPARE(modelStates({ { "norm", 1, 4095, 1, true } }, run).optimizer, Bytes(4095 * 8));
        QCOMPARE(modelStates({ { "w", 1, 4096, 1, true } }, run).optimizer, Bytes(2 * (4096 + 4 * 16)));
    }

    /// torch DDP (no ZeRO, no FSDP): the Reducer's flat buckets, allocated at construction, hold every gradient
    /// once more unless gradient_as_bucket_view (DistributedDataParallel's docstring: "the saved memory size will be
    /// equal to the total gradients size"; PyTorch PR #41954): Llama 3 8B in mixed bf16 on 2 GPUs, 32 GB of fp32
    /// gradients, 32 GB of buckets beside them.
    void ddpBucketsCopyEveryGradient()
    {
        Scenario sc = llama3_8b();
        sc.run.parallelism.gpus = 2;
        const Report copy = estimate(sc);
        const Bytes grads = copy.bytesOf("gradients");
        QCOMPARE(grads, Bytes(P8 * 4));
        const auto comm = [](const Report& r) {
            for (const Component& c : r.overheadParts)
                if (c.key == "comm_buffers")
                    return c.bytes;
            return Bytes(-1);
        };
        QCOMPARE(comm(copy), 256 * kMiB + grads);
        sc.run.parallelism.gradientAsBucketView = true;
        const Report view = estimate(sc);
        QCOMPARE(comm(view), 256 * kMiB);
        QVERIFY(copy.peak > view.peak && copy.peak - view.peak <= grads);
        // Not DDP's: FSDP and DeepSpeed's ZeRO keep their own buffers.
        sc.run.parallelism.gradientAsBucketView = false;
        sc.run.parallelism.zeroStage = 3;
        QCOMPARE(comm(estimate(sc)), 256 * kMiB + 50 * kMiB);
    }

    /// transformers trainer.py create_optimizer: with a bitsandbytes 8-bit optimizer every nn.Embedding weight gets
    /// 32-bit states (register_module_override "optim_bits": 32): Llama 3 8B's 525M-element embedding at 8 B, not
    /// 2 B + the absmax; the untied LM head, a Linear, stays 8-bit.
    void huggingFaceKeepsEmbeddingStates32Bit()
    {
        Scenario sc = llama3_8b();
        sc.run.optimizer = Optimizer::AdamW8bit;
        const Bytes plain = estimate(sc).bytesOf("optimizer_states");
        sc.run.framework = Framework::HfTransformers;
        const Bytes hf = estimate(sc).bytesOf("optimizer_states");
        const Bytes embed = 128'256LL * 4096;
        QCOMPARE(hf - plain, embed * 8 - 2 * (embed + 4 * (embed / 256)));
    }

    /// bitsandbytes' paged optimizers (optim/optimizer.py@0.48.2 get_state_buffer): the states of a tensor of at
    /// least 1e5 elements are cudaMallocManaged (get_paged); the 8-bit absmax and smaller tensors' states are not.
    void pagedStatesAreUnifiedMemory()
    {
        RunSpec run;
        run.optimizer = Optimizer::AdamW8bit;
        run.optimizerImpl = OptimizerImpl::Paged8;
        const ModelStateBytes big = modelStates({ { "w", 1, 100'000, 1, true } }, run);
        QCOMPARE(big.optimizer, Bytes(2 * (100'000 + 4 * 391))); // 391 blocks of 256
        QCOMPARE(big.pagedOptimizer, Bytes(2 * 100'000));
        QCOMPARE(modelStates({ { "w", 1, 99'999, 1, true } }, run).pagedOptimizer, Bytes(0));
        run.optimizer = Optimizer::AdamW;
        run.optimizerImpl = OptimizerImpl::Paged32;
        QCOMPARE(modelStates({ { "w", 1, 100'000, 3, true } }, run).pagedOptimizer, Bytes(3 * 100'000 * 8));
        // In the optimizer bar, outside the peak (the driver evicts managed pages when the GPU runs out), and in
        // the device figure as far as the GPU holds them beside the allocator's segments.
        Scenario sc = llama3_8b();
        sc.run.optimizerImpl = OptimizerImpl::Fused; // no temporaries either way
        const Report fused = estimate(sc);
        sc.run.optimizerImpl = OptimizerImpl::Paged32;
        const Report paged = estimate(sc);
        QVERIFY(paged.pagedOptimizerBytes > 0);
        QCOMPARE(paged.bytesOf("optimizer_states"), fused.bytesOf("optimizer_states"));
        QCOMPARE(fused.peak - paged.peak, paged.pagedOptimizerBytes);
        QVERIFY(paged.peakDeviceBytes <= sc.run.gpu->memoryBytes);
        QVERIFY(std::any_of(paged.warnings.begin(), paged.warnings.end(),
            [](const std::string& w) { return w.starts_with("run.optimizer_impl: the paged optimizer states"); }));
    }

    void loraCounts()
    {
        // Llama-3-8B, rank 16 on q,k,v,o: 32 layers x 16 x ((4096+4096) + 2 x (4096+1024) + (4096+4096)).
        Scenario sc = llama3_8b();
        sc.run.finetune.method = FinetuneMethod::Lora;
        const Report r = estimate(sc);
        const Count lora = 32 * 16 * (8192 + 2 * 5120 + 8192);
        QCOMPARE(r.loraParams, lora);
        QCOMPARE(r.trainableParams, lora);
        // The frozen base in bf16 plus the adapters in bf16; fp32 grads, master and Adam for adapters only.
        QCOMPARE(r.bytesOf("weights"), 2 * (P8 + lora));
        QCOMPARE(r.bytesOf("gradients"), 4 * lora);
        QCOMPARE(r.bytesOf("optimizer_states"), 8 * lora);
        QCOMPARE(r.bytesOf("master_weights"), 4 * lora);
    }

    void qloraNf4Base()
    {
        Scenario sc = llama3_8b();
        sc.run.finetune.method = FinetuneMethod::Qlora;
        const Report r = estimate(sc);
        const Count lora = 32 * 16 * (8192 + 2 * 5120 + 8192);
        // Linear layers in NF4 (4 bits + 8-bit absmax per 64 + fp32 per 256 blocks = 4.127 bits),
        // embedding, LM head and norms in bf16.
        const Count embedHead = 2 * 128256 * 4096, norms = 65 * 4096;
        const Count linear = P8 - embedHead - norms;
        const Bytes expectBase = 2 * (embedHead + norms) + (linear / 2 + linear / 64 + ((linear / 64 + 255) / 256) * 4);
        // Per-tensor block rounding: every matrix is a multiple of 64 x 256, so the sum is exact.
        QCOMPARE(r.bytesOf("weights") - 2 * lora, expectBase);
        // 4.127 bits per quantized weight (Dettmers et al. 2023: 0.127 bits of constants).
        const double bitsPerLinear = 8.0 * double(expectBase - 2 * (embedHead + norms)) / double(linear);
        QVERIFY2(std::abs(bitsPerLinear - 4.127) < 0.001, qPrintable(QString::number(bitsPerLinear)));
    }

    void offloadMovesStateToHost()
    {
        Scenario sc = llama3_8b();
        sc.run.parallelism.offloadOptimizer = true;
        const Report r = estimate(sc);
        QCOMPARE(r.bytesOf("optimizer_states"), Bytes(0));
        QCOMPARE(r.bytesOf("master_weights"), Bytes(0));
        QCOMPARE(r.bytesOf("gradients"), 2 * P8); // bf16 on the GPU, fp32 copy on the host
        QCOMPARE(r.hostBytes, (8 + 4 + 4) * P8);
        sc.run.parallelism.gpus = 4;
        sc.run.parallelism.zeroStage = 3;
        sc.run.parallelism.offloadParams = true;
        const Report r3 = estimate(sc);
        QCOMPARE(r3.bytesOf("weights"), Bytes(0));
        QCOMPARE(r3.hostBytes, 18 * ((P8 + 3) / 4));
    }

    void tensorAndPipelineSplit()
    {
        Scenario sc = llama3_8b();
        sc.run.parallelism.gpus = 8;
        sc.run.parallelism.tensorParallel = 8;
        const Report tp = estimate(sc);
        // Everything but the replicated norms (65 x 4096) is split 8 ways.
        QCOMPARE(tp.bytesOf("weights"), 2 * ((P8 - 65 * 4096) / 8 + 65 * 4096));
        sc.run.parallelism.tensorParallel = 1;
        sc.run.parallelism.pipelineParallel = 8;
        const Report pp = estimate(sc);
        QVERIFY(pp.stage.find("pipeline stage") == 0);
        // The last of 8 stages holds the most: 4 layers + final norm + LM head (+ the logits).
        QCOMPARE(pp.bytesOf("weights"), Bytes(2) * (4 * Bytes(218'112'000) + Bytes(128256) * 4096 + 4096));
        QVERIFY(pp.stage.find("stage 8 of 8") != std::string::npos);
    }

    void impossibleConfigurationsNamed()
    {
        Scenario sc = llama3_8b();
        sc.run.parallelism.gpus = 12;
        sc.run.parallelism.tensorParallel = 8;
        try {
            estimate(sc);
            QFAIL("12 GPUs with TP 8 accepted");
        } catch (const InputError& e) {
            QCOMPARE(QString::fromStdString(e.keyPath()), QStringLiteral("run.parallelism.gpus"));
        }
        sc = llama3_8b();
        sc.run.parallelism.offloadParams = true;
        QVERIFY_THROWS_EXCEPTION(InputError, estimate(sc));
        sc = llama3_8b();
        sc.run.parallelism.gpus = 3;
        sc.run.parallelism.tensorParallel = 3;
        QVERIFY_THROWS_EXCEPTION(InputError, estimate(sc));
    }
};

QTEST_APPLESS_MAIN(TestModelStates)
#include "tst_model_states.moc"
