// SPDX-License-Identifier: MIT
// The caching-allocator model against cases computed by hand from PyTorch's
// c10/cuda/CUDACachingAllocator.cpp@001074d25084fdb87a799823e395a50f5ec044d3 (round_size,
// get_allocation_size, get_free_block, should_split, free_block, release_cached_blocks,
// try_allocate_expandable_block), and the report's three counters built on it.
#include "test_scenarios.h"

#include "vramlab/allocation_trace.h"
#include "vramlab/caching_allocator.h"
#include "vramlab/estimator.h"
#include "vramlab/report_json.h"
#include "vramlab/scenario_fields.h"
#include "vramlab/scenario_io.h"

#include <QtTest>

#include <cmath>

using namespace vramlab;

class TstCachingAllocator : public QObject {
    Q_OBJECT
private slots:
    void roundingAndSegmentSizes()
    {
        QCOMPARE(CachingAllocator::roundSize(1), Bytes(512));
        QCOMPARE(CachingAllocator::roundSize(512), Bytes(512));
        QCOMPARE(CachingAllocator::roundSize(513), Bytes(1024));
        QCOMPARE(CachingAllocator::allocationSize(1 * kMiB), 2 * kMiB); // small pool
        QCOMPARE(CachingAllocator::allocationSize(1 * kMiB + 512), 20 * kMiB); // 1-10 MiB: kLargeBuffer
        QCOMPARE(CachingAllocator::allocationSize(10 * kMiB - 512), 20 * kMiB);
        QCOMPARE(CachingAllocator::allocationSize(10 * kMiB), 10 * kMiB); // >= kMinLargeAlloc: 2 MiB steps
        QCOMPARE(CachingAllocator::allocationSize(11 * kMiB), 12 * kMiB);
    }

    void smallTensorReservesASmallSegment()
    {
        CachingAllocator a;
        a.allocate(1 * kKiB);
        QCOMPARE(a.allocatedBytes(), Bytes(1024));
        QCOMPARE(a.reservedBytes(), 2 * kMiB);
        a.allocate(1000); // rounded to 1024, split from the same 2 MiB segment
        QCOMPARE(a.allocatedBytes(), Bytes(2048));
        QCOMPARE(a.reservedBytes(), 2 * kMiB);
        // Two 1 MiB requests fill the segment; a third needs another one.
        CachingAllocator b;
        b.allocate(1 * kMiB);
        b.allocate(1 * kMiB);
        QCOMPARE(b.reservedBytes(), 2 * kMiB);
        b.allocate(1 * kMiB);
        QCOMPARE(b.reservedBytes(), 4 * kMiB);
    }

    void midSizedRequestsShareA20MiBSegment()
    {
        CachingAllocator a;
        a.allocate(5 * kMiB);
        QCOMPARE(a.reservedBytes(), 20 * kMiB);
        QCOMPARE(a.allocatedBytes(), 5 * kMiB); // remainder 15 MiB > 1 MiB: split
        a.allocate(5 * kMiB);
        QCOMPARE(a.reservedBytes(), 20 * kMiB); // best fit: the 15 MiB remainder
        QCOMPARE(a.allocatedBytes(), 10 * kMiB);
        QCOMPARE(a.segments(), Count(1));
    }

    void largeRequestsRoundTo2MiB()
    {
        CachingAllocator a;
        a.allocate(11 * kMiB);
        QCOMPARE(a.reservedBytes(), 12 * kMiB);
        // The 1 MiB left is not > kSmallSize: no split, the whole block is allocated.
        QCOMPARE(a.allocatedBytes(), 12 * kMiB);
        CachingAllocator b;
        b.allocate(10 * kMiB + kMiB / 2); // 12 MiB segment, 1.5 MiB left > 1 MiB: split
        QCOMPARE(b.reservedBytes(), 12 * kMiB);
        QCOMPARE(b.allocatedBytes(), 10 * kMiB + kMiB / 2);
    }

    void freedThenLargerFragments()
    {
        CachingAllocator a;
        a.release(a.allocate(12 * kMiB));
        QCOMPARE(a.allocatedBytes(), Bytes(0));
        QCOMPARE(a.reservedBytes(), 12 * kMiB); // cached, not returned
        a.allocate(14 * kMiB); // the cached 12 MiB block is too small: a new segment
        QCOMPARE(a.reservedBytes(), 26 * kMiB);
        QCOMPARE(a.peakAllocatedBytes(), 14 * kMiB);
        // Smaller again: the cached block serves it.
        a.allocate(12 * kMiB);
        QCOMPARE(a.reservedBytes(), 26 * kMiB);
    }

    void freedNeighboursMerge()
    {
        CachingAllocator a;
        const auto x = a.allocate(4 * kMiB), y = a.allocate(4 * kMiB), z = a.allocate(4 * kMiB);
        QCOMPARE(a.reservedBytes(), 20 * kMiB); // x, y, z and 8 MiB split off one 20 MiB segment
        a.release(y);
        a.release(x); // merges with y: 8 MiB at the segment's start
        a.allocate(8 * kMiB); // best fit: the lowest of the two 8 MiB blocks, no new segment
        QCOMPARE(a.reservedBytes(), 20 * kMiB);
        a.release(z);
        a.allocate(12 * kMiB); // z merged with the 8 MiB tail: 12 MiB, still one segment
        QCOMPARE(a.reservedBytes(), 20 * kMiB);
        QCOMPARE(a.segments(), Count(1));
    }

    void releasesTheCacheBeforeGoingOverCapacity()
    {
        CachingAllocator a({ false, 40 * kMiB });
        a.release(a.allocate(30 * kMiB));
        a.allocate(32 * kMiB); // 30 + 32 > 40: the unsplit cached segment is cudaFree'd, then retried
        QVERIFY(!a.outOfMemory());
        QCOMPARE(a.reservedBytes(), 32 * kMiB);
        QCOMPARE(a.peakReservedBytes(), 32 * kMiB);
        // Live tensors cannot be released: 32 + 20 > 40 is out of memory.
        CachingAllocator b({ false, 40 * kMiB });
        b.allocate(30 * kMiB);
        b.allocate(12 * kMiB);
        QVERIFY(b.outOfMemory());
    }

    void expandableSegmentsGrowInPages()
    {
        // Large pool pages are 20 MiB (kLargeBuffer), small pool pages 2 MiB.
        CachingAllocatorConfig cfg;
        cfg.expandableSegments = true;
        CachingAllocator a(cfg);
        a.allocate(5 * kMiB);
        QCOMPARE(a.reservedBytes(), 20 * kMiB);
        a.allocate(5 * kMiB);
        QCOMPARE(a.reservedBytes(), 20 * kMiB);
        a.allocate(30 * kMiB); // the free 10 MiB tail plus one more 20 MiB page
        QCOMPARE(a.reservedBytes(), 40 * kMiB);
        QCOMPARE(a.allocatedBytes(), 40 * kMiB);
        // Without: 20 MiB for the two 5 MiB tensors and a 30 MiB segment.
        CachingAllocator b;
        b.allocate(5 * kMiB);
        b.allocate(5 * kMiB);
        b.allocate(30 * kMiB);
        QCOMPARE(b.reservedBytes(), 50 * kMiB);
        // The freed-then-larger pattern does not fragment: the segment just grows.
        CachingAllocator c(cfg);
        c.release(c.allocate(12 * kMiB));
        c.allocate(14 * kMiB);
        QCOMPARE(c.reservedBytes(), 20 * kMiB);
        CachingAllocator s(cfg);
        s.allocate(1 * kKiB);
        QCOMPARE(s.reservedBytes(), 2 * kMiB);
    }

    void expandableSegmentsUnmapUnderPressure()
    {
        // 60 MiB of room: x = 40 MiB (pages 0-1), y = 5 MiB (page 2, 15 MiB free after it).
        CachingAllocatorConfig cfg;
        cfg.expandableSegments = true;
        cfg.capacityBytes = 60 * kMiB;
        CachingAllocator a(cfg);
        const auto x = a.allocate(40 * kMiB);
        a.allocate(5 * kMiB);
        QCOMPARE(a.reservedBytes(), 60 * kMiB);
        a.release(x);
        // 45 MiB: the free tail plus two new pages would be 100 MiB, so the free pages 0-1 are
        // unmapped (unmap_block) and mapped again after the tail: 20 + 40 MiB.
        a.allocate(45 * kMiB);
        QVERIFY(!a.outOfMemory());
        QCOMPARE(a.reservedBytes(), 60 * kMiB);
        QCOMPARE(a.peakReservedBytes(), 60 * kMiB);
        // Without: y's 20 MiB segment is split (not released), the freed 40 MiB segment is, and
        // the 46 MiB segment for 45 MiB still does not fit: 20 + 46 > 60.
        CachingAllocator b({ false, 60 * kMiB });
        const auto bx = b.allocate(40 * kMiB);
        b.allocate(5 * kMiB);
        b.release(bx);
        b.allocate(45 * kMiB);
        QVERIFY(b.outOfMemory());
    }

    static Report replayed(const Scenario& sc)
    {
        EstimateOptions o;
        o.replayAllocator = true;
        return estimate(sc, o);
    }

    void reportHasThreeCounters()
    {
        Scenario sc = test::llama3_8b();
        sc.run.parallelism.gpus = 8;
        sc.run.parallelism.zeroStage = 3;
        sc.run.checkpointing = { Checkpointing::Kind::Full, 0 };
        const Report r = replayed(sc);
        QVERIFY(r.allocatorReplayed);
        QVERIFY(r.peakAllocatedBytes > 0);
        QVERIFY(r.peakAllocatedBytes <= r.peakReservedBytes);
        // Device = reserved + what the allocator never sees: the CUDA context and NCCL (256 MiB).
        QCOMPARE(r.peakDeviceBytes, r.peakReservedBytes + sc.run.overheads.cudaContextBytes + 256 * kMiB);
        // The replay changes nothing of the lean estimate: peak, total, components, verdict.
        const Report lean = estimate(sc);
        QCOMPARE(r.peak, lean.peak);
        QCOMPARE(r.total, lean.total);
        QCOMPARE(r.fits, lean.fits);
        QCOMPARE(r.fits, r.peak <= r.usableBytes);
    }

    void leanPathLeavesEverythingAsBefore()
    {
        // replayAllocator false (the default, and every sweep, fit and planner call): the
        // counters stay 0 and every number is the one the replay-on estimate reports too.
        Scenario gpt2 = test::llama3_8b();
        gpt2.model = findPreset("gpt2")->model;
        gpt2.run.sequenceLength = 1024;
        gpt2.run.gradientAccumulationSteps = 4;
        for (const Scenario& base : { test::llama3_8b(), gpt2 }) {
            Scenario sc = base;
            for (int variant = 0; variant < 3; ++variant) {
                if (variant == 1) {
                    sc.run.parallelism.gpus = 8;
                    sc.run.parallelism.zeroStage = 3;
                }
                if (variant == 2)
                    sc.run.checkpointing = { Checkpointing::Kind::Every, 2 };
                const Report lean = estimate(sc);
                QCOMPARE(lean.peakAllocatedBytes, Bytes(0));
                QCOMPARE(lean.peakReservedBytes, Bytes(0));
                QCOMPARE(lean.peakDeviceBytes, Bytes(0));
                QVERIFY(!lean.allocatorReplayed);
                QVERIFY(!lean.allocatorOutOfMemory);
                QVERIFY(!lean.allocatorExtrapolated);
                const Report r = replayed(sc);
                QVERIFY(r.allocatorReplayed);
                QCOMPARE(r.peak, lean.peak);
                QCOMPARE(r.total, lean.total);
                QCOMPARE(r.fits, lean.fits);
                QCOMPARE(r.components.size(), lean.components.size());
                for (size_t i = 0; i < r.components.size(); ++i)
                    QCOMPARE(r.components[i].bytes, lean.components[i].bytes);
                QCOMPARE(r.overheadParts.size(), lean.overheadParts.size());
                for (size_t i = 0; i < r.overheadParts.size(); ++i)
                    QCOMPARE(r.overheadParts[i].bytes, lean.overheadParts[i].bytes);
                QCOMPARE(simulateStep(r.stepInputs, 2, false).peak, r.peak);
            }
        }
    }

    /// Ring attention's buffers (activation_model.cpp ringAttentionBuffers) are replayed one by one
    /// while each layer's attention runs: where the step's peak is a layer's ring backward, the replay's
    /// allocated peak holds them, the live peak less what the allocator never sees.
    void contextParallelIsReplayed()
    {
        Scenario sc = test::llama3_8b();
        sc.model.vocabSize = 1024; // keeps the loss below the ring's backward
        sc.run.framework = Framework::Torchtitan;
        sc.run.parallelism.gpus = 8;
        sc.run.parallelism.zeroStage = 3;
        sc.run.parallelism.sharding = Sharding::Fsdp2;
        sc.run.parallelism.contextParallel = 4;
        sc.run.sequenceLength = 131072;
        sc.run.checkpointing.kind = Checkpointing::Kind::Full;
        sc.run.gpu.reset();
        const Report r = replayed(sc);
        QVERIFY2(r.allocatorReplayed, r.allocatorNote.c_str());
        QVERIFY2(r.peakWhere.find("ring attention") != std::string::npos, r.peakWhere.c_str());
        const Bytes ring = r.stepInputs.ringBackward;
        QVERIFY(ring > 2 * kGiB); // 32,768 local tokens: the whole sequence's K and V gathered again alone is 4 GiB
        auto part = [&r](std::string_view key) {
            for (const Component& c : r.overheadParts)
                if (c.key == key)
                    return c.bytes;
            return Bytes(0);
        };
        // estimator.cpp replayAllocator: the context and NCCL's own buffers are outside the allocator (DDP's two
        // 25 MiB buckets are PyTorch tensors, replayed).
        const Bytes outside = part("cuda_context") + part("comm_buffers") - 2 * 25 * kMiB;
        const Bytes live = r.peak - outside;
        qInfo("live %.3f GiB, replay allocated %.3f GiB, ring backward %.3f GiB", double(live) / kGiB,
            double(r.peakAllocatedBytes) / kGiB, double(ring) / kGiB);
        // The lean peak counts 512 B rounding as one part; the replay rounds each tensor: within 1 %.
        QVERIFY(std::abs(double(r.peakAllocatedBytes) - double(live)) < 0.01 * double(live));
        QVERIFY(r.peakAllocatedBytes > live - ring / 2); // without the ring the replay would fall short by all of it
        QVERIFY(r.peakReservedBytes >= r.peakAllocatedBytes);
    }

    void expandableSegmentsReserveLess()
    {
        Scenario sc = test::llama3_8b();
        sc.run.gpu.reset();
        const Report plain = replayed(sc);
        findField("run.allocator.expandable_segments")->set(sc, FieldValue(true)); // the scenario key
        const Report exp = replayed(sc);
        QVERIFY(exp.peakReservedBytes <= plain.peakReservedBytes);
        QVERIFY(exp.peakReservedBytes >= exp.peakAllocatedBytes);
        QCOMPARE(exp.peak, plain.peak); // the live peak does not depend on it
        qInfo("reserved %lld MiB (expandable) vs %lld MiB; allocated %lld MiB",
            (long long)(exp.peakReservedBytes / kMiB), (long long)(plain.peakReservedBytes / kMiB),
            (long long)(exp.peakAllocatedBytes / kMiB));
        // Within a page per pool (20 MiB large, 2 MiB small) of the allocated high-water mark, plus one
        // page of slack each for a freed hole a later request did not fit.
        QVERIFY(exp.peakReservedBytes - exp.peakAllocatedBytes <= 2 * (20 + 2) * kMiB);
    }

    void capacityKeepsReservedWithinTheGpu()
    {
        // A GPU between the allocated and the uncapped reserved peak: the allocator frees its
        // cache and retries, so reserved stays within the GPU.
        Scenario sc = test::llama3_8b();
        sc.run.gpu.reset();
        const Report open = replayed(sc);
        const Bytes outside = open.peakDeviceBytes - open.peakReservedBytes;
        QVERIFY(open.peakReservedBytes > open.peakAllocatedBytes);
        sc.run.gpu = test::llama3_8b().run.gpu;
        sc.run.gpu->memoryBytes
            = open.peakAllocatedBytes + outside + (open.peakReservedBytes - open.peakAllocatedBytes) / 2;
        const Report tight = replayed(sc);
        if (!tight.allocatorOutOfMemory)
            QVERIFY(tight.peakReservedBytes + outside <= sc.run.gpu->memoryBytes);
        // Below the live tensors nothing helps.
        sc.run.gpu->memoryBytes = open.peakAllocatedBytes + outside - 1;
        const Report over = replayed(sc);
        QVERIFY(over.allocatorOutOfMemory);
        QVERIFY(!over.fits);
    }

    void countersAndKeyRoundTripThroughJson()
    {
        Scenario sc = test::llama3_8b();
        sc.run.allocator.expandableSegments = true;
        // The scenario key: written only when true, read back as it was; absent reads false.
        const nlohmann::json doc = scenarioToJson(sc);
        QCOMPARE(doc.at("run").at("allocator").at("expandable_segments").get<bool>(), true);
        QVERIFY(readScenario(doc).run.allocator.expandableSegments);
        QVERIFY(!scenarioToJson(test::llama3_8b()).at("run").contains("allocator"));
        QVERIFY(!readScenario(scenarioToJson(test::llama3_8b())).run.allocator.expandableSegments);
        // The report's keys: there only when replayed, equal to the report's fields after a text round trip.
        const Report r = replayed(sc);
        const nlohmann::json j = nlohmann::json::parse(reportToJson(r).dump(2));
        QCOMPARE(j.at("peak_allocated_bytes").get<Bytes>(), r.peakAllocatedBytes);
        QCOMPARE(j.at("peak_reserved_bytes").get<Bytes>(), r.peakReservedBytes);
        QCOMPARE(j.at("peak_device_bytes").get<Bytes>(), r.peakDeviceBytes);
        QCOMPARE(j.at("allocator_out_of_memory").get<bool>(), r.allocatorOutOfMemory);
        QCOMPARE(j.at("peak_bytes").get<Bytes>(), r.peak);
        const nlohmann::ordered_json lean = reportToJson(estimate(sc));
        for (const char* key : { "peak_allocated_bytes", "peak_reserved_bytes", "peak_device_bytes",
                 "allocator_out_of_memory", "allocator_extrapolated" })
            QVERIFY(!lean.contains(key));
    }

    void fragmentationOutOfMemoryIsStatedBesideAFittingVerdict()
    {
        // The GPU just holds the live peak (margin 0): the lean verdict fits; the replay, which
        // rounds every block and keeps segments, finds no block even after releasing the cache.
        Scenario sc = test::llama3_8b();
        sc.run.safetyMargin = 0;
        sc.run.gpu->memoryBytes = estimate(sc).peak;
        const Report r = replayed(sc);
        QVERIFY(r.fits);
        QVERIFY(r.allocatorOutOfMemory);
        bool stated = false;
        for (const std::string& w : r.warnings)
            stated = stated || w.find("fits by its live peak, but the caching allocator") != std::string::npos;
        QVERIFY(stated);
    }

    void extrapolationMatchesFullReplayOnUniformLayers()
    {
        // A deep stack of identical layers: two short runs and the steady increment give the
        // allocated peak exactly; reserved only approximately (0.74 % low here: cached blocks
        // are reused differently deep in the stack), which is why stacks up to
        // kFullReplayLayers are replayed whole.
        ReplayInputs in;
        in.training = true;
        in.layers = 600;
        in.params = { { 4096 * 4096, 600, true, true }, { 4096, 600, true, true }, { 4096 * 32000, 1, false, true } };
        in.weights = (4096LL * 4096 + 4096) * 600 * 2 + 4096LL * 32000 * 2;
        in.gradients = in.weights;
        in.optimizer = 2 * in.weights;
        in.savedSizes = { { 3 * kMiB, 600, 0, 1, ActivationScope::Layer },
            { 40 * kMiB, 600, 0, 1, ActivationScope::Layer }, { 64 * kMiB, 1, 0, 1, ActivationScope::Head } };
        in.largestLayerTensor = 40 * kMiB;
        in.backwardWorkingSet = 80 * kMiB;
        in.lossForwardParts = { 100 * kMiB, 200 * kMiB };
        in.lossBackward = 400 * kMiB;
        const AllocatorPeaks e = replayTrainingStep(in, {});
        const AllocatorPeaks f = replayTrainingStepFully(in, {});
        QVERIFY(e.extrapolated);
        QVERIFY(!f.extrapolated);
        qInfo("extrapolated %lld / %lld, replayed %lld / %lld bytes (allocated / reserved)",
            (long long)e.peakAllocatedBytes, (long long)e.peakReservedBytes, (long long)f.peakAllocatedBytes,
            (long long)f.peakReservedBytes);
        QCOMPARE(e.peakAllocatedBytes, f.peakAllocatedBytes);
        QVERIFY(std::abs(double(e.peakReservedBytes - f.peakReservedBytes)) <= 0.01 * double(f.peakReservedBytes));
    }
};

QTEST_APPLESS_MAIN(TstCachingAllocator)
#include "tst_caching_allocator.moc"
