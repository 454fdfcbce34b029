// SPDX-License-Identifier: MIT
#include "vramlab/allocation_trace.h"

#include <algorithm>
#include <cmath>

namespace vramlab {

namespace {

using Handle = CachingAllocator::Handle;

/// Identical tensors replayed one by one at most; more (MoE experts per layer, loss chunks,
/// a hostile file's thousands of experts) are replayed as this many tensors of the same
/// total, which bounds the replay's work.
constexpr Count kMaxIdenticalTensors = 64;

/// Calls f(bytes) for `n` tensors of `b` bytes, grouped beyond kMaxIdenticalTensors.
template <class F> void forCopies(Count n, Bytes b, F f)
{
    if (b <= 0 || n <= 0)
        return;
    const Count groups = std::min(n, kMaxIdenticalTensors);
    const Count per = n / groups, extra = n % groups;
    for (Count i = 0; i < groups; ++i)
        f(checkedMul(b, per + (i < extra ? 1 : 0)));
}

/// Walks steps 1 and 2 as simulateStep() does (same 1F1B order, same micro-batches), but
/// allocates and frees each tensor through the allocator model.
class Replay {
public:
    Replay(const ReplayInputs& in, CachingAllocator& alloc, Count layers)
        : m_in(in)
        , m_alloc(alloc)
        , m_layers(layers)
    {
        // Each state's bytes spread over the parameter tensors by their elements: exact
        // without sharding, a per-parameter shard (FSDP2's layout) with it.
        double all = 0, trainable = 0;
        for (const ParamShape& p : in.params) {
            all += double(p.elements) * double(p.copies);
            if (p.trainable)
                trainable += double(p.elements) * double(p.copies);
        }
        auto per = [](Bytes total, double elements) { return elements > 0 ? double(total) / elements : 0.0; };
        const double weights = per(in.weights, all), master = per(in.master, trainable),
                     grads = per(in.gradients, trainable),
                     state = in.optimizerStateTensors > 0 ? per(in.optimizer, trainable) / in.optimizerStateTensors : 0,
                     temp = per(in.optimizerTemporaries, trainable);
        m_sizes.reserve(in.params.size());
        for (const ParamShape& p : in.params) {
            auto b = [&p](double perElement, bool applies) {
                return applies ? static_cast<Bytes>(std::llround(double(p.elements) * perElement)) : Bytes(0);
            };
            m_sizes.push_back({ p.weightsEach >= 0 ? p.weightsEach : b(weights, true), b(master, p.trainable),
                b(grads, p.trainable), b(state, p.trainable), b(temp, p.trainable) });
        }
        m_grads.resize(static_cast<size_t>(std::max<Count>(1, layers) + 1));
        m_rebuilt.resize(static_cast<size_t>(std::max<Count>(1, layers)));
    }

    void run()
    {
        const ReplayInputs& in = m_in;
        for (Bytes b : in.residentExtras)
            take(b);
        // Parameters in construction order (outside the layers first, then layer by layer),
        // then the master copy; gradients at setup only where a buffer holds them.
        forEachParam([&](const Sizes& b, Count n) { repeat(n, b.weights); });
        forEachParam([&](const Sizes& b, Count n) { repeat(n, b.master); });
        if (in.gradientsResident)
            for (Count l = -1; l < m_layers; ++l)
                makeGradients(l);
        for (int step = 1; step <= 2; ++step) {
            m_gradientsMade = in.gradientsResident;
            microBatches();
            if (step == 1 && !m_statesMade) { // the optimizer's lazy state init (first step)
                forEachParam([&](const Sizes& b, Count n) {
                    for (int s = 0; s < in.optimizerStateTensors; ++s)
                        repeat(n, b.state);
                });
                m_statesMade = true;
            }
            if (in.optimizerTemporaries > 0 && !in.optimizerInBackward) {
                // foreach: one list the size of a state (torch._foreach_sqrt), then freed
                forEachParam([&](const Sizes& b, Count n) {
                    forCopies(n, b.temp, [&](Bytes x) { m_working.push_back(m_alloc.allocate(x)); });
                });
                for (Handle h : m_working)
                    m_alloc.release(h);
                m_working.clear();
            }
            if (!in.gradientsResident) // zero_grad(set_to_none=True)
                for (auto& layer : m_grads) {
                    for (Handle h : layer)
                        m_alloc.release(h);
                    layer.clear();
                }
        }
    }

private:
    /// One tensor's bytes per state: the state's total spread by elements.
    struct Sizes {
        Bytes weights, master, grads, state, temp;
    };
    void take(Bytes b)
    {
        if (b > 0)
            (void)m_alloc.allocate(b);
    }
    void repeat(Count n, Bytes b)
    {
        forCopies(n, b, [&](Bytes x) { (void)m_alloc.allocate(x); });
    }
    /// Copies of a layer tensor in layer l: spread evenly, the remainder in the first layers.
    Count copiesInLayer(const ParamShape& p, Count l) const
    {
        const Count n = std::max<Count>(1, m_in.layers);
        return p.copies / n + (l < p.copies % n ? 1 : 0);
    }
    template <class F> void forEachParam(F f) const
    {
        for (size_t i = 0; i < m_in.params.size(); ++i)
            if (!m_in.params[i].layer)
                f(m_sizes[i], m_in.params[i].copies);
        for (Count l = 0; l < m_layers; ++l)
            for (size_t i = 0; i < m_in.params.size(); ++i)
                if (m_in.params[i].layer)
                    f(m_sizes[i], copiesInLayer(m_in.params[i], l));
    }
    /// Layer l's gradients (l = -1: the tensors outside the layers).
    void makeGradients(Count l)
    {
        std::vector<Handle>& out = m_grads[static_cast<size_t>(l + 1)];
        for (size_t k = 0; k < m_in.params.size(); ++k) {
            const ParamShape& p = m_in.params[k];
            if (p.layer != (l >= 0))
                continue;
            const Bytes b = m_sizes[k].grads;
            forCopies(l >= 0 ? copiesInLayer(p, l) : p.copies, b, [&](Bytes x) { out.push_back(m_alloc.allocate(x)); });
        }
    }
    static bool inLayer(const SavedTensorSize& s, Count l)
    {
        if (l < s.firstLayer)
            return false;
        const Count off = l - s.firstLayer, stride = std::max<Count>(1, s.strideLayers);
        return off % stride == 0 && off / stride < s.count;
    }
    void allocSaved(ActivationScope scope, Count l, std::vector<Handle>& out)
    {
        for (const SavedTensorSize& s : m_in.savedSizes) {
            if (s.scope != scope || (scope == ActivationScope::Layer && !inLayer(s, l)))
                continue;
            forCopies(scope == ActivationScope::Layer ? 1 : s.count, s.bytesEach,
                [&](Bytes x) { out.push_back(m_alloc.allocate(x)); });
        }
    }
    void releaseAll(std::vector<Handle>& v)
    {
        for (auto it = v.rbegin(); it != v.rend(); ++it)
            m_alloc.release(*it);
        v.clear();
    }

    void microBatches()
    {
        const ReplayInputs& in = m_in;
        const Count total = std::max<Count>(1, in.microBatches);
        const Count depth = std::clamp<Count>(in.inFlight, 1, total);
        const Count simulated = std::min(total, depth + 1);
        m_inFlight.assign(static_cast<size_t>(depth), {});
        // The stage's outputs and input gradients of the micro-batches before the simulated ones (as simulateStep),
        // kept with the simulated ones' until the next step begins (PyTorch pipelining's output_chunks).
        releaseAll(m_outputs);
        for (Bytes b : { in.stageOutputKept, in.stageInputGradKept }) // grouped: the accumulation can be long
            forCopies(total - simulated, b, [&](Bytes x) { m_outputs.push_back(m_alloc.allocate(x)); });
        for (Count i = 0; i + 1 < depth; ++i)
            forward(i);
        for (Count i = 0; i < simulated; ++i) {
            if (i + depth - 1 < simulated)
                forward(i + depth - 1);
            backward(i);
        }
    }

    /// One micro-batch's saved tensors, per layer, kept until its backward.
    struct MicroBatch {
        std::vector<Handle> embedding, head, held;
        std::vector<std::vector<Handle>> layers;
    };

    void forward(Count mb)
    {
        const ReplayInputs& in = m_in;
        MicroBatch& m = m_inFlight[static_cast<size_t>(mb % Count(m_inFlight.size()))];
        m.layers.resize(static_cast<size_t>(std::max<Count>(1, m_layers)));
        if (in.firstStage)
            allocSaved(ActivationScope::Embedding, -1, m.embedding);
        for (Count l = 0; l < m_layers; ++l) {
            Handle g0 = -1, g1 = -1; // ZeRO-3: this layer and the prefetched next one gathered
            if (in.zero3Gather > 0) {
                g0 = m_alloc.allocate(in.zero3Gather / 2);
                g1 = m_alloc.allocate(in.zero3Gather - in.zero3Gather / 2);
            }
            allocSaved(ActivationScope::Layer, l, m.layers[static_cast<size_t>(l)]);
            ringTransients(in.ringForwardSizes);
            ringTransients(in.doraForwardSizes);
            if (g0 >= 0) {
                m_alloc.release(g1);
                m_alloc.release(g0);
            }
        }
        if (in.stageOutputKept > 0) // PyTorch pipelining's output_chunks, until the next step
            m_outputs.push_back(m_alloc.allocate(in.stageOutputKept));
        if (in.lastStage) {
            allocSaved(ActivationScope::Head, -1, m.head);
            for (Bytes b : { in.lossHeld, in.lossGathered })
                if (b > 0)
                    m.held.push_back(m_alloc.allocate(b));
            Handle parts[2] = { -1, -1 };
            for (int i = 0; i < 2; ++i)
                if (in.lossForwardParts[static_cast<size_t>(i)] > 0)
                    parts[i] = m_alloc.allocate(in.lossForwardParts[static_cast<size_t>(i)]);
            for (Handle h : parts) // the logits go first (`del logits`), then the upcast copy
                if (h >= 0)
                    m_alloc.release(h);
        }
    }

    void backward(Count mb)
    {
        const ReplayInputs& in = m_in;
        MicroBatch& m = m_inFlight[static_cast<size_t>(mb % Count(m_inFlight.size()))];
        const Handle bucket = in.backwardBucket > 0 ? m_alloc.allocate(in.backwardBucket) : -1;
        if (in.lastStage) {
            Handle g[2] = { -1, -1 }; // grad of the log-softmax input, then of the logits
            if (in.lossBackward > 0) {
                g[0] = m_alloc.allocate(in.lossBackward / 2);
                g[1] = m_alloc.allocate(in.lossBackward - in.lossBackward / 2);
            }
            for (Handle h : g)
                if (h >= 0)
                    m_alloc.release(h);
            if (in.lossGathered > 0 && m.held.size() > (in.lossHeld > 0 ? 1u : 0u)) {
                m_alloc.release(m.held.back());
                m.held.pop_back();
            }
            releaseAll(m.head);
        }
        const bool gradsAppear = !m_gradientsMade && !in.optimizerInBackward;
        if (gradsAppear)
            makeGradients(-1);
        const Count segment = std::max<Count>(1, in.segmentLayers);
        for (Count l = m_layers - 1; l >= 0; --l) {
            const Count segmentStart = l - l % segment;
            const bool rebuilds
                = in.checkpointedLayers > 0 ? l < in.checkpointedLayers : l == m_layers - 1 || (l + 1) % segment == 0;
            if (in.recompute > 0 && rebuilds)
                for (Count k = segmentStart; k <= l; ++k)
                    rebuild(k);
            std::vector<Handle>& working = m_working;
            for (int i = 0; i < 2 && in.largestLayerTensor > 0; ++i)
                working.push_back(m_alloc.allocate(in.largestLayerTensor));
            if (in.zero3Gather > 0) {
                working.push_back(m_alloc.allocate(in.zero3Gather / 2));
                working.push_back(m_alloc.allocate(in.zero3Gather - in.zero3Gather / 2));
            }
            if (in.layerGradientBucket > 0)
                working.push_back(m_alloc.allocate(in.layerGradientBucket));
            for (Bytes b : in.ringBackwardSizes)
                working.push_back(m_alloc.allocate(b));
            if (gradsAppear)
                makeGradients(l);
            if (in.optimizerInBackward) { // the layer's gradients live only until its step
                makeGradients(l);
                for (size_t k = 0; k < in.params.size(); ++k) {
                    const Bytes b = in.params[k].layer ? m_sizes[k].temp : 0;
                    forCopies(
                        copiesInLayer(in.params[k], l), b, [&](Bytes x) { working.push_back(m_alloc.allocate(x)); });
                }
                releaseAll(m_grads[static_cast<size_t>(l + 1)]);
            }
            releaseAll(working);
            releaseAll(m.layers[static_cast<size_t>(l)]);
            releaseAll(m_rebuilt[static_cast<size_t>(l)]);
        }
        releaseAll(m.embedding);
        releaseAll(m.held);
        if (bucket >= 0)
            m_alloc.release(bucket);
        if (in.stageInputGradKept > 0) // the received input's gradient, until the next step
            m_outputs.push_back(m_alloc.allocate(in.stageInputGradKept));
        m_gradientsMade = true;
    }

    void rebuild(Count l)
    {
        std::vector<Handle>& out = m_rebuilt[static_cast<size_t>(l)];
        if (m_in.recomputeSizes.empty()) {
            const Count n = std::max<Count>(1, m_in.segmentLayers);
            out.push_back(m_alloc.allocate(std::max<Bytes>(1, m_in.recompute / n)));
        } else {
            for (const SavedTensorSize& s : m_in.recomputeSizes)
                forCopies(s.count, s.bytesEach, [&](Bytes x) { out.push_back(m_alloc.allocate(x)); });
        }
        ringTransients(m_in.ringForwardSizes); // the recomputed forward runs the ring again
        ringTransients(m_in.doraForwardSizes); // and DoRA's weight norm
    }

    /// One pass's transient buffers (ring attention's, DoRA's weight norm): all alive at its widest point, then freed.
    void ringTransients(const std::vector<Bytes>& sizes)
    {
        std::vector<Handle> ring;
        ring.reserve(sizes.size());
        for (Bytes b : sizes)
            ring.push_back(m_alloc.allocate(b));
        releaseAll(ring);
    }

    const ReplayInputs& m_in;
    CachingAllocator& m_alloc;
    Count m_layers;
    std::vector<Sizes> m_sizes; ///< per entry of m_in.params
    std::vector<Handle> m_working; ///< the current layer's backward buffers (reused)
    std::vector<Handle> m_outputs; ///< kept outputs and input gradients (PyTorch pipelining), until the next step
    bool m_gradientsMade = false, m_statesMade = false;
    std::vector<std::vector<Handle>> m_grads; ///< [0]: outside the layers, [l + 1]: layer l
    std::vector<std::vector<Handle>> m_rebuilt;
    std::vector<MicroBatch> m_inFlight;
};

} // namespace

AllocatorPeaks replayLayers(const ReplayInputs& in, const CachingAllocatorConfig& config, Count layers)
{
    CachingAllocator alloc(config);
    Replay(in, alloc, layers).run();
    AllocatorPeaks p;
    p.peakAllocatedBytes = alloc.peakAllocatedBytes();
    p.peakReservedBytes = alloc.peakReservedBytes();
    p.outOfMemory = alloc.outOfMemory();
    p.simulatedLayers = layers;
    p.operations = alloc.operations();
    p.cachedBlocks = alloc.cachedBlocks();
    return p;
}

AllocatorPeaks replayTrainingStepFully(const ReplayInputs& in, const CachingAllocatorConfig& config)
{
    return replayLayers(in, config, in.layers);
}

AllocatorPeaks replayTrainingStep(const ReplayInputs& in, const CachingAllocatorConfig& config)
{
    // Every layer is replayed up to kFullReplayLayers (layers x micro-batches replayed): the
    // cached blocks of a few large tensors (the loss's logits) absorb later allocations only
    // up to a point that depends on the layer count, so the reserved peak is not linear in
    // the layers until far into the stack (Llama-3.1-8B under torchtitan: +8.9 GiB at the
    // 14th layer). Deeper stacks replay a and a + period layers, `a` past that point, and add
    // the steady per-layer increment for the rest (flagged as extrapolated).
    const Count simulatedMicroBatches
        = std::min(std::max<Count>(1, in.microBatches), std::clamp<Count>(in.inFlight, 1, in.microBatches) + 1);
    const Count period = std::max<Count>(1, in.segmentLayers);
    if (checkedMul(in.layers, simulatedMicroBatches) <= kFullReplayLayers)
        return replayTrainingStepFully(in, config);
    Count boundary = 0;
    bool endsEarly = false; // a tensor missing from the last layers: no steady state up to the end
    for (const SavedTensorSize& s : in.savedSizes)
        if (s.scope == ActivationScope::Layer) {
            boundary = std::max(boundary, s.firstLayer);
            endsEarly = endsEarly || s.firstLayer + s.count * std::max<Count>(1, s.strideLayers) < in.layers;
        }
    Count a
        = endsEarly ? in.layers : boundary + std::max<Count>(2 * period, kFullReplayLayers / simulatedMicroBatches / 2);
    while (a < in.layers && (in.layers - a) % period != 0)
        ++a;
    if (a + period >= in.layers)
        return replayTrainingStepFully(in, config);

    CachingAllocatorConfig unlimited = config;
    unlimited.capacityBytes = 0;
    const AllocatorPeaks p1 = replayLayers(in, unlimited, a);
    const AllocatorPeaks p2 = replayLayers(in, unlimited, a + period);
    const Count rest = (in.layers - a - period) / period;
    AllocatorPeaks out = p2;
    auto extend = [rest](Bytes x1, Bytes x2) { return x2 + rest * std::max<Bytes>(0, x2 - x1); };
    out.peakAllocatedBytes = extend(p1.peakAllocatedBytes, p2.peakAllocatedBytes);
    out.peakReservedBytes = extend(p1.peakReservedBytes, p2.peakReservedBytes);
    out.extrapolated = true;
    // Near the GPU's capacity the release-and-retry path decides: replay every layer, unless
    // that is beyond reason (a hostile file's 100,000 layers); then the live blocks decide and
    // the released cache is assumed to make room.
    if (config.capacityBytes > 0 && out.peakReservedBytes > config.capacityBytes) {
        if (checkedMul(in.layers, simulatedMicroBatches) <= 16 * kFullReplayLayers)
            return replayTrainingStepFully(in, config);
        out.outOfMemory = out.peakAllocatedBytes > config.capacityBytes;
        if (!out.outOfMemory)
            out.peakReservedBytes = config.capacityBytes;
    }
    return out;
}

} // namespace vramlab
