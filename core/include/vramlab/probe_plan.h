// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/dtype.h"
#include "vramlab/report.h"
#include "vramlab/scenario.h"

#include <string>
#include <string_view>
#include <vector>

namespace vramlab {

/// One device buffer the live probe allocates: a parameter tensor's weights, gradient
/// or optimizer state, one saved activation, one layer's K or V cache, or a workspace.
struct ProbeBuffer {
    std::string_view component; ///< report component key: weights, gradients, activations, ... (static text)
    std::string name; ///< "layers.attn.q [3]", "softmax probabilities (fp32) [layer 2]"
    Bytes bytes = 0;
};

/// What the estimate predicts for one GPU (the reported pipeline stage), buffer by buffer.
/// Per component the buffers add up exactly to the report's bytes, except the parts that
/// are measured rather than allocated: the CUDA context and the allocator's rounding.
struct ProbeAllocationPlan {
    Report report; ///< the estimate the plan was made from
    std::vector<ProbeBuffer> buffers; ///< in allocation order: model states, activations, KV cache, workspaces
    /// Report components whose bytes the probe measures instead of allocating.
    static bool measuredNotAllocated(std::string_view component);
};

ProbeAllocationPlan probeAllocationPlan(const Scenario& scenario);

/// Which product of a linear layer a GEMM is: forward Y = X W, backward dX = dY W^T
/// (input gradient) and dW = X^T dY (weight gradient).
enum class GemmPass { Forward, BackwardInput, BackwardWeight };
std::string_view toString(GemmPass pass);

/// One GEMM shape of the scenario on one GPU: D (m x n) = A (m x k) B (k x n).
struct GemmShape {
    std::string layer; ///< "qkv", "attention_out", "mlp_up", "mlp_down", "lm_head", "expert_up", ...
    GemmPass pass = GemmPass::Forward;
    Count m = 0, n = 0, k = 0;
    Count perStep = 0; ///< launches of this shape in one optimizer step (or decode step) on one GPU
    double flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
};

/// The matrix multiplies of the scenario's linear layers on one GPU of the reported stage:
/// tokens = micro-batch x sequence in training (forward and both backward products,
/// gradient accumulation included), the decode batch at inference (forward only).
/// Tensor parallelism splits the widths; a MoE layer's routed experts are one GEMM over
/// tokens x top_k routed rows. Attention's own s^2 products are not GEMMs of weights and are
/// not listed (FlashAttention runs them in one fused kernel). MLA's low-rank projections are
/// not listed either: `notes` says what was left out.
struct GemmPlan {
    DType compute = DType::Bf16; ///< GEMM input type of the run (fp8 with run.fp8)
    std::vector<GemmShape> shapes;
    std::vector<std::string> notes;
};
GemmPlan probeGemmPlan(const Scenario& scenario, const Report& report);

} // namespace vramlab
