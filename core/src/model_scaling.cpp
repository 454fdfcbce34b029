// SPDX-License-Identifier: MIT
#include "vramlab/model_scaling.h"

#include "vramlab/parameter_tensors.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace vramlab {

namespace {
Count roundTo(double v, Count multiple)
{
    return std::max<Count>(multiple, std::llround(v / double(multiple)) * multiple);
}
} // namespace

ModelSpec scaleModel(const ModelSpec& base, Count targetParams)
{
    ModelSpec m = base;
    const Count current = countParameters(base).total;
    if (targetParams <= 0 || current <= 0)
        return m;
    const double widthFactor = std::cbrt(double(targetParams) / double(current));

    // Heads in whole groups of query heads per KV head, so GQA stays valid.
    const Count group = std::max<Count>(1, base.numHeads / std::max<Count>(1, base.numKvHeads));
    m.numHeads = roundTo(double(base.numHeads) * widthFactor, group);
    m.numKvHeads = m.numHeads / group;
    if (base.hiddenSize == base.numHeads * base.headDim)
        m.hiddenSize = m.numHeads * m.headDim;
    else
        m.hiddenSize = roundTo(double(base.hiddenSize) * double(m.numHeads) / double(base.numHeads), 64);
    const double widthRatio = double(m.hiddenSize) / double(base.hiddenSize);
    m.ffnHiddenSize = roundTo(double(base.ffnHiddenSize) * widthRatio, 64);
    if (base.moe.expertFfnHiddenSize > 0)
        m.moe.expertFfnHiddenSize = roundTo(double(base.moe.expertFfnHiddenSize) * widthRatio, 64);

    // Total = fixed part (embeddings, head, final norm, leading dense layers) + the rest of
    // the layers x one layer: solve for the layer count.
    // With MoE every layer_interval-th layer (Llama 4 Maverick), a period of that many layers is the unit.
    const Count dense = base.moe.enabled() ? base.moe.firstDenseLayers : 0;
    const Count period = base.moe.enabled() ? std::max<Count>(1, base.moe.layerInterval) : 1;
    m.numLayers = dense + period;
    const Count one = countParameters(m).total;
    m.numLayers = dense + 2 * period;
    const Count perPeriod = std::max<Count>(1, countParameters(m).total - one);
    const Count fixed = one - perPeriod;
    m.numLayers = dense + period * std::max<Count>(1, std::llround(double(targetParams - fixed) / double(perPeriod)));

    char name[160];
    std::snprintf(name, sizeof name, "%s scaled to %.3gB", base.name.c_str(), double(countParameters(m).total) / 1e9);
    m.name = name;
    m.preset.clear();
    return m;
}

} // namespace vramlab
