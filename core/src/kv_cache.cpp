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
    const Count width
        = mla ? m.mla.kvLoraRank + m.mla.qkRopeHeadDim : 2 * std::max<Count>(1, m.numKvHeads / tp) * m.headDim;
    const Count globalLayers = ceilDiv(m.globalLayers(), pp);
    const Count localLayers = ceilDiv(m.localLayers(), pp);
    const Count window = m.slidingWindow > 0 ? std::min(ctx, m.slidingWindow) : ctx;
    const Count valuesPerSeq = checkedAdd(checkedMul(globalLayers, ctx, width), checkedMul(localLayers, window, width));
    const Count values = checkedMul(valuesPerSeq, inf.batchSize);
    out.bytes = storageBytes(inf.kvCacheDtype, values);
    out.bytesPerToken = storageBytes(inf.kvCacheDtype, checkedMul(globalLayers + localLayers, width));
    if (!explain)
        return out;

    // Built with append: GCC 12 warns falsely (-Wrestrict) on chains of operator+ here.
    std::string& f = out.formula;
    if (mla)
        f.append("(")
            .append(std::to_string(m.mla.kvLoraRank))
            .append(" latent + ")
            .append(std::to_string(m.mla.qkRopeHeadDim))
            .append(" rope) values");
    else
        f.append("2 x ")
            .append(std::to_string(std::max<Count>(1, m.numKvHeads / tp)))
            .append(" kv heads x ")
            .append(std::to_string(m.headDim))
            .append(" head_dim");
    f.append(" x ")
        .append(toString(inf.kvCacheDtype))
        .append(" x batch ")
        .append(std::to_string(inf.batchSize))
        .append(" x (");
    if (globalLayers > 0)
        f.append(std::to_string(globalLayers)).append(" layers x ").append(std::to_string(ctx)).append(" tokens");
    if (localLayers > 0)
        f.append(globalLayers > 0 ? " + " : "")
            .append(std::to_string(localLayers))
            .append(" sliding layers x ")
            .append(std::to_string(window))
            .append(" tokens");
    f.append(") = ").append(formatCount(out.bytes)).append(" B");
    return out;
}

} // namespace vramlab
