// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/model_spec.h"
#include "vramlab/run_spec.h"

#include <string>

namespace vramlab {

struct KvCacheBytes {
    Bytes bytes = 0;
    Count bytesPerToken = 0; ///< all layers on this GPU, one sequence
    std::string formula;
};

/// KV cache of one GPU at inference: 2 (K and V) x layers x batch x tokens x kv_heads x
/// head_dim x dtype bytes, kv heads split by tensor parallelism (one at least), layers
/// by pipeline parallelism, local (sliding-window) layers capped at the window.
/// MLA caches the compressed latent and the shared RoPE key instead.
KvCacheBytes kvCache(const ModelSpec& model, const RunSpec& run, bool explain = true);

} // namespace vramlab
