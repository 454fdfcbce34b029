// SPDX-License-Identifier: MIT
#include "vramlab/step_timeline.h"

#include "vramlab/errors.h"
#include "vramlab/units.h"

#include <algorithm>

namespace vramlab {

ComponentKind timelineComponent(TimelineCategory c)
{
    static constexpr ComponentKind kinds[] = { ComponentKind::Weights, ComponentKind::MasterWeights,
        ComponentKind::Gradients, ComponentKind::OptimizerStates, ComponentKind::Activations,
        ComponentKind::Temporaries, ComponentKind::Overhead };
    static_assert(std::size(kinds) == kTimelineCategories);
    return kinds[static_cast<int>(c)];
}

std::string_view timelineCategoryKey(TimelineCategory c)
{
    return componentKey(timelineComponent(c));
}
std::string_view timelineCategoryLabel(TimelineCategory c)
{
    return componentLabel(timelineComponent(c));
}

std::string_view toString(StepPhase p)
{
    static constexpr std::string_view names[] = { "start", "forward", "loss", "backward", "optimizer" };
    return names[static_cast<int>(p)];
}

Bytes TimelineEvent::total() const
{
    Bytes sum = 0;
    for (Bytes b : bytes)
        sum = checkedAdd(sum, b);
    return sum;
}

std::string StepTimeline::peakWhere(const StepInputs& in) const
{
    const TimelineEvent& e = atPeak;
    std::string s(toString(e.phase));
    if (e.layer >= 0)
        s += ", layer " + std::to_string(e.layer + 1) + " of " + std::to_string(in.layers);
    if (e.microBatch >= 0)
        s += ", micro-batch " + std::to_string(e.microBatch + 1) + " of " + std::to_string(in.microBatches);
    s += " (step " + std::to_string(step) + "): ";
    s += e.what;
    return s;
}

namespace {

using Cat = TimelineCategory;

/// Walks the step, keeping what is alive per category and the highest point.
class Simulation {
public:
    Simulation(const StepInputs& in, StepTimeline& out, bool record)
        : m_in(in)
        , m_out(out)
        , m_record(record)
    {
    }

    void run()
    {
        const StepInputs& in = m_in;
        at(Cat::Weights) = in.weights;
        at(Cat::MasterWeights) = in.master;
        at(Cat::Overhead) = in.baseOverhead;
        // zero_grad(set_to_none=True) freed last step's gradients unless a buffer holds them.
        if (in.gradientsResident)
            at(Cat::Gradients) = in.gradients;
        if (m_out.step >= 2)
            at(Cat::OptimizerStates) = in.optimizer;
        emit(StepPhase::Start, -1, -1, "step begins: weights, master copy and what persists between steps");

        // 1F1B on the stage: inFlight - 1 warm-up forwards, then one forward and one
        // backward in turn. After the first backward every micro-batch repeats the same
        // pattern, so one beyond the pipeline's depth gives the exact peak.
        const Count total = std::max<Count>(1, in.microBatches);
        const Count depth = std::clamp<Count>(in.inFlight, 1, total);
        const Count simulated = std::min(total, depth + 1);
        m_out.simulatedMicroBatches = simulated;
        // What earlier micro-batches than the simulated ones keep until the next step (PyTorch pipelining's
        // output_chunks and input gradients): the simulated micro-batches are taken as the step's last, which hold
        // the most.
        if (total > simulated)
            at(Cat::Temporaries) += checkedMul(total - simulated, in.stageOutputKept + in.stageInputGradKept);
        // Unrecorded, with R > 0 bytes kept per micro-batch from its forward to its backward:
        // each warm-up forward is R below the next one, event for event, and each backward
        // that follows a later micro-batch's backward R below it, so neither holds the first
        // highest point; their bytes are added or taken in one step (deep pipelines).
        const Bytes keptActs = (in.firstStage ? in.embeddingActs : 0) + (in.layers > 0 ? in.layerActs : 0)
            + (in.lastStage ? in.headActs : 0);
        const Bytes keptTemps = in.lastStage ? in.lossHeld + in.lossGathered : 0;
        const Bytes keptOutputs = in.stageOutputKept; // not freed by backward
        const bool skip = !m_record && keptActs + keptTemps + keptOutputs > 0;
        Count warm = 0;
        if (skip && depth > 1) {
            warm = depth - 1;
            at(Cat::Activations) += warm * keptActs;
            at(Cat::Temporaries) += warm * (keptTemps + keptOutputs);
        }
        for (Count i = warm; i + 1 < depth; ++i)
            forward(i);
        for (Count i = 0; i < simulated; ++i) {
            const bool forwardFirst = i + depth - 1 < simulated;
            if (forwardFirst)
                forward(i + depth - 1);
            if (skip && !forwardFirst && i >= 2) {
                const Count rest = simulated - i;
                at(Cat::Activations) -= rest * keptActs;
                at(Cat::Temporaries) -= rest * keptTemps;
                at(Cat::Temporaries) += rest * in.stageInputGradKept; // their inputs' gradients stay
                break;
            }
            backward(i);
        }

        if (m_out.step == 1) {
            at(Cat::OptimizerStates) = in.optimizer;
            emit(StepPhase::Optimizer, -1, -1, "optimizer: creates its states on the first step");
        }
        if (in.optimizerTemporaries > 0 && !in.optimizerInBackward) {
            at(Cat::Temporaries) += in.optimizerTemporaries;
            emit(StepPhase::Optimizer, -1, -1, "optimizer: update with its temporaries");
            at(Cat::Temporaries) -= in.optimizerTemporaries;
        }
        emit(StepPhase::Optimizer, -1, -1, "step ends: weights updated");
    }

private:
    Bytes& at(Cat c) { return m_now[static_cast<size_t>(c)]; }

    void emit(StepPhase phase, Count microBatch, Count layer, std::string_view what)
    {
        Bytes total = 0; // as TimelineEvent::total(), without making the event unless it is kept
        for (Bytes b : m_now)
            total = checkedAdd(total, b);
        if (total > m_out.peak || !m_any) {
            m_out.peak = total;
            m_out.atPeak = { phase, microBatch, layer, what, m_now };
            m_any = true;
        }
        if (m_record)
            m_out.events.push_back({ phase, microBatch, layer, what, m_now });
    }

    /// One layer's share of `all`, the remainder going to layer 0 so the shares add up.
    /// Layer `layer`'s saved tensors: an even share, or with checkpointing {"layers": n} the checkpoint of one of the
    /// first n layers or a share of the others' whole sets.
    Bytes layerShare(Count layer) const
    {
        const Count n = m_in.checkpointedLayers;
        if (n <= 0)
            return share(m_in.layerActs, layer);
        if (layer < n)
            return m_in.checkpointInputBytes;
        const Count rest = std::max<Count>(1, m_in.layers - n);
        const Bytes full = m_in.layerActs - m_in.checkpointInputBytes * n;
        return full / rest + (layer == n ? full % rest : 0);
    }

    Bytes share(Bytes all, Count layer) const
    {
        const Count n = std::max<Count>(1, m_in.layers);
        return all / n + (layer == 0 ? all % n : 0);
    }

    void forward(Count mb)
    {
        const StepInputs& in = m_in;
        if (in.firstStage && in.embeddingActs > 0) {
            at(Cat::Activations) += in.embeddingActs;
            emit(StepPhase::Forward, mb, -1, "forward: embedding");
        }
        const Bytes layerActs = in.layerActs;
        const std::string_view what = in.ringForward > 0
            ? "forward: layer saves its tensors while ring attention holds the gathered K and V"
            : in.doraForward > 0 ? "forward: layer saves its tensors while DoRA rebuilds an adapted weight for its norm"
            : in.zero3Gather > 0 ? "forward: layer gathered (ZeRO-3), saves its tensors"
                                 : "forward: layer saves its tensors";
        // DoRA's widest linear is the layer's last or nearly when the MLP is adapted (down: an in x in x_eye), so
        // its transients meet nearly all of the layer's saved tensors; with attention alone adapted this counts
        // what the layer saves after that projection too (an upper bound by that much).
        const Bytes transient = in.zero3Gather + in.ringForward + in.doraForward;
        if (!m_record && in.layers > 0) { // forward only grows: its last layer is its highest point
            at(Cat::Temporaries) += transient;
            at(Cat::Activations) += layerActs;
            emit(StepPhase::Forward, mb, in.layers - 1, what);
            at(Cat::Temporaries) -= transient;
        }
        for (Count l = 0; m_record && l < in.layers; ++l) {
            at(Cat::Temporaries) += transient;
            at(Cat::Activations) += layerShare(l);
            emit(StepPhase::Forward, mb, l, what);
            at(Cat::Temporaries) -= transient;
        }
        at(Cat::Temporaries) += in.stageOutputKept; // PyTorch pipelining's output_chunks, until the next step
        if (in.lastStage) {
            at(Cat::Activations) += in.headActs;
            at(Cat::Temporaries) += in.lossHeld + in.lossGathered + in.lossForward;
            emit(StepPhase::Loss, mb, -1, in.lossForwardWhat);
            at(Cat::Temporaries) -= in.lossForward;
        }
    }

    void backward(Count mb)
    {
        const StepInputs& in = m_in;
        at(Cat::Temporaries) += in.backwardBucket;
        if (in.lastStage) {
            at(Cat::Temporaries) += in.lossBackward;
            emit(StepPhase::Loss, mb, -1, in.lossBackwardWhat);
            at(Cat::Temporaries) -= in.lossBackward + in.lossGathered;
            at(Cat::Activations) -= in.headActs;
        }
        const bool gradsAppear = !in.gradientsResident && !m_gradientsMade && !in.optimizerInBackward;
        const Bytes layerActs = in.layerActs;
        const Count segment = std::max<Count>(1, in.segmentLayers);
        Bytes rebuilt = 0;
        // Unrecorded, the layers between the edge segments (which emit nothing) are one
        // step: each frees its share of the saved tensors, adds its share of the gradients,
        // and leaves the temporaries as they were once its segment is done, so the peak is
        // the same in O(1) per micro-batch instead of O(layers).
        const Count middleTop = in.layers - 2 * segment - 1, middleBottom = 2 * segment;
        for (Count l = in.layers - 1; l >= 0; --l) {
            if (!m_record && l == middleTop && middleTop >= middleBottom && in.checkpointedLayers == 0) {
                const Count skipped = middleTop - middleBottom + 1; // none of them is layer 0
                if (gradsAppear)
                    at(Cat::Gradients) += skipped * share(in.gradients, 1);
                at(Cat::Activations) -= skipped * share(layerActs, 1);
                at(Cat::Temporaries) -= rebuilt; // middleBottom starts a segment: all rebuilt layers freed
                rebuilt = 0;
                l = middleBottom;
                continue;
            }
            // Entering a checkpointed segment from its end: its forward runs again first.
            const Count segmentStart = l - l % segment;
            const bool rebuilds
                = in.checkpointedLayers > 0 ? l < in.checkpointedLayers : l == in.layers - 1 || (l + 1) % segment == 0;
            if (in.recompute > 0 && rebuilds) {
                rebuilt = in.recompute;
                at(Cat::Temporaries) += rebuilt;
            }
            // Optimizer in backward (torchtune register_optim_in_bwd_hooks@1814feb): the layer's
            // gradients exist only until its parameters are stepped, with that step's temporaries.
            const Bytes stepped
                = in.optimizerInBackward ? share(in.gradients, l) + share(in.optimizerTemporaries, l) : 0;
            // Ring attention's backward buffers (context parallelism) beside the layer's working set; its
            // forward buffers during the recompute are fewer (ringForward < ringBackward) and come earlier.
            // A rebuilt layer's recompute runs DoRA's weight norm again beside the rebuilt tensors, before its
            // backward's working set exists: the larger of the two.
            const Bytes backwardWorking = in.backwardWorkingSet + in.layerGradientBucket + stepped + in.ringBackward;
            const Bytes working
                = in.zero3Gather + std::max(backwardWorking, in.recompute > 0 && rebuilds ? in.doraForward : Bytes(0));
            at(Cat::Temporaries) += working;
            if (gradsAppear)
                at(Cat::Gradients) += share(in.gradients, l);
            // Saved tensors fall and gradients rise by the same share per layer, and the
            // rebuilt segment repeats: the highest point is in the first or last two segments.
            const bool edge = l >= in.layers - 2 * segment || l < 2 * segment || in.checkpointedLayers > 0;
            if (m_record || edge)
                emit(StepPhase::Backward, mb, l,
                    in.ringBackward > 0    ? "backward: ring attention's backward buffers beside the layer's gradients"
                        : in.recompute > 0 ? "backward: layer rebuilt by recomputation, gradients flow"
                                           : "backward: layer's gradients flow, its saved tensors are released");
            at(Cat::Temporaries) -= working;
            at(Cat::Activations) -= layerShare(l);
            if (rebuilt > 0) { // the rebuilt layers free one by one as backward leaves them
                const Count left = l - segmentStart + 1;
                const Bytes freed = l == segmentStart ? rebuilt : rebuilt / left;
                rebuilt -= freed;
                at(Cat::Temporaries) -= freed;
            }
        }
        if (in.firstStage && in.embeddingActs > 0)
            at(Cat::Activations) -= in.embeddingActs;
        if (in.lastStage)
            at(Cat::Temporaries) -= in.lossHeld;
        at(Cat::Temporaries) -= in.backwardBucket;
        at(Cat::Temporaries) += in.stageInputGradKept; // the received input's gradient, until the next step
        emit(StepPhase::Backward, mb, -1, "backward done for this micro-batch");
        m_gradientsMade = true;
    }

    const StepInputs& m_in;
    StepTimeline& m_out;
    bool m_record;
    bool m_any = false;
    bool m_gradientsMade = false;
    std::array<Bytes, kTimelineCategories> m_now {};
};

} // namespace

Count timelineEventCount(const StepInputs& in)
{
    return 8 + (2 * std::max<Count>(1, in.layers) + 6) * std::min<Count>(in.microBatches, in.inFlight + 2);
}

StepTimeline simulateStep(const StepInputs& in, int step, bool record)
{
    StepTimeline out;
    out.step = step;
    if (record) {
        const Count events = timelineEventCount(in);
        if (events > kMaxTimelineEvents)
            throw InputError("model.num_layers",
                "the timeline records at most " + formatCount(kMaxTimelineEvents) + " events; this step has "
                    + formatCount(events) + " (" + formatCount(in.layers)
                    + " layers per stage): fewer layers or more pipeline stages");
        out.events.reserve(static_cast<size_t>(events));
    }
    Simulation(in, out, record).run();
    return out;
}

} // namespace vramlab
