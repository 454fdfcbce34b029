// SPDX-License-Identifier: MIT
// 10^15 parameters and 10^7-token sequences: exact integers, no overflow; beyond 2^63: a clear error.
#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/parameter_tensors.h"
#include "vramlab/scenario_io.h"

#include <QtTest>

using namespace vramlab;

namespace {
/// 5,000 layers of hidden 131,072: 12 x L x h^2 = 1.03e15 parameters.
Scenario quadrillion()
{
    Scenario sc;
    ModelSpec& m = sc.model;
    m.vocabSize = 256'000;
    m.hiddenSize = 131'072;
    m.numLayers = 5'000;
    m.numHeads = m.numKvHeads = 1'024;
    m.headDim = 128;
    m.ffnHiddenSize = 4 * 131'072;
    m.mlp = MlpKind::Gelu;
    sc.run.sequenceLength = 10'000'000;
    sc.run.attention = AttentionImpl::Flash;
    sc.run.checkpointing.kind = Checkpointing::Kind::Full;
    return sc;
}
} // namespace

class TestSizes : public QObject {
    Q_OBJECT
private slots:
    void quadrillionParametersExact()
    {
        const Scenario sc = quadrillion();
        const Count h = 131'072, L = 5'000, V = 256'000;
        const Count perLayer = 4 * h * h + 2 * h * 4 * h + 2 * h; // attention, GELU MLP, 2 RMSNorms
        const Count total = L * perLayer + 2 * V * h + h;
        QCOMPARE(countParameters(sc.model).total, total);
        QVERIFY(total > 1'000'000'000'000'000);
        const Report r = estimate(sc);
        QCOMPARE(r.bytesOf("weights"), 2 * total);
        QCOMPARE(r.bytesOf("optimizer_states"), 8 * total);
        // Activations of 10^7 tokens with full checkpointing: one bf16 layer input per layer, exact.
        Bytes checkpoints = 0;
        for (const ActivationTensor& t : r.activations.tensors)
            if (t.module == "checkpoint")
                checkpoints = t.total();
        QCOMPARE(checkpoints, L * 10'000'000 * h * 2);
        // The end of the forward pass holds everything but the gradients (one GPU: set_to_none).
        QVERIFY(r.total > 0 && r.peak >= r.total - r.bytesOf("gradients"));
        QVERIFY(r.flops.perStep > 6.0 * 1e15 * 1e7);
    }

    void beyondSixtyThreeBitsIsAnError()
    {
        Scenario sc = quadrillion();
        sc.run.attention = AttentionImpl::Eager;
        sc.run.checkpointing.kind = Checkpointing::Kind::None;
        // 1024 heads x (10^7)^2 x 4 B softmax per layer: 4e17 x 5000 layers overflows 2^63.
        QVERIFY_THROWS_EXCEPTION(SizeOverflow, estimate(sc));
        QVERIFY_THROWS_EXCEPTION(SizeOverflow, checkedMul(Count(1) << 40, Count(1) << 40));
        QCOMPARE(checkedMul(Count(1) << 31, Count(1) << 31), Count(1) << 62);
    }
};

QTEST_APPLESS_MAIN(TestSizes)
#include "tst_sizes.moc"
