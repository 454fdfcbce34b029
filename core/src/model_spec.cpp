// SPDX-License-Identifier: MIT
#include "vramlab/model_spec.h"

#include <algorithm>

namespace vramlab {

Count ModelSpec::globalLayers() const
{
    if (slidingWindow <= 0)
        return attentionLayers();
    if (globalLayerInterval <= 0)
        return 0;
    return numLayers / globalLayerInterval; // Gemma 3: layers 6, 12, ... are global
}

Count ModelSpec::moeLayersIn(Count lo, Count hi) const
{
    if (!moe.enabled())
        return 0;
    lo = std::max(lo, moe.firstDenseLayers);
    hi = std::min(hi, mlpLayers());
    if (hi <= lo)
        return 0;
    // Layers i in [lo, hi) with (i + 1) a multiple of the interval: the multiples in (lo, hi].
    const Count step = std::max<Count>(1, moe.layerInterval);
    return hi / step - lo / step;
}

} // namespace vramlab
