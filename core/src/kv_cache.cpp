// SPDX-License-Identifier: MIT
#include "vramlab/kv_cache.h"

#include <algorithm>

namespace vramlab {

KvCacheBytes kvCache(const ModelSpec& m, const RunSpec& r, bool explain)
{
    KvCacheBytes out;
    const Inference& inf = r.inference;
    const Count tp = r.parallelism.tensorParallel, pp = r.parallelism.pipelineParallel;
    const Count ctx = inf.contextLength;
    const bool mla = m.attentionType == AttentionType::Mla;
    // Values cached per token per layer.
    const Count width = mla ? m.mla.kvLoraRank + m.mla.qkRopeHeadDim
                            : 2 * std::max<Count>(1, m.numKvHeads / tp) * m.headDim;
    const Count globalLayers = ceilDiv(m.globalLayers(), pp);
    const Count localLayers = ceilDiv(m.localLayers(), pp);
    const Count window = m.slidingWindow > 0 ? std::min(ctx, m.slidingWindow) : ctx;
    const Count valuesPerSeq = checkedAdd(checkedMul(globalLayers, ctx, width), checkedMul(localLayers, window, width));
    const Count values = checkedMul(valuesPerSeq, inf.batchSize);
    out.bytes = storageBytes(inf.kvCacheDtype, values);
    out.bytesPerToken = storageBytes(inf.kvCacheDtype, checkedMul(globalLayers + localLayers, width));
    if (!explain)
        return out;

    const std::string dt = std::string(toString(inf.kvCacheDtype));
    std::string perTok = mla ? "(" + std::to_string(m.mla.kvLoraRank) + " latent + " +
                                   std::to_string(m.mla.qkRopeHeadDim) + " rope) values"
                             : "2 x " + std::to_string(std::max<Count>(1, m.numKvHeads / tp)) + " kv heads x " +
                                   std::to_string(m.headDim) + " head_dim";
    out.formula = perTok + " x " + dt + " x batch " + std::to_string(inf.batchSize) + " x (";
    if (globalLayers > 0)
        out.formula += std::to_string(globalLayers) + " layers x " + std::to_string(ctx) + " tokens";
    if (localLayers > 0)
        out.formula += std::string(globalLayers > 0 ? " + " : "") + std::to_string(localLayers) + " sliding layers x " +
                       std::to_string(window) + " tokens";
    out.formula += ") = " + formatCount(out.bytes) + " B";
    return out;
}

} // namespace vramlab
