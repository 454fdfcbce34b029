// SPDX-License-Identifier: MIT
// The simulated training step: hand-computed timelines, checkpointing and ZeRO peaks,
// step 1 against step 2, and the fit solvers at their boundaries.
#include "test_scenarios.h"
#include "vramlab/estimator.h"
#include "vramlab/fit.h"
#include "vramlab/step_timeline.h"

#include <QtTest>

using namespace vramlab;

namespace {

/// The hand case of test_scenarios.h.
StepInputs handCase()
{
    return test::handStep();
}

Bytes alive(const TimelineEvent& e, TimelineCategory c)
{
    return e.bytes[static_cast<size_t>(c)];
}

} // namespace

class TstTimeline : public QObject {
    Q_OBJECT
private slots:
    void handComputedStepTwo()
    {
        // Start 100 + 200 + 10 = 310. Forward: +1, +10 x 4, head +5 (loss buffers 7).
        // Backward: loss gradients 8, then per layer working set 3 and a quarter of the
        // gradients (25) while the layer's 10 are still held: layer 1 = 310 + 11 + 3 + 100.
        const StepTimeline t = simulateStep(handCase(), 2);
        QCOMPARE(t.peak, Bytes(424));
        QVERIFY(t.atPeak.phase == StepPhase::Backward);
        QCOMPARE(t.atPeak.layer, Count(0));
        QCOMPARE(t.events.front().total(), Bytes(310));
        QCOMPARE(t.events.back().total(), Bytes(410)); // gradients stay for the optimizer
        Bytes lossForward = 0, lossBackward = 0;
        for (const TimelineEvent& e : t.events) {
            if (e.phase == StepPhase::Loss && e.what.starts_with("loss:"))
                lossForward = e.total();
            if (e.phase == StepPhase::Loss && e.what.starts_with("loss backward"))
                lossBackward = e.total();
        }
        QCOMPARE(lossForward, Bytes(310 + 46 + 7));
        QCOMPARE(lossBackward, Bytes(310 + 46 + 8));
        // Every saved tensor is released by the end of backward.
        for (const TimelineEvent& e : t.events)
            if (e.what.starts_with("backward done"))
                QCOMPARE(alive(e, TimelineCategory::Activations), Bytes(0));
    }

    void stepOneCreatesOptimizerStatesAtTheEnd()
    {
        // Seed 004: "optimizer state appears after the first step ... you sometimes survive
        // step 1 but OOM on step 2". Step 1's peak is its optimizer step: 110 + 100 + 200.
        const StepTimeline one = simulateStep(handCase(), 1);
        QCOMPARE(one.peak, Bytes(410));
        QVERIFY(one.atPeak.phase == StepPhase::Optimizer);
        QCOMPARE(alive(one.events.front(), TimelineCategory::OptimizerStates), Bytes(0));
        QVERIFY(one.peak < simulateStep(handCase(), 2).peak);

        // The real thing: Llama-3-8B, micro-batch 4, on one GPU: the peak is in the loss's
        // backward (4 x 4096 x 128,256 fp32 logit gradients), where step 2 also holds Adam's states.
        Scenario sc = test::llama3_8b();
        sc.run.microBatchSize = 4;
        const Report r = estimate(sc);
        QVERIFY(r.peakEvent.phase == StepPhase::Loss);
        QCOMPARE(r.stepInputs.lossBackward, Bytes(4) * 4096 * 128256 * 8);
        const Bytes p1 = simulateStep(r.stepInputs, 1, false).peak, p2 = simulateStep(r.stepInputs, 2, false).peak;
        QCOMPARE(p2, r.peak);
        QCOMPARE(p2 - p1, r.bytesOf("optimizer_states"));
    }

    void optimizerTemporariesCanSetThePeak()
    {
        StepInputs in = handCase();
        in.optimizerTemporaries = 100; // foreach AdamW's sqrt(v): half of m + v
        const StepTimeline t = simulateStep(in, 2);
        QCOMPARE(t.peak, Bytes(310 + 100 + 100));
        QVERIFY(t.atPeak.phase == StepPhase::Optimizer);
        // From a scenario: AdamW's temporaries are half its states; SGD has none.
        Scenario sc = test::llama3_8b();
        QCOMPARE(estimate(sc).stepInputs.optimizerTemporaries, estimate(sc).bytesOf("optimizer_states") / 2);
        sc.run.optimizer = Optimizer::Sgd;
        QCOMPARE(estimate(sc).stepInputs.optimizerTemporaries, Bytes(0));
    }

    void checkpointingRebuildsOneSegmentAtATime()
    {
        StepInputs in = handCase();
        in.recompute = 20; // one layer rebuilt
        QCOMPARE(simulateStep(in, 2).peak, Bytes(424 + 20));
        // Segments of two: rebuilt at the segment's end, released layer by layer.
        in.segmentLayers = 2;
        in.recompute = 40;
        const StepTimeline t = simulateStep(in, 2);
        // Layer 2 (1-based) enters segment {1, 2}: both rebuilt, 21 saved, 75 of the gradients.
        QCOMPARE(t.peak, Bytes(310 + 21 + 3 + 40 + 75));
        QCOMPARE(t.atPeak.layer, Count(1));
        for (const TimelineEvent& e : t.events)
            if (e.layer == 3 && e.phase == StepPhase::Backward)
                QCOMPARE(alive(e, TimelineCategory::Temporaries), Bytes(3 + 40));
    }

    void checkpointingModesOnLlama()
    {
        // ZeRO-3 on 8 GPUs: sharded states, so the peak is in the forward/backward pass.
        Scenario sc = test::llama3_8b();
        sc.run.parallelism.gpus = 8;
        sc.run.parallelism.zeroStage = 3;
        sc.run.attention = AttentionImpl::Eager;
        auto peak = [&](Checkpointing c) {
            sc.run.checkpointing = c;
            return estimate(sc).peak;
        };
        const Bytes none = peak({}), selective = peak({ Checkpointing::Kind::Selective, 0 });
        const Bytes every4 = peak({ Checkpointing::Kind::Every, 4 }), full = peak({ Checkpointing::Kind::Full, 0 });
        QVERIFY(none > selective);
        QVERIFY(selective > every4);
        QVERIFY(every4 > full);
        // Full: the peak is in backward and holds exactly one rebuilt layer on top of the checkpoints.
        sc.run.checkpointing = { Checkpointing::Kind::Full, 0 };
        const Report r = estimate(sc);
        const StepInputs& in = r.stepInputs;
        QVERIFY(r.peakEvent.phase == StepPhase::Backward);
        QCOMPARE(alive(r.peakEvent, TimelineCategory::Temporaries),
            in.recompute + in.backwardWorkingSet + in.zero3Gather + in.layerGradientBucket);
        QCOMPARE(in.recompute, r.activations.recomputeBytes);
    }

    void zeroBuffersHandComputed()
    {
        // Multi-GPU: the gradient buffer is there from the start (410). ZeRO-3's gathered
        // layers (6) live only while a layer runs; ZeRO-2/3's unsharded bucket (5) only in
        // its backward. Layer 4's backward: 410 + 41 saved + 3 + 6 + 5 = 465, above the
        // loss's backward (410 + 46 + 8 = 464).
        StepInputs in = handCase();
        in.gradientsResident = true;
        in.zero3Gather = 6;
        in.layerGradientBucket = 5;
        const StepTimeline t = simulateStep(in, 2);
        QCOMPARE(t.events.front().total(), Bytes(410));
        QCOMPARE(t.peak, Bytes(465));
        QCOMPARE(t.atPeak.layer, Count(3));
        for (const TimelineEvent& e : t.events)
            if (e.phase == StepPhase::Forward && e.layer >= 0)
                QCOMPARE(alive(e, TimelineCategory::Temporaries), Bytes(6));
        QCOMPARE(alive(t.events.back(), TimelineCategory::Temporaries), Bytes(0));
    }

    void gradientAccumulationRepeatsExactly()
    {
        StepInputs in = handCase();
        in.microBatches = 2;
        // Second micro-batch: gradients (100) already there while its forward saves 46.
        QCOMPARE(simulateStep(in, 2).peak, Bytes(310 + 100 + 46 + 8));
        in.microBatches = 1000;
        const StepTimeline many = simulateStep(in, 2);
        QCOMPARE(many.peak, Bytes(310 + 100 + 46 + 8));
        QCOMPARE(many.simulatedMicroBatches, Count(2));
        QCOMPARE(simulateStep(in, 2, false).peak, many.peak);
    }

    void zeroStagesOnEightGpus()
    {
        Scenario sc = test::llama3_8b();
        sc.run.parallelism.gpus = 8;
        Bytes last = 0;
        for (int stage : { 0, 1, 2, 3 }) {
            sc.run.parallelism.zeroStage = stage;
            const Report r = estimate(sc);
            if (stage > 0)
                QVERIFY2(r.peak < last, qPrintable(QString("ZeRO-%1").arg(stage)));
            last = r.peak;
            // ZeRO keeps its gradient buffer from the start; torch DDP (stage 0) keeps its buckets in the overhead
            // instead, and param.grad is made again in each backward (overheads.cpp ddpBucketBytes).
            const StepTimeline t = simulateStep(r.stepInputs, 2);
            QCOMPARE(alive(t.events.front(), TimelineCategory::Gradients), stage == 0 ? 0 : r.bytesOf("gradients"));
            if (stage == 3) {
                // Gathered layers appear only while a layer runs.
                QVERIFY(r.stepInputs.zero3Gather > 0);
                QCOMPARE(alive(t.events.front(), TimelineCategory::Temporaries), Bytes(0));
            }
            if (stage >= 2)
                QVERIFY(r.stepInputs.layerGradientBucket > 0);
        }
    }

    void pipelineHoldsMicroBatchesInFlight()
    {
        Scenario sc = test::llama3_8b();
        sc.run.parallelism.gpus = 4;
        sc.run.parallelism.pipelineParallel = 4;
        sc.run.gradientAccumulationSteps = 8;
        const Report r = estimate(sc);
        QCOMPARE(r.stepInputs.inFlight, Count(4));
        const StepTimeline t = simulateStep(r.stepInputs, 2);
        Bytes maxActs = 0;
        for (const TimelineEvent& e : t.events)
            maxActs = std::max(maxActs, alive(e, TimelineCategory::Activations));
        // Four micro-batches' saved tensors at once on the first stage (1F1B warm-up).
        QCOMPARE(maxActs, 4 * r.activations.bytes);
        QCOMPARE(t.simulatedMicroBatches, Count(5));
    }

    void fitsUsesThePeak()
    {
        // One GPU, set_to_none: gradients and activations never coexist in full, so a run
        // whose component sum exceeds the card can still fit (SGD: no optimizer temporaries).
        Scenario sc = test::llama3_8b();
        sc.run.optimizer = Optimizer::Sgd;
        sc.run.safetyMargin = 0; // the card exactly: no headroom kept
        sc.run.gpu->memoryBytes = 0;
        Report r = estimate(sc);
        QVERIFY(r.peak < r.total);
        sc.run.gpu->memoryBytes = r.peak;
        r = estimate(sc);
        QVERIFY(r.fits);
        sc.run.gpu->memoryBytes = r.peak - 1;
        QVERIFY(!estimate(sc).fits);
    }

    void fitSolversAtTheirBoundaries()
    {
        Scenario sc = test::llama3_8b();
        sc.run.parallelism.gpus = 8;
        sc.run.parallelism.zeroStage = 3;
        sc.run.checkpointing = { Checkpointing::Kind::Full, 0 };
        for (SweepParam p : { SweepParam::MicroBatchSize, SweepParam::SequenceLength }) {
            const FitResult f = fitMax(sc, p);
            QVERIFY(f.value && f.report && f.nextReport);
            QCOMPARE(f.nextValue, *f.value + 1);
            QVERIFY(f.report->fits && f.report->peak <= f.report->usableBytes);
            QVERIFY(!f.nextReport->fits && f.nextReport->peak > f.nextReport->usableBytes);
        }
        sc.model = findPreset("llama-3-70b")->model;
        sc.run.parallelism.zeroStage = 3;
        const FitResult g = fitMinGpus(sc);
        QVERIFY(g.value && g.report && g.nextReport);
        QVERIFY(g.report->fits);
        QVERIFY(!g.nextReport->fits);
        QCOMPARE(g.nextValue, *g.value - 1);
    }

    void leanPeakEqualsRecordedPeak()
    {
        // Sweeps and the planner skip the events; their peak must be the recorded one's.
        uint64_t x = 0x9E3779B97F4A7C15ull;
        auto next = [&](Count hi) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            return static_cast<Count>((x >> 33) % static_cast<uint64_t>(hi));
        };
        for (int i = 0; i < 3000; ++i) {
            StepInputs in;
            in.training = true;
            in.weights = next(1000);
            in.master = next(1000);
            in.gradients = next(1000);
            in.optimizer = next(2000);
            in.baseOverhead = next(100);
            in.embeddingActs = next(50);
            in.layerActs = next(5000);
            in.headActs = next(300);
            in.recompute = next(3) == 0 ? 0 : next(500);
            in.backwardWorkingSet = next(200);
            in.lossForward = next(400);
            in.lossBackward = next(400);
            in.layerGradientBucket = next(100);
            in.zero3Gather = next(2) * next(100);
            in.optimizerTemporaries = next(2) * next(1000);
            in.layers = 1 + next(40);
            in.segmentLayers = 1 + next(6);
            in.firstStage = next(2) == 0;
            in.lastStage = next(2) == 0;
            in.microBatches = 1 + next(12);
            in.inFlight = 1 + next(5);
            in.gradientsResident = next(2) == 0;
            for (int step : { 1, 2 })
                QCOMPARE(simulateStep(in, step, false).peak, simulateStep(in, step, true).peak);
        }
    }

    void leanPeakEqualsRecordedPeakInDeepPipelines()
    {
        // The unrecorded simulation jumps over middle layers, warm-up forwards and trailing
        // backwards: with hundreds of layers, deep pipelines and nothing kept per
        // micro-batch, its peak is still the recorded one's.
        uint64_t x = 0x2545F4914F6CDD1Dull;
        auto next = [&](Count hi) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            return static_cast<Count>((x >> 33) % static_cast<uint64_t>(hi));
        };
        for (int i = 0; i < 600; ++i) {
            StepInputs in;
            in.training = true;
            in.weights = next(1000);
            in.master = next(1000);
            in.gradients = next(3000);
            in.optimizer = next(2000);
            in.baseOverhead = next(100);
            const bool keepsNothing = next(5) == 0;
            in.embeddingActs = keepsNothing ? 0 : next(50);
            in.layerActs = keepsNothing ? 0 : next(50'000);
            in.headActs = keepsNothing ? 0 : next(300);
            in.lossHeld = keepsNothing ? 0 : next(2) * next(300);
            in.lossGathered = keepsNothing ? 0 : next(2) * next(300);
            in.recompute = next(3) == 0 ? 0 : next(500);
            in.backwardWorkingSet = next(200);
            in.lossForward = next(400);
            in.lossBackward = next(400);
            in.layerGradientBucket = next(100);
            in.zero3Gather = next(2) * next(100);
            in.optimizerTemporaries = next(2) * next(1000);
            in.optimizerInBackward = next(4) == 0;
            in.layers = 1 + next(300);
            in.segmentLayers = 1 + next(12);
            in.firstStage = next(2) == 0;
            in.lastStage = next(2) == 0;
            in.microBatches = 1 + next(80);
            in.inFlight = 1 + next(40);
            in.gradientsResident = next(2) == 0;
            for (int step : { 1, 2 }) {
                const StepTimeline lean = simulateStep(in, step, false), recorded = simulateStep(in, step, true);
                QCOMPARE(lean.peak, recorded.peak);
                QCOMPARE(lean.atPeak.total(), recorded.peak);
            }
        }
    }

    void peakWhereNamesPhaseAndLayer()
    {
        const Report r = estimate(test::llama3_8b());
        QVERIFY(r.peakWhere.find("(step 2)") != std::string::npos);
        QVERIFY(r.peakWhere.find(std::string(toString(r.peakEvent.phase))) == 0);
    }
};

QTEST_APPLESS_MAIN(TstTimeline)
#include "tst_timeline.moc"
