// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/model_spec.h"

namespace vramlab {

/// A member of `base`'s family with about `targetParams` parameters, for quick what-ifs
/// ("the same model at 30B"). Width grows by the cube root of the ratio (heads in whole
/// GQA groups, head_dim, FFN-to-hidden ratio and vocabulary kept), then the layer count
/// is solved so the total lands nearest the target. The result has no preset name.
ModelSpec scaleModel(const ModelSpec& base, Count targetParams);

} // namespace vramlab
