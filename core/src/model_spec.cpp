// SPDX-License-Identifier: MIT
#include "vramlab/model_spec.h"

namespace vramlab {

Count ModelSpec::globalLayers() const
{
    if (slidingWindow <= 0)
        return attentionLayers();
    if (globalLayerInterval <= 0)
        return 0;
    return numLayers / globalLayerInterval; // Gemma 3: layers 6, 12, ... are global
}

} // namespace vramlab
