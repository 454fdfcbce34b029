// SPDX-License-Identifier: MIT
// Saved-for-backward tensors: recorded reference measurements and hand-computed cases.
#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/presets.h"
#include "vramlab/scenario_io.h"

#include <QtTest>

using namespace vramlab;

namespace {

Scenario example(const char* file)
{
    return loadScenarioFile(std::string(VRAMLAB_SOURCE_DIR) + "/tests/data/scenarios/" + file);
}

Bytes acts(const Scenario& sc)
{
    return estimate(sc).bytesOf("activations");
}

Bytes tensorBytes(const Report& r, const std::string& name)
{
    Bytes b = 0;
    for (const ActivationTensor& t : r.activations.tensors)
        if (t.name == name)
            b += t.total();
    return b;
}

/// A small Llama-style model (hidden 256, 8 heads, 2 KV heads), bf16, eager.
Scenario tinyLlama()
{
    return example("llama-tiny.json");
}

} // namespace

class TestActivations : public QObject {
    Q_OBJECT
private slots:
    // Measured by shared/reference/torch_reference.py (PyTorch autograd, saved_tensors_hooks).
    void referenceMeasurements_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<qint64>("measured");
        QTest::newRow("gpt2-tiny fp32 dropout full-ckpt") << "gpt2-tiny.json" << qint64(895'492);
        QTest::newRow("llama-tiny bf16 gqa") << "llama-tiny.json" << qint64(10'681'660);
        QTest::newRow("llama-tiny bf16 full-ckpt") << "llama-tiny-ckpt.json" << qint64(1'813'516);
        QTest::newRow("gpt2-like bf16 mqa dropout") << "gpt2-mqa-bf16.json" << qint64(685'644);
    }
    void referenceMeasurements()
    {
        QFETCH(QString, file);
        QFETCH(qint64, measured);
        QCOMPARE(acts(example(file.toUtf8().constData())), Bytes(measured));
    }

    void llamaTinyByHand()
    {
        // b=2, s=128, h=256, a=8, g=2 (repeated to 8), d=32, I=688, V=1000, bf16, 2 layers.
        const Count b = 2, s = 128, h = 256, a = 8, d = 32, I = 688, V = 1000, L = 2;
        const Count norm = 4 * b * s * h + 4 * b * s + 2 * b * s * h + 8; // fp32 copy, rsqrt, normalized, 1/h
        const Count attn = 2 * b * s * h // q/k/v input
            + 3 * 2 * b * a * s * d + 2 * 8 * a // q, repeated k and v, 2 indices
            + 8 + 4 * b * a * s * s + 2 * b * a * s * s // scale, fp32 softmax, bf16 copy
            + 2 * b * s * a * d; // o_proj input
        const Count mlp = 2 * b * s * h + 4 * 2 * b * s * I;
        const Count layer = 2 * norm + attn + mlp;
        const Count outside = 8 * b * s + 2 * 2 * s * d // ids, RoPE tables
            + norm + 2 * b * s * h + 4 * b * s * V + 4; // final norm, head input, log-softmax
        QCOMPARE(acts(tinyLlama()), L * layer + outside);
        QCOMPARE(L * layer + outside, Count(10'681'660));
    }

    void flashDropsTheQuadraticTerm()
    {
        Scenario sc = tinyLlama();
        sc.run.attention = AttentionImpl::Flash;
        const Report r = estimate(sc);
        QCOMPARE(tensorBytes(r, "softmax probabilities (fp32)"), Bytes(0));
        // Flash keeps Q, unrepeated K and V, O and an fp32 log-sum-exp per head and token.
        QCOMPARE(tensorBytes(r, "log-sum-exp (fp32)"), Bytes(2 * 4 * 2 * 8 * 128));
        QCOMPARE(tensorBytes(r, "K after RoPE"), Bytes(2 * 2 * 2 * 2 * 128 * 32));
        // Flash is linear in the sequence: doubling it doubles everything but the loss's
        // 4-byte total-weight scalar.
        Scenario longer = sc;
        longer.run.sequenceLength = 256;
        QCOMPARE(acts(longer), 2 * acts(sc) - 4);
        // Eager grows quadratically: beyond doubling, the fp32 softmax and its bf16 copy
        // (6 B x b x a x s^2 per layer) grow fourfold, while autograd's constant scalars and
        // indices (2 x 152 B per layer + 12 B at the loss) do not double.
        Scenario eager = tinyLlama(), eagerLong = tinyLlama();
        eagerLong.run.sequenceLength = 256;
        QCOMPARE(
            acts(eagerLong) - 2 * acts(eager), Bytes(2 * 6 * 2 * 8 * (256 * 256 - 2 * 128 * 128) - (2 * 152 + 12)));
    }

    void checkpointingOrder()
    {
        Scenario sc = tinyLlama();
        const Bytes none = acts(sc);
        sc.run.checkpointing.kind = Checkpointing::Kind::Selective;
        const Bytes selective = acts(sc);
        sc.run.checkpointing = { Checkpointing::Kind::Every, 2 };
        const Bytes every2 = acts(sc);
        sc.run.checkpointing.kind = Checkpointing::Kind::Full;
        const Report full = estimate(sc);
        QVERIFY(none > selective);
        QVERIFY(selective > full.bytesOf("activations"));
        // Two layers in one segment keep one input instead of two.
        QCOMPARE(full.bytesOf("activations") - every2, Bytes(2 * 128 * 256 * 2));
        // Selective drops exactly the attention core: scale, fp32 softmax and its bf16 copy, per layer.
        QCOMPARE(none - selective, Bytes(2 * (8 + 4 * 2 * 8 * 128 * 128 + 2 * 2 * 8 * 128 * 128)));
        // Full checkpointing rebuilds one layer at a time in backward: the peak shows it.
        QVERIFY(full.activations.recomputeBytes > 0);
        QCOMPARE(full.stepInputs.recompute, full.activations.recomputeBytes);
        const StepTimeline t = simulateStep(full.stepInputs, 2);
        for (const TimelineEvent& e : t.events)
            if (e.phase == StepPhase::Backward && e.layer >= 0)
                QVERIFY(e.bytes[static_cast<size_t>(TimelineCategory::Temporaries)] >= full.activations.recomputeBytes);
    }

    void tensorAndSequenceParallel()
    {
        Scenario sc = tinyLlama();
        sc.run.attention = AttentionImpl::Flash;
        sc.run.parallelism.gpus = 2;
        sc.run.parallelism.tensorParallel = 2;
        const Report tp = estimate(sc);
        // Heads and the FFN split over 2 GPUs: gate output per GPU is half.
        QCOMPARE(tensorBytes(tp, "gate projection output"), Bytes(2 * (2 * 128 * 344 * 2)));
        sc.run.parallelism.sequenceParallel = true;
        const Report sp = estimate(sc);
        QCOMPARE(tensorBytes(sp, "input norm: fp32 input"), tensorBytes(tp, "input norm: fp32 input") / 2);
    }

    void pipelineKeepsMicroBatchesInFlight()
    {
        Scenario sc = example("llama-tiny.json");
        sc.run.attention = AttentionImpl::Flash;
        sc.model.numLayers = 8;
        sc.run.parallelism.gpus = 4;
        sc.run.parallelism.pipelineParallel = 4;
        sc.run.gradientAccumulationSteps = 16;
        const Report r = estimate(sc);
        // 1F1B: the first of 4 stages holds 4 micro-batches of its 2 layers.
        QCOMPARE(r.microBatchesInFlight, Count(4));
        QCOMPARE(r.bytesOf("activations"), 4 * r.activations.bytes);
        sc.run.gradientAccumulationSteps = 2;
        QCOMPARE(estimate(sc).microBatchesInFlight, Count(2));
    }

    void loraKeepsLess()
    {
        Scenario sc = tinyLlama();
        const Bytes full = acts(sc);
        sc.run.finetune.method = FinetuneMethod::Lora;
        sc.run.finetune.rank = 8;
        const Report lora = estimate(sc);
        // Frozen MLP weights need no saved inputs: the gated product is gone, A outputs appear.
        QCOMPARE(tensorBytes(lora, "gated product (down_proj input)"), Bytes(0));
        QCOMPARE(tensorBytes(lora, "LoRA q: A output (B input)"), Bytes(2 * 2 * 128 * 8 * 2));
        QVERIFY(lora.bytesOf("activations") < full);
    }

    void inferenceHasNoSavedTensors()
    {
        Scenario sc = tinyLlama();
        sc.run.mode = Mode::Inference;
        sc.run.inference.batchSize = 2;
        sc.run.inference.contextLength = 128;
        const Report r = estimate(sc);
        QCOMPARE(r.bytesOf("gradients"), Bytes(0));
        QCOMPARE(r.bytesOf("optimizer_states"), Bytes(0));
        QVERIFY(r.bytesOf("kv_cache") > 0);
        QVERIFY(r.bytesOf("activations") < acts(tinyLlama()));
    }
};

QTEST_APPLESS_MAIN(TestActivations)
#include "tst_activations.moc"
