// SPDX-License-Identifier: MIT
#pragma once

#include "parameter_descriptors.h"

namespace vramlab {

/// Appends the controls of the rarely used run keys (framework, sharding and fine-tuning
/// details, overheads, the GPU's figures), each marked `advanced`.
void addAdvancedControls(QVector<ParamDescriptor>& all);

} // namespace vramlab
