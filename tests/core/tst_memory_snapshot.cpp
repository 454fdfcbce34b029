// SPDX-License-Identifier: MIT
// PyTorch memory snapshots (written by tests/data/snapshots/make_snapshots.py in the format
// of torch.cuda.memory._dump_snapshot) analysed to the byte: the peaks of a hand-computed
// training step, what was alive, each block's category and rule, traces that start midway
// or are missing, two devices, fields of the wrong type, and the comparison with a report.
#include "vramlab/memory_snapshot.h"
#include "vramlab/snapshot_comparison.h"

#include <QtTest>

using namespace vramlab;

namespace {

std::string dataPath(const char* name)
{
    return std::string(VRAMLAB_TEST_DATA_DIR) + "/snapshots/" + name;
}

constexpr Bytes MiB = kMiB;

Bytes cat(const SnapshotDevice& d, SnapshotCategory c)
{
    return d.categoryAtPeak(c);
}

QByteArray errorOf(const char* name)
{
    try {
        readMemorySnapshot(dataPath(name));
    } catch (const InputError& e) {
        return e.what();
    }
    return "accepted";
}

} // namespace

class TstMemorySnapshot : public QObject {
    Q_OBJECT
private slots:
    void stepOneAcrossProtocols_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("protocol");
        QTest::newRow("protocol 2, old fields") << "step1_protocol2.pickle" << 2;
        QTest::newRow("protocol 4, new fields") << "step1_protocol4.pickle" << 4;
    }
    void stepOneAcrossProtocols()
    {
        QFETCH(QString, file);
        QFETCH(int, protocol);
        const MemorySnapshot s = readMemorySnapshot(dataPath(file.toUtf8().constData()));
        QCOMPARE(s.pickleProtocol, protocol);
        QCOMPARE(s.devices.size(), std::size_t(1));
        const SnapshotDevice& d = s.devices[0];
        QVERIFY(d.hasTrace);
        QCOMPARE(d.traceEntries, int64_t(35));
        // 6 weights + 1 input + 6 gradients + 12 Adam states + 6 foreach temporaries.
        QCOMPARE(d.peakAllocatedBytes, 31 * MiB);
        QCOMPARE(d.peakAllocatedEvent, int64_t(26));
        QVERIFY(d.peakPhase == SnapshotPhase::Optimizer);
        QCOMPARE(d.peakReservedBytes, 64 * MiB); // two 32 MiB segments
        QCOMPARE(d.allocatedAtDumpBytes, 18 * MiB);
        QCOMPARE(d.reservedAtDumpBytes, 64 * MiB);
        QCOMPARE(d.blocksBeforeTrace, int64_t(0));
        QCOMPARE(cat(d, SnapshotCategory::Weights), 6 * MiB);
        QCOMPARE(cat(d, SnapshotCategory::Gradients), 6 * MiB);
        QCOMPARE(cat(d, SnapshotCategory::OptimizerStates), 12 * MiB);
        QCOMPARE(cat(d, SnapshotCategory::Activations), Bytes(0));
        QCOMPARE(cat(d, SnapshotCategory::Temporaries), 6 * MiB);
        QCOMPARE(cat(d, SnapshotCategory::Other), 1 * MiB);
        QCOMPARE(d.aliveAtPeak.size(), std::size_t(10));
        const SnapshotBlock& top = d.aliveAtPeak.front();
        QCOMPARE(top.sizeBytes, 6 * MiB);
        QVERIFY(top.category == SnapshotCategory::Temporaries);
        QCOMPARE(QString::fromStdString(top.rule),
            QStringLiteral("a working buffer of the optimizer step (adam.py:500:_multi_tensor_adam), freed before the "
                           "step ended"));
        QCOMPARE(QString::fromStdString(top.frames.front().text()), QStringLiteral("adam.py:500:_multi_tensor_adam"));
        QCOMPARE(top.frames.size(), std::size_t(5));
        const SnapshotBlock& w1 = d.aliveAtPeak[1];
        QCOMPARE(w1.sizeBytes, 4 * MiB);
        QVERIFY(w1.category == SnapshotCategory::Weights);
        QCOMPARE(QString::fromStdString(w1.rule),
            QStringLiteral("allocated while building or loading the model (module.py:810:_apply)"));
        // The curve: before the trace, then one point per alloc, free and segment entry.
        QCOMPARE(d.curve.front().allocatedBytes, Bytes(0));
        QCOMPARE(d.curve.back().allocatedBytes, 18 * MiB);
        QCOMPARE(d.curve.back().stepFraction, 1.0);
        // Phases as the stacks tell them: setup, forward, backward, optimizer.
        QCOMPARE(d.phases.size(), std::size_t(4));
        QVERIFY(d.phases[0].phase == SnapshotPhase::Setup);
        QVERIFY(d.phases[1].phase == SnapshotPhase::Forward);
        QCOMPARE(d.phases[1].event, int64_t(4));
        QVERIFY(d.phases[2].phase == SnapshotPhase::Backward);
        QVERIFY(d.phases[3].phase == SnapshotPhase::Optimizer);
    }

    void stepTwoStartsWithWeightsWithoutStacks()
    {
        for (const char* file : { "step2_protocol5.pickle", "step2_protocol0.pickle" }) {
            const MemorySnapshot s = readMemorySnapshot(dataPath(file));
            QCOMPARE(s.devices.size(), std::size_t(2));
            const SnapshotDevice& d = s.devices[0];
            QCOMPARE(d.blocksBeforeTrace, int64_t(6));
            QCOMPARE(d.bytesBeforeTrace, 18 * MiB);
            QVERIFY(!d.traceStartsMidway);
            // 18 before + x 1 + h 3 + dlogits 2 + W2.grad 2 + dh 3 + W1.grad 4, in backward.
            QCOMPARE(d.peakAllocatedBytes, 33 * MiB);
            QCOMPARE(d.peakAllocatedEvent, int64_t(12));
            QVERIFY(d.peakPhase == SnapshotPhase::Backward);
            QCOMPARE(d.peakReservedBytes, 64 * MiB);
            QCOMPARE(d.curve.front().reservedBytes, 32 * MiB); // the second segment comes in the trace
            QCOMPARE(cat(d, SnapshotCategory::Weights), 6 * MiB); // by size: one per gradient
            QCOMPARE(cat(d, SnapshotCategory::OptimizerStates), 12 * MiB); // the rest of those sizes
            QCOMPARE(cat(d, SnapshotCategory::Gradients), 6 * MiB);
            QCOMPARE(cat(d, SnapshotCategory::Activations), 3 * MiB);
            QCOMPARE(cat(d, SnapshotCategory::Temporaries), 5 * MiB);
            QCOMPARE(cat(d, SnapshotCategory::Other), 1 * MiB);
            int sizeRule = 0;
            for (const SnapshotBlock& b : d.aliveAtPeak) {
                if (b.category == SnapshotCategory::Activations)
                    QCOMPARE(QString::fromStdString(b.rule),
                        QStringLiteral("saved by the forward (model.py:12:forward) and freed in backward"));
                if (b.rule.find("a gradient has its size") != std::string::npos)
                    ++sizeRule;
            }
            QCOMPARE(sizeRule, 2);
            const SnapshotDevice& d1 = s.devices[1];
            QCOMPARE(d1.device, 1);
            QCOMPARE(d1.peakAllocatedBytes, 1 * MiB);
            QCOMPARE(d1.peakReservedBytes, 32 * MiB);
            QCOMPARE(s.busiest()->device, 0);
            QCOMPARE(QString::fromStdString(s.allocatorConf), QStringLiteral("expandable_segments:False"));
        }
    }

    void wrappedTraceIsSaidAndStillExact()
    {
        const MemorySnapshot s = readMemorySnapshot(dataPath("step2_wrapped.pickle"));
        const SnapshotDevice& d = s.devices[0];
        QVERIFY(d.traceStartsMidway);
        QCOMPARE(d.traceEntries, int64_t(24));
        QCOMPARE(d.blocksBeforeTrace, int64_t(9)); // weights, states, x, h and tmp (its free is first)
        QCOMPARE(d.bytesBeforeTrace, 22 * MiB + MiB / 2);
        QCOMPARE(d.peakAllocatedBytes, 33 * MiB);
        QCOMPARE(cat(d, SnapshotCategory::Activations), 3 * MiB); // h: no stack, freed in backward
        bool said = false;
        for (const std::string& n : s.notes)
            said = said || n.find("max_entries") != std::string::npos;
        QVERIFY(said);
    }

    void segmentsOnlyGiveTheStateAtTheDump()
    {
        const MemorySnapshot s = readMemorySnapshot(dataPath("segments_only.pickle"));
        const SnapshotDevice& d = s.devices[0];
        QVERIFY(!d.hasTrace);
        QCOMPARE(d.peakAllocatedBytes, 18 * MiB);
        QCOMPARE(d.peakReservedBytes, 64 * MiB);
        QCOMPARE(cat(d, SnapshotCategory::Weights), 6 * MiB); // module.to in the block's stack
        QCOMPARE(cat(d, SnapshotCategory::OptimizerStates), 12 * MiB); // Adam's _init_group
        QCOMPARE(d.curve.size(), std::size_t(1));
    }

    void fieldsOfTheWrongTypeAreNamed()
    {
        QVERIFY(errorOf("hostile/size_is_a_string.pickle")
                    .endsWith("device_traces[0][3].size: expected an int, got str 'abc'"));
        QVERIFY(errorOf("hostile/negative_size.pickle")
                    .endsWith("device_traces[0][5].size: expected a size of 0 bytes or more, got -5"));
        QVERIFY(errorOf("hostile/segments_not_a_list.pickle").endsWith("segments: expected a list, got dict of 1"));
        QVERIFY(errorOf("hostile/not_a_snapshot.pickle").contains("segments: missing: not a PyTorch memory snapshot"));
    }

    void comparisonWithAHandMadeReport()
    {
        const MemorySnapshot s = readMemorySnapshot(dataPath("step2_protocol5.pickle"));
        Report r;
        r.scenarioName = "hand";
        r.stepInputs.training = true;
        r.peak = 600 * MiB;
        r.overheadParts
            = { { "cuda_context", "CUDA context", 500 * MiB, {}, {} }, { "allocator", "Allocator", 10 * MiB, {}, {} } };
        r.peakEvent.phase = StepPhase::Backward;
        auto put = [&](TimelineCategory c, Bytes b) { r.peakEvent.bytes[static_cast<std::size_t>(c)] = b; };
        put(TimelineCategory::Weights, 4 * MiB);
        put(TimelineCategory::MasterWeights, 2 * MiB);
        put(TimelineCategory::Gradients, 6 * MiB);
        put(TimelineCategory::OptimizerStates, 12 * MiB);
        put(TimelineCategory::Activations, 40 * MiB);
        put(TimelineCategory::Temporaries, 6 * MiB);
        put(TimelineCategory::Overhead, 530 * MiB); // context 500 + allocator 10 + workspace 20
        const SnapshotComparison c = compareSnapshot(s, r);
        QCOMPARE(c.device, 0);
        QCOMPARE(c.measuredPeakAllocatedBytes, 33 * MiB);
        QCOMPARE(c.predictedAllocatedBytes, 90 * MiB);
        QCOMPARE(c.predictedReservedBytes, 100 * MiB);
        QCOMPARE(c.categories.size(), std::size_t(6));
        QCOMPARE(c.categories[0].predictedBytes, 6 * MiB); // weights + master weights
        QCOMPARE(c.categories[0].differenceBytes(), Bytes(0));
        QCOMPARE(c.categories[3].measuredBytes, 3 * MiB);
        QCOMPARE(c.categories[3].predictedBytes, 40 * MiB);
        QCOMPARE(c.categories[5].predictedBytes, 20 * MiB); // the workspace, inside the allocator
        // Peaks first, then the differences by size: activations (-37), other (-19).
        QCOMPARE(c.explanations.size(), std::size_t(4));
        QVERIFY2(
            QByteArray::fromStdString(c.explanations[0])
                .startsWith(
                    "Peak allocated: measured 33.00 MiB (backward) against 90.00 MiB predicted (backward) (-63 %)"),
            c.explanations[0].c_str());
        QVERIFY(c.explanations[2].starts_with("Activations: measured 3.00 MiB, predicted 40.00 MiB (-37.00 MiB)"));
        QVERIFY(c.explanations[3].starts_with("Other: measured 1.00 MiB, predicted 20.00 MiB"));
    }

    // A report with the caching-allocator replay's counters (the CLI's snapshot --scenario asks for
    // them): reserved and allocated are the replay's, not the peak less the context.
    void comparisonWithTheAllocatorReplay()
    {
        const MemorySnapshot s = readMemorySnapshot(dataPath("step2_protocol5.pickle"));
        Report r;
        r.stepInputs.training = true;
        r.peak = 600 * MiB;
        r.overheadParts = { { "cuda_context", "CUDA context", 500 * MiB, {}, {} } };
        r.allocatorReplayed = true;
        r.peakAllocatedBytes = 95 * MiB;
        r.peakReservedBytes = 120 * MiB;
        r.peakDeviceBytes = 620 * MiB;
        const SnapshotComparison c = compareSnapshot(s, r);
        QCOMPARE(c.predictedAllocatedBytes, 95 * MiB);
        QCOMPARE(c.predictedReservedBytes, 120 * MiB);
        QVERIFY2(c.explanations[1].find("the caching-allocator replay predicts 120.00 MiB reserved at most")
                != std::string::npos,
            c.explanations[1].c_str());
    }
};

QTEST_APPLESS_MAIN(TstMemorySnapshot)
#include "tst_memory_snapshot.moc"
