// SPDX-License-Identifier: MIT
#include "vramlab/activation_model.h"

#include "vramlab/framework_profile.h"
#include "vramlab/model_states.h"
#include "vramlab/parameter_tensors.h"
#include "vramlab/precision_regime.h"

#include <algorithm>
#include <cassert>
#include <cstdio>

namespace vramlab {

std::string ActivationTensor::shapeText() const
{
    std::string s;
    for (int i = 0; i < rank; ++i)
        s.append(i ? " x " : "").append(std::to_string(dims[static_cast<size_t>(i)]));
    char buf[32];
    std::snprintf(buf, sizeof buf, " x %g B", bytesPerElement);
    return s + buf;
}

namespace {

/// Sums saved tensors and, when `detail`, lists them; zero-sized entries are dropped.
/// Names come in two parts so that nothing is allocated when only the bytes are wanted.
struct Collector {
    ActivationSet& set;
    ActivationScope scope = ActivationScope::Layer;
    Count count = 1;
    bool detail = true;
    Count firstLayer = 0; ///< where the layer-scope tensors start (SavedTensorSize)
    Count strideLayers = 1;
    std::vector<SavedTensorSize>* sizes = nullptr; ///< with detail: each tensor's size and place (allocator replay)

    /// Bytes of one copy: whole bytes per element stay in integers (exact beyond 2^53); only
    /// sub-byte types round.
    static Bytes bytesOf(std::initializer_list<Count> dims, double bytesPerElem)
    {
        Count elems = 1;
        for (Count d : dims)
            elems = checkedMul(elems, d);
        return bytesPerElem == static_cast<double>(static_cast<Count>(bytesPerElem))
            ? checkedMul(elems, static_cast<Count>(bytesPerElem))
            : static_cast<Bytes>(static_cast<double>(elems) * bytesPerElem);
    }
    ActivationTensor tensor(std::string_view prefix, std::string_view name, std::string_view module,
        std::initializer_list<Count> dims, Bytes each, double bytesPerElem) const
    {
        assert(dims.size() <= 4); // ActivationTensor::dims holds four
        ActivationTensor t { std::string(prefix).append(name), module, scope, each, count, {}, 0, bytesPerElem };
        for (Count d : dims)
            t.dims[static_cast<size_t>(t.rank++)] = d;
        return t;
    }

    void add(std::string_view prefix, std::string_view name, std::string_view module, std::initializer_list<Count> dims,
        double bytesPerElem)
    {
        const Bytes each = bytesOf(dims, bytesPerElem);
        if (each <= 0 || count <= 0)
            return;
        const Bytes all = checkedMul(each, count);
        set.bytes = checkedAdd(set.bytes, all);
        if (scope == ActivationScope::Embedding)
            set.embeddingBytes += all;
        else if (scope == ActivationScope::Head)
            set.headBytes += all;
        else
            set.largestLayerTensorBytes = std::max(set.largestLayerTensorBytes, each);
        set.roundingBytes = checkedAdd(set.roundingBytes, checkedMul(roundUp(each, 512) - each, count));
        if (detail) { // the allocator replay's sizes ride on the listing: the lean path tests nothing more
            set.tensors.push_back(tensor(prefix, name, module, dims, each, bytesPerElem));
            if (sizes)
                sizes->push_back({ each, count, firstLayer, strideLayers, scope });
        }
    }
    void add(std::string_view name, std::string_view module, std::initializer_list<Count> dims, double bytesPerElem)
    {
        add({}, name, module, dims, bytesPerElem);
    }
    /// A tensor eager code keeps and the compiled graph recomputes in backward instead (Explain lists it).
    void drop(std::string_view prefix, std::string_view name, std::string_view module,
        std::initializer_list<Count> dims, double bytesPerElem)
    {
        const Bytes each = bytesOf(dims, bytesPerElem);
        if (each <= 0 || count <= 0)
            return;
        set.compileRemovedBytes = checkedAdd(set.compileRemovedBytes, checkedMul(each, count));
        if (detail)
            set.compileRemoved.push_back(tensor(prefix, name, module, dims, each, bytesPerElem));
    }
};

/// Shapes of one micro-batch on one GPU.
struct Dims {
    Count b, s, h, a, g, d, t;
    Count hs; ///< rows of hidden-size tensors: s, or s / t with sequence parallelism
    Count gs; ///< rows of a column-parallel matmul's kept input: hs, or s where SP keeps the gathered input
    Count ffn; ///< MLP width on this GPU
    double p; ///< bytes of an activation element
    double pg; ///< bytes of a GEMM-only input (1 with FP8)
    bool eager;
    bool dropout;
    bool fp32Acts;
    bool rmsNormFp32; ///< RMSNorm in fp32 (keeps an fp32 copy of its input); LitGPT's stays in the input dtype
    bool repeatKv; ///< K and V materialized to the query heads before SDPA (torchtitan, torchtune)
    bool outputCopy; ///< the attention output's transpose().contiguous() copy, read by the output projection
    bool fusedQkvLora; ///< LitGPT LoRAQKVLinear: one dropout and one A for the fused qkv
    bool vViewOfQkv; ///< V is a view of the fused qkv output, which it keeps whole (LitGPT, multi-head)
    bool nf4Keeps; ///< QLoRA: every NF4 linear keeps its input (bitsandbytes MatMul4Bit)
    /// > 0: each adapted linear keeps its own copy of its input, in this many bytes an element (PEFT's fp32
    /// adapters: fp32, or 16-bit under autocast); 0: lora_A keeps the shared input.
    double loraInput;
    double loraAct; ///< bytes of an element of the adapters' activations (A's output)
    bool autocast; ///< mixed precision runs the forward under torch.autocast (accelerate, for PEFT's adapters)
    /// FSDP1 flat parameters holding adapters (fsdp1FrozenGradients): the frozen block weights are views of a
    /// parameter that requires grad, so their layers keep what full fine-tuning keeps, the adapters' tensors besides.
    bool baseNeedsGrad;
    bool frozenKeepsNoInput; ///< autograd as measured for frozen weights: no x_normed, no LM head input, no mask of a
                             ///< no-grad input
    bool compiled; ///< run.compile: each block's saved set is the min-cut partitioner's (see compiledNorm)
    bool compiledLoss; ///< run.compile with a framework that compiles its loss too (torchtune)
    bool fp8Torchao; ///< run.fp8 as torchao's Float8Linear (FrameworkProfile::fp8Torchao), training
    bool fusedNorm; ///< Transformer Engine's norm kernels: the 16-bit input and fp32 statistics only
    bool fusedGlu; ///< a fused SwiGLU keeps only its input (the gate and up projections' output)
    /// QLoRA with fp32 norms (TRL's or PEFT's preparation), under autocast (see makeDims): the residual stream is
    /// fp32 after the first layer and so are the 4-bit linears' outputs.
    bool kbitFp32;
    bool embeddingFp32; ///< PEFT's preparation: the embedding and the LM head are fp32 too
    double residual; ///< bytes of an element of the residual stream (a checkpointed layer's input)
    double projOut; ///< bytes of an element of a projection's output that the MLP keeps (gate, up, activation)
};

// kCompileRule: what a compiled block saves (run.compile). torch.compile traces the block's
// forward and backward as one graph and AOTAutograd's min-cut partitioner decides what forward
// hands to backward (torch/_functorch/partitioners.py@c28ba8e5893e9806da1ec8bdad05370b86f22823,
// solve_min_cut / should_ban_recomputation, with inductor's defaults): an op outside the
// recomputable list (matmuls, SDPA) is never recomputed; a tensor that a non-fusible backward op
// reads (a weight-gradient matmul, SDPA's backward) is saved (ban_if_materialized_backward); a
// reduction whose output is 4x smaller than its input is saved (ban_if_reduction); everything
// else is pointwise or a view and is recomputed from the cheapest cut, which for a pre-norm block
// is its 16-bit inputs. So, beside the eager list: an RMSNorm keeps its 16-bit input and rsqrt, not
// an fp32 copy and the normalized tensor; a gated MLP's activation output is rebuilt from the gate
// projection; q/k norms keep the projection output. Matmul inputs, Q/K/V after RoPE, SDPA's output
// and log-sum-exp, and dropout masks (random ops are never recomputed) stay as in eager code.

/// What one kind of layer keeps (every layer of a stage is one of dense/MoE x global/local,
/// and activations do not depend on the window, so two kinds suffice).
class LayerTensors {
public:
    LayerTensors(const ModelSpec& model, const RunSpec& run, const Dims& dims)
        : m(model)
        , r(run)
        , x(dims)
    {
    }

    /// `firstLayer`: the layer right after a frozen embedding (LoRA) has an input that
    /// does not require grad, so its first norm keeps nothing.
    void collect(Collector& c, bool moe, bool firstLayerFrozenInput) const
    {
        const bool adapters = r.mode == Mode::Training && r.finetune.method != FinetuneMethod::Full;
        const bool lora = adapters && !x.baseNeedsGrad; // the base weights keep nothing for a gradient of their own
        // OLMo-2 (norm after each sublayer) keeps the same tensors under other names: q/k/v read the
        // block input instead of a norm output, and the norm reads o_proj's output (modeling_olmo2.py).
        const bool after = m.normAfterSublayers;
        if (!firstLayerFrozenInput)
            norm(c, after ? "post-attention norm (on o_proj output)" : "input norm");
        // LitGPT's fused qkv LoRA reads dropout(x): with dropout the dropped copy is kept instead.
        const bool qkvInputDropped = lora && x.fusedQkvLora && r.finetune.dropout > 0;
        // An NF4 qkv keeps its input whenever that input needs a gradient (not after a frozen embedding).
        // With per-linear copies (PEFT) the adapters keep their own inputs, not the shared one.
        const bool adaptersShareInput = x.loraInput == 0;
        const bool attentionInputKept
            = ((!lora || (adaptersShareInput && targeted({ "q", "k", "v", "q_a", "kv_a" }))) && !qkvInputDropped)
            || (x.nf4Keeps && !firstLayerFrozenInput);
        if (attentionInputKept)
            gemmInput(c,
                after ? "attention input (block input, read by q/k/v)" : "attention input (norm output, read by q/k/v)",
                "attention", { x.b, x.gs, x.h }, 3);
        attention(c);
        if (!lora || (adaptersShareInput && targeted({ "o" })))
            c.add("attention output (o_proj input)", "attention", { x.b, x.s, x.a * vDim() },
                x.eager || x.outputCopy ? x.pg : 0);
        if (x.dropout)
            c.add("dropout mask after o_proj (bool)", "attention", { x.b, x.hs, x.h }, 1);
        if (m.postNorms)
            norm(c, "post-attention norm");
        // lit_gpt/model.py@8641822 Block.forward with parallel_residual: n_2 = n_1 if
        // shared_attention_norm else norm_2(x); x = x + h + mlp(n_2). A shared norm adds nothing;
        // norm_2 reads the block input, which norm_1 already keeps (after a frozen embedding,
        // neither keeps anything).
        bool mlpInputShared = false;
        if (!m.parallelResidual)
            norm(c, after ? "post-MLP norm (on the MLP output)" : "pre-MLP norm");
        else if (!m.sharedAttentionNorm && !firstLayerFrozenInput)
            norm(c, "pre-MLP norm", true);
        else if (m.sharedAttentionNorm)
            mlpInputShared = attentionInputKept;
        // A parallel block after a frozen embedding feeds its MLP a tensor that needs no gradient:
        // without adapters of its own the MLP keeps nothing (measured with lit-gpt).
        const bool mlpFrozenInput = m.parallelResidual && firstLayerFrozenInput && !targeted({ "gate", "up", "down" });
        if (moe && !mlpFrozenInput)
            moeMlp(c);
        else if (!mlpFrozenInput)
            mlp(c, "mlp", m.ffnHiddenSize / x.t,
                (!lora || (adaptersShareInput && targeted({ "gate", "up" })) || x.nf4Keeps) && !mlpInputShared,
                !lora || (adaptersShareInput && targeted({ "down" })) || x.nf4Keeps);
        if (x.dropout)
            c.add("dropout mask after MLP (bool)", "mlp", { x.b, x.hs, x.h }, 1);
        if (m.postNorms)
            norm(c, "post-MLP norm");
        if (adapters)
            loraAdapters(c, firstLayerFrozenInput);
        if (!lora)
            fp8Weights(c);
    }

    /// A matmul input kept for the weight gradient, in 16-bit or as its fp8 cast. torchao's Float8Linear
    /// casts and keeps its input once per linear (float8_linear.py@eab345c2268a: input_fp8 saved by each
    /// linear's autograd function), so eager code keeps an input read by `readers` linears that many
    /// times; a compiled block computes the identical casts once (common subexpressions merged).
    void gemmInput(Collector& c, std::string_view name, std::string_view module, std::initializer_list<Count> dims,
        Count readers) const
    {
        const Count copies = x.fp8Torchao && !x.compiled ? readers : 1;
        for (Count i = 0; i < copies; ++i)
            c.add(copies > 1 ? "fp8 cast of one reading linear: " : "", name, module, dims, x.pg);
    }

    /// torchao's Float8Linear keeps each linear's fp8 transposed weight, cast from the gathered (unsharded)
    /// weight, for backward (float8_linear.py@eab345c2268a manual_float8_matmul_with_args_in_float8:
    /// save_for_backward(input_fp8, weight_fp8_t); force_recompute_fp8_weight_in_bwd off by default).
    /// A compiled block recomputes the cast from the weight it reads (kCompileRule: pointwise), so only
    /// eager code keeps them; torchao warns compile "may decide to save" it, which is not modelled.
    void fp8Weights(Collector& c) const
    {
        if (!x.fp8Torchao)
            return;
        auto weight = [&](std::string_view name, Count in, Count out) {
            if (x.compiled)
                c.drop({}, name, "fp8", { in, out }, 1);
            else
                c.add(name, "fp8", { in, out }, 1);
        };
        const Count h = x.h, q = x.a * x.d, kv = x.g * x.d, o = x.a * vDim(), f = x.ffn;
        weight("wq fp8 weight, transposed (unsharded)", h, q);
        weight("wk fp8 weight, transposed (unsharded)", h, kv);
        weight("wv fp8 weight, transposed (unsharded)", h, kv);
        weight("wo fp8 weight, transposed (unsharded)", o, h);
        weight(m.gated() ? "w1 fp8 weight, transposed (unsharded)" : "up fp8 weight, transposed (unsharded)", h, f);
        if (m.gated())
            weight("w3 fp8 weight, transposed (unsharded)", h, f);
        weight(m.gated() ? "w2 fp8 weight, transposed (unsharded)" : "down fp8 weight, transposed (unsharded)", f, h);
    }

    /// Norm of hidden-size rows: RMSNorm (Llama style, in fp32) or LayerNorm.
    /// `inputKept`: the input is a tensor another norm already keeps (a parallel block's norm_2).
    void norm(Collector& c, std::string_view what, bool inputKept = false) const
    {
        const double inputBytes = inputKept ? 0 : x.p;
        // weight * x_normed keeps x_normed only for the weight's gradient: with a frozen weight
        // (LoRA) autograd keeps the weight alone (mul's formula; checked on torch 1.13). The plain
        // profile keeps today's count (its reference suite has no LoRA case).
        const bool frozenWeight = x.frozenKeepsNoInput && r.mode == Mode::Training
            && r.finetune.method != FinetuneMethod::Full && !x.baseNeedsGrad;
        // Olmo2RMSNorm: (weight * x_normed).to(dtype) multiplies in fp32, so the fp32 x_normed is kept.
        const double normalizedBytes = frozenWeight ? 0 : m.normScaleFp32 && x.rmsNormFp32 ? 4 : x.p;
        if (x.fusedNorm) {
            // Transformer Engine (transformer_engine/pytorch/module/layernorm_linear.py, the kernel Megatron-LM's
            // TELayerNormColumnParallelLinear calls): the backward reads the 16-bit input and the per-token
            // statistics (rsigma, and mu for LayerNorm); the output is the next linear's kept input.
            c.add(what, ": input", "norm", { x.b, x.hs, x.h }, inputBytes);
            if (m.norm == NormKind::LayerNorm)
                c.add(what, ": mu (fp32)", "norm", { x.b, x.hs }, 4);
            c.add(what, ": rsigma (fp32)", "norm", { x.b, x.hs }, 4);
        } else if (x.compiled && c.scope == ActivationScope::Layer && m.norm == NormKind::RmsNorm) {
            // Compiled block (kCompileRule): the fp32 copy and x * rsqrt are pointwise, read in
            // backward only by pointwise ops and the weight's gradient reduction, so they are
            // recomputed from the 16-bit input; the rsqrt (a reduction's output, 1/h of its input)
            // is saved. The norm's output stays saved by the matmuls that read it.
            c.add(what, ": input (16-bit, kept by the compiled block)", "norm", { x.b, x.hs, x.h }, inputBytes);
            c.add(what, x.rmsNormFp32 ? ": rsqrt (fp32)" : ": rsqrt", "norm", { x.b, x.hs }, x.rmsNormFp32 ? 4 : x.p);
            if (x.rmsNormFp32)
                c.drop(what, ": fp32 input", "norm", { x.b, x.hs, x.h }, 4);
            c.drop(what, ": normalized", "norm", { x.b, x.hs, x.h }, normalizedBytes);
        } else if (m.norm == NormKind::RmsNorm && !x.rmsNormFp32) {
            // lit_gpt/rmsnorm.py@8641822: x * x, rsqrt and x * rsqrt in the input dtype;
            // x * x and x * rsqrt keep the input, the rsqrt its output, weight * x_normed the normalized.
            c.add(what, ": input", "norm", { x.b, x.hs, x.h }, inputBytes);
            c.add(what, ": rsqrt", "norm", { x.b, x.hs }, x.p);
            c.add(what, ": normalized", "norm", { x.b, x.hs, x.h }, normalizedBytes);
        } else if (m.norm == NormKind::RmsNorm) {
            c.add(what, ": fp32 input", "norm", { x.b, x.hs, x.h }, 4);
            c.add(what, ": rsqrt (fp32)", "norm", { x.b, x.hs }, 4);
            c.add(what, ": normalized", "norm", { x.b, x.hs, x.h }, normalizedBytes);
            if (x.eager)
                c.add(what, ": 1/h scalar (float64)", "norm", { 1 }, 8);
        } else if (!m.normBias) {
            // CohereLayerNorm (models/cohere/modeling_cohere.py@015bfeb8): x.to(float32); mean; x - mean, which pow(2)
            // and the product with rsqrt(var + eps) keep; weight.to(float32) * normalized keeps both for the weight's
            // and the input's gradients; .to(input_dtype). The fp32 copy itself and the mean are read by ops that
            // keep nothing.
            c.add(what, ": centered fp32 input (x - mean)", "norm", { x.b, x.hs, x.h }, 4);
            c.add(what, ": rsqrt (fp32)", "norm", { x.b, x.hs }, 4);
            c.add(what, ": normalized (fp32)", "norm", { x.b, x.hs, x.h }, frozenWeight ? 0 : 4);
            c.add(what, ": fp32 copy of the weight", "norm", { x.h }, 4);
        } else {
            c.add(what, ": input", "norm", { x.b, x.hs, x.h }, inputBytes);
            // CUDA keeps the statistics in fp32; the CPU reference keeps them in the input dtype.
            const double statBytes = x.eager ? x.p : 4;
            c.add(what, ": mean", "norm", { x.b, x.hs }, statBytes);
            c.add(what, ": rstd", "norm", { x.b, x.hs }, statBytes);
        }
    }

private:
    Count vDim() const { return m.attentionType == AttentionType::Mla ? m.mla.vHeadDim : m.headDim; }

    bool targeted(std::initializer_list<const char*> modules) const
    {
        for (const char* mod : modules)
            for (const std::string& t : r.finetune.targets)
                if (t == std::string_view(mod) || t == "all-linear")
                    return true;
        return false;
    }

    void attention(Collector& c) const
    {
        const Count a = x.a, s = x.s, b = x.b;
        if (m.attentionType == AttentionType::Mla) {
            const MlaSpec& l = m.mla;
            if (l.qLoraRank > 0) {
                c.add("q_a output: fp32 copy", "attention", { b, s, l.qLoraRank }, 4);
                c.add("q_a output: rsqrt", "attention", { b, s }, 4);
                c.add("q_a output: normalized (q_b input)", "attention", { b, s, l.qLoraRank }, x.p);
            }
            c.add("kv_a output: fp32 copy", "attention", { b, s, l.kvLoraRank }, 4);
            c.add("kv_a output: rsqrt", "attention", { b, s }, 4);
            c.add("kv_a output: normalized (kv_b input)", "attention", { b, s, l.kvLoraRank }, x.p);
            const Count qk = l.qkNopeHeadDim + l.qkRopeHeadDim;
            c.add("Q after RoPE", "attention", { b, a, s, qk }, x.p);
            c.add("K after RoPE", "attention", { b, a, s, qk }, x.p);
            c.add("V", "attention", { b, a, s, l.vHeadDim }, x.p);
            core(c, a);
            return;
        }
        const Count d = x.d;
        if (m.qkNorm) {
            // Per head (Qwen3, Gemma 3), or over all heads at once (OLMo-2: one statistic per token).
            const bool full = m.qkNormFullWidth;
            const double normalized = m.normScaleFp32 ? 4 : x.p;
            for (const auto& [name, heads] : { std::pair { "q", a }, std::pair { "k", x.g } }) {
                if (x.compiled) { // kCompileRule: the projection's 16-bit output and the rsqrt stay
                    c.add(name, "-norm: input (projection output, 16-bit)", "attention", { b, s, heads, d }, x.p);
                    c.add(name, "-norm: rsqrt", "attention", { b, s, full ? 1 : heads }, 4);
                    c.drop(name, "-norm: fp32 input", "attention", { b, s, heads, d }, 4);
                    c.drop(name, "-norm: normalized", "attention", { b, s, heads, d }, x.p);
                    continue;
                }
                c.add(name, "-norm: fp32 input", "attention", { b, s, heads, d }, 4);
                c.add(name, "-norm: rsqrt", "attention", { b, s, full ? 1 : heads }, 4);
                c.add(name, "-norm: normalized", "attention", { b, s, heads, d }, normalized);
                if (x.eager)
                    c.add(name, full ? "-norm: 1/width scalar (float64)" : "-norm: 1/d scalar (float64)", "attention",
                        { 1 }, 8);
            }
        }
        const bool rope = m.position == PositionKind::Rope;
        c.add(rope ? "Q after RoPE" : "Q", "attention", { b, a, s, d }, x.p);
        // Eager GQA repeats K and V to every query head (repeat_interleave keeps its int64 index);
        // torchtitan's and torchtune's repeat_kv/expand+flatten copy them before SDPA too.
        const bool repeat = (x.eager || x.repeatKv) && m.numKvHeads != m.numHeads;
        const Count kvHeads = repeat ? a : x.g;
        const std::string_view repeated = repeat ? " (repeated to query heads)" : "";
        c.add(rope ? "K after RoPE" : "K", repeated, "attention", { b, kvHeads, s, d }, x.p);
        if (x.vViewOfQkv) // lit_gpt/model.py@8641822: v = qkv.view(...).permute(...).split(...)[2].reshape(B, -1, T,
                          // hs)
            c.add("V (a view that keeps the whole fused qkv output)", "attention", { b, s, (a + 2 * x.g) * d }, x.p);
        else
            c.add("V", repeated, "attention", { b, kvHeads, s, d }, x.p);
        if (repeat && x.eager) {
            c.add("repeat_interleave index of K (int64)", "attention", { a }, 8);
            c.add("repeat_interleave index of V (int64)", "attention", { a }, 8);
        }
        core(c, a);
    }

    /// The attention core: from scores to the output, as eager or flash keeps it.
    void core(Collector& c, Count a) const
    {
        const Count b = x.b, s = x.s;
        const bool selective = r.checkpointing.kind == Checkpointing::Kind::Selective;
        if (!x.eager) {
            c.add("attention output O (flash; also o_proj input)", "attention", { b, s, a, vDim() }, x.p);
            c.add("log-sum-exp (fp32)", "attention", { b, a, s }, 4);
            if (x.dropout)
                c.add("dropout RNG seed and offset", "attention", { 2 }, 8);
            return;
        }
        if (selective) // the core is recomputed in backward: only its inputs stay
            return;
        c.add("1/sqrt(d) scalar (float64)", "attention", { 1 }, 8);
        c.add("softmax probabilities (fp32)", "attention", { b, a, s, s }, 4);
        if (x.dropout) {
            c.add("attention dropout mask (bool)", "attention", { b, a, s, s }, 1);
            c.add("attention probabilities after dropout", "attention", { b, a, s, s }, x.p);
        } else if (!x.fp32Acts) {
            c.add("attention probabilities cast back from fp32", "attention", { b, a, s, s }, x.p);
        }
    }

    void mlp(Collector& c, std::string_view module, Count width, bool inputSaved, bool downInputSaved) const
    {
        if (inputSaved)
            gemmInput(c, "MLP input (norm output)", module, { x.b, x.gs, x.h }, m.gated() ? 2 : 1);
        if (x.fusedGlu) {
            // Megatron's bias_swiglu_impl (fusions/fused_bias_swiglu.py@0d7e02b SwiGLUFunction): fc1's output, gate and
            // up side by side, is all it saves; the SiLU and the product are recomputed from it in backward.
            c.add("fc1 output (gate and up, kept by the fused SwiGLU)", module, { x.b, x.s, 2 * width }, x.p);
            if (downInputSaved)
                c.add("SwiGLU output (fc2 input)", module, { x.b, x.s, width }, x.pg);
        } else if (m.gated()) {
            const std::string_view fp32 = x.kbitFp32 ? " (fp32: Linear4bit returns its input's type)" : "";
            c.add("gate projection output", fp32, module, { x.b, x.s, width }, x.projOut);
            // kCompileRule: the activation is pointwise on the gate output and read in backward only
            // by pointwise ops (the product's and its own gradients), so the compiled block recomputes it.
            if (x.compiled)
                c.drop({}, m.mlp == MlpKind::SwiGlu ? "SiLU output" : "GELU output", module, { x.b, x.s, width },
                    x.projOut);
            else
                c.add(m.mlp == MlpKind::SwiGlu ? "SiLU output" : "GELU output", fp32, module, { x.b, x.s, width },
                    x.projOut);
            c.add("up projection output", fp32, module, { x.b, x.s, width }, x.projOut);
            if (downInputSaved)
                c.add("gated product (down_proj input)", module, { x.b, x.s, width }, x.pg);
        } else {
            c.add("up projection output (GELU input)", module, { x.b, x.s, width }, x.projOut);
            if (downInputSaved)
                c.add("GELU output (down_proj input)", module, { x.b, x.s, width }, x.pg);
        }
    }

    /// Dropless top-k routing with balanced experts (capacity factor 1).
    void moeMlp(Collector& c) const
    {
        const MoeSpec& e = m.moe;
        const Count b = x.b, s = x.s, k = e.topK, width = m.expertWidth() / x.t;
        c.add("router input (norm output)", "moe", { b, x.gs, x.h }, x.p);
        c.add("router probabilities (fp32)", "moe", { b, s, e.numExperts }, 4);
        c.add("top-k weights", "moe", { b, s, k }, x.p);
        c.add("top-k expert indices (int64)", "moe", { b, s, k }, 8);
        c.add("tokens dispatched to experts", "moe", { b, s, k, x.h }, x.pg);
        c.add("expert gate outputs", "moe", { b, s, k, width }, x.p);
        c.add("expert activation outputs", "moe", { b, s, k, width }, x.p);
        c.add("expert up outputs", "moe", { b, s, k, width }, x.p);
        c.add("expert gated products (down input)", "moe", { b, s, k, width }, x.pg);
        c.add("expert outputs (weighted by top-k)", "moe", { b, s, k, x.h }, x.p);
        if (e.sharedExperts > 0) {
            const Count sw = e.sharedExperts * (m.sharedExpertWidth() / x.t);
            c.add("shared expert gate outputs", "moe", { b, s, sw }, x.p);
            c.add("shared expert activation outputs", "moe", { b, s, sw }, x.p);
            c.add("shared expert up outputs", "moe", { b, s, sw }, x.p);
            c.add("shared expert gated products", "moe", { b, s, sw }, x.pg);
        }
    }

    /// LoRA adapters: lora_A keeps its (dropped-out) input, lora_B keeps A's output.
    void loraAdapters(Collector& c, bool inputFrozen) const
    {
        const Count rank = r.finetune.rank;
        const bool fusedQkv = x.fusedQkvLora && m.attentionType == AttentionType::Mha;
        if (fusedQkv) {
            // lit_gpt/lora.py@8641822 LoRAQKVLinear: after_A = F.linear(lora_dropout(x), lora_A), lora_A
            // having r rows per enabled q/k/v; conv1d keeps after_A; zero_pad's index_copy keeps its index.
            Count enabled = 0, width = 0;
            for (const auto& [q, w] :
                { std::pair { "q", x.a * x.d }, std::pair { "k", x.g * x.d }, std::pair { "v", x.g * x.d } })
                if (targeted({ q })) {
                    ++enabled;
                    width += w;
                }
            if (enabled > 0) {
                if (r.finetune.dropout > 0) {
                    // Dropout of an input that needs no gradient (after a frozen embedding) records
                    // no mask; lora_A still keeps the dropped copy (measured, torch 1.13).
                    if (!(inputFrozen && x.frozenKeepsNoInput))
                        c.add("LoRA qkv: dropout mask (bool)", "lora", { x.b, x.s, x.h }, 1);
                    c.add("LoRA qkv: dropped-out input", "lora", { x.b, x.s, x.h }, x.p);
                }
                c.add("LoRA qkv: A output (conv1d input)", "lora", { x.b, x.s, rank * enabled }, x.p);
                // zero_pad: result.index_copy(1, lora_ind, x.reshape(-1, sum(qkv_shapes))) unless all three
                // are enabled; IndexCopyBackward keeps `source` (expand_as(source); checked on torch 1.13).
                if (enabled < 3) {
                    c.add("LoRA qkv: B output reshaped (index_copy source)", "lora", { x.b, x.s, width }, x.p);
                    c.add("LoRA qkv: index_copy index (int64, torch.tensor(lora_ind))", "lora", { width }, 8);
                }
            }
        }
        for (const ParamTensor& t : parameterTensors(m)) {
            if (!t.linear || t.group == ParamGroup::Head || t.group == ParamGroup::Embedding)
                continue;
            const std::string mod(t.module);
            if (!targeted({ mod.c_str() }) || t.copies < m.numLayers)
                continue;
            if (fusedQkv && (mod == "q" || mod == "k" || mod == "v"))
                continue;
            const std::string prefix = "LoRA " + mod;
            const double inputBytes = x.loraInput > 0 ? x.loraInput : x.p;
            if (r.finetune.dropout > 0) {
                c.add(prefix, ": dropout mask (bool)", "lora", { x.b, x.s, t.rows }, 1);
                c.add(prefix, ": dropped-out input", "lora", { x.b, x.s, t.rows }, inputBytes);
            } else if (x.loraInput > 0) {
                c.add(prefix,
                    x.loraInput == 4 ? ": input cast to the fp32 adapters (lora_A input)"
                                     : ": input as autocast casts it (lora_A input)",
                    "lora", { x.b, x.s, t.rows }, inputBytes);
            }
            c.add(prefix, ": A output (B input)", "lora", { x.b, x.s, rank }, x.loraAct);
            // Under autocast the fp32 adapters' weights are cast to 16 bits, and each linear keeps its cast for its
            // input's gradient (measured on PEFT's layer, tests/validation/dora_linear.py).
            if (x.autocast && x.loraInput > 0)
                c.add(prefix, ": A and B weights cast by autocast (kept for the inputs' gradients)", "lora",
                    { rank, t.rows + t.cols }, x.p);
            if (x.eager)
                c.add(prefix, ": scaling scalar (float64)", "lora", { 1 }, 8);
            if (r.finetune.dora)
                doraSaved(c, prefix, t);
        }
    }

    /// DoRA as PEFT 0.18.0 runs it (tuners/lora/variants.py@77daa8d3 DoraLinearVariant.forward, dora.py
    /// DoraLinearLayer.forward): result_dora = (m / n - 1) * base + (m / n) * lora_B(lora_A(x)) * s, with
    /// n = ||W + s B A|| per output, detached. The two products keep both operands (the magnitude trains, x needs
    /// its gradient): the base output and B's output whole, and three vectors of one value per output (n kept by
    /// the division, m / n - 1 and m / n), in x's type after _cast_input_dtype. Without dropout the base layer's
    /// result is reused; with it, base = F.linear(dropout(x), W.to(x.dtype)) keeps W for x's gradient: a copy
    /// unless W is the 16-bit parameter itself (a 4-bit weight is dequantized), or under autocast the 16-bit cast
    /// F.linear makes of it; W needs no gradient, so F.linear keeps no x (tests/validation/dora_linear.py measures
    /// PEFT's own layer).
    void doraSaved(Collector& c, const std::string& prefix, const ParamTensor& t) const
    {
        const double xb = x.loraInput > 0 ? 4 : x.p; // x after _cast_input_dtype: the fp32 adapters' type
        const Count in = t.rows, out = t.cols;
        if (r.finetune.dropout > 0) {
            const bool qlora = r.finetune.method == FinetuneMethod::Qlora;
            if (qlora || xb != x.p)
                c.add(prefix,
                    x.autocast ? ": DoRA weight cast by autocast (F.linear's, kept for x's gradient)"
                               : ": DoRA weight in x's type (F.linear's, kept for x's gradient)",
                    "dora", { in, out }, x.autocast ? x.p : xb);
            c.add(prefix, ": DoRA base output F.linear(dropout(x), W) (kept by (m / n - 1) x base)", "dora",
                { x.b, x.s, out }, x.loraAct);
        } else {
            c.add(prefix, ": DoRA base layer output (kept by (m / n - 1) x base)", "dora", { x.b, x.s, out }, x.p);
        }
        c.add(prefix, ": DoRA B output (kept by (m / n) x lora)", "dora", { x.b, x.s, out }, x.loraAct);
        c.add(prefix, ": DoRA weight norm n, m / n - 1 and m / n", "dora", { 3, out }, xb);
    }

    const ModelSpec& m;
    const RunSpec& r;
    Dims x;
};

Dims makeDims(const ModelSpec& m, const RunSpec& r, Count batch, Count seq)
{
    const PrecisionRegime reg = precisionRegime(r);
    const Count t = r.parallelism.tensorParallel;
    Dims d {};
    d.b = batch;
    d.s = seq;
    d.h = m.hiddenSize;
    d.t = t;
    d.a = ceilDiv(m.numHeads, t);
    d.g = std::max<Count>(1, m.numKvHeads / t);
    d.d = m.headDim;
    d.ffn = m.ffnHiddenSize / t;
    d.hs = r.parallelism.sequenceParallel ? ceilDiv(seq, t) : seq;
    d.gs = frameworkProfile(r.framework).sequenceParallelKeepsGathered ? seq : d.hs;
    d.p = bytesPerElement(reg.activations);
    d.pg = r.fp8 ? 1 : d.p;
    d.eager = r.attention == AttentionImpl::Eager;
    d.dropout = m.dropout > 0;
    d.fp32Acts = reg.activations == DType::Fp32;
    const FrameworkProfile& f = frameworkProfile(r.framework);
    d.rmsNormFp32 = f.rmsNormFp32;
    d.repeatKv = f.repeatKv;
    d.outputCopy = f.attentionOutputCopy;
    d.fusedQkvLora = f.fusedQkvLora;
    d.vViewOfQkv = f.fusedQkvView && m.numKvHeads == m.numHeads;
    d.nf4Keeps = f.nf4KeepsInputs && r.mode == Mode::Training && r.finetune.method == FinetuneMethod::Qlora
        && effectiveNf4Format(r) == Nf4Format::Bitsandbytes; // torchao's LinearNF4 saves only the weight
    d.frozenKeepsNoInput = r.framework != Framework::Plain;
    d.baseNeedsGrad = fsdp1FrozenGradients(r);
    // PEFT's fp32 adapters (tuners/lora/layer.py@77daa8d3): a 16-bit input is cast to fp32 for each adapted
    // linear, and lora_A keeps that copy; under autocast (mixed precision, accelerate's autocast around the
    // forward) lora_A runs in 16-bit and keeps autocast's 16-bit cast of it instead, one per adapted linear too.
    const bool peftCast
        = f.loraAdaptersFp32 && r.mode == Mode::Training && r.finetune.method != FinetuneMethod::Full && d.p < 4;
    const bool autocast = mixedPrecision(r.precision);
    d.loraInput = peftCast ? (autocast ? d.p : 4) : 0;
    d.autocast = autocast;
    d.loraAct = peftCast && !autocast ? 4 : d.p;
    d.compiled = r.compile && r.mode == Mode::Training;
    d.compiledLoss = d.compiled && r.compileLoss.value_or(f.compileLoss);
    d.fp8Torchao = r.fp8 && f.fp8Torchao && r.mode == Mode::Training;
    d.fusedNorm = f.fusedNormKernel;
    d.fusedGlu = f.fusedGlu && m.mlp == MlpKind::SwiGlu;
    // TRL's SFTTrainer (trl/models/utils.py@v0.25.0 prepare_model_for_kbit_training) casts the norms to fp32; PEFT's
    // (utils/other.py@77daa8d3) the embedding and the LM head too. Under autocast, then, an RMSNorm returns
    // fp32 weight * x.to(input_dtype), fp32 by type promotion (mul is on no autocast list), and each 4-bit
    // projection returns its input's type: bitsandbytes' Linear4bit.forward (nn/modules.py@0.48.2) computes in its
    // compute dtype and returns .to(inp_dtype), and PEFT's lora Linear4bit (tuners/lora/bnb.py@77daa8d3) clones it
    // and adds the 16-bit adapter output in fp32. So the gate and up outputs and the activation that SiLU and the
    // product keep are fp32, and the first layer's MLP output makes the residual stream fp32 (from the embedding on
    // with PEFT's fp32 embedding): each later layer's checkpointed input. Q, K and V are cast to 16 bits by autocast
    // for SDPA (those casts are what it keeps), the adapters keep autocast's casts as before, o_proj reads SDPA's
    // 16-bit output, and the RMSNorms already keep an fp32 input.
    const KbitPreparation prep = kbitPreparation(r);
    d.kbitFp32 = prep != KbitPreparation::None && autocast && r.mode == Mode::Training;
    d.embeddingFp32 = d.kbitFp32 && prep == KbitPreparation::Peft;
    d.residual = d.kbitFp32 ? 4 : d.p;
    d.projOut = d.kbitFp32 ? 4 : d.p;
    return d;
}

/// torchtitan's op-level selective checkpointing of one TransformerBlock
/// (torchtitan/parallelisms/parallelize_llama.py@9dec370ad26b5f8e9a7333a0e36165018262644b):
/// `_save_list` = {aten.mm, SDPA flash/efficient, reduce_scatter, abs, max}; every mm except
/// each second one (counted per block: wq 1, wk 2, wv 3, wo 4, w1 5, w3 6, w2 7) is MUST_SAVE,
/// the rest PREFER_RECOMPUTE. So a block keeps its input (the checkpoint's argument), the
/// outputs of wq, wv, w1 and w2 and SDPA's outputs; in backward it is rebuilt with those
/// reused: everything the block's autograd keeps except O, the log-sum-exp and w1's output.
void selectiveOpLayers(ActivationSet& set, const Dims& x, const StageSlice& slice, const ActivationSet& full,
    bool explain, std::vector<SavedTensorSize>* sizes)
{
    const Count layers = slice.layers();
    Collector c { set, ActivationScope::Layer, layers, explain, 0, 1, sizes };
    const Count ffn = x.ffn;
    c.add("block input (checkpoint)", "checkpoint", { x.b, x.hs, x.h }, x.p);
    c.add("wq output (mm 1, saved)", "attention", { x.b, x.s, x.a * x.d }, x.p);
    c.add("wv output (mm 3, saved)", "attention", { x.b, x.s, x.g * x.d }, x.p);
    c.add("SDPA output O (saved)", "attention", { x.b, x.a, x.s, x.d }, x.p);
    c.add("SDPA log-sum-exp (fp32, saved)", "attention", { x.b, x.a, x.s }, 4);
    c.add("w1 output (mm 5, saved)", "mlp", { x.b, x.s, ffn }, x.p);
    c.add("w2 output (mm 7, saved)", "mlp", { x.b, x.s, x.h }, x.p);
    // Rebuilt in backward, one block at a time: the block's own saved tensors minus the reused ones.
    const Bytes reused
        = checkedAdd(checkedAdd(checkedMul(x.b, x.s, x.a * x.d, static_cast<Count>(x.p)), checkedMul(x.b, x.a, x.s, 4)),
            checkedMul(x.b, x.s, ffn, static_cast<Count>(x.p)));
    set.recomputeBytes = layers > 0 ? full.bytes - std::min(full.bytes, reused) : 0;
    set.largestLayerTensorBytes = full.largestLayerTensorBytes;
}

// Context parallelism (run.parallelism.context_parallel > 1, torchtitan). Sources: torchtitan
// train.py@9dec370ad26b5f8e9a7333a0e36165018262644b (create_context_parallel_ctx around forward and
// backward, cp_buffers [input_ids, labels, model.freqs_cis], no_restore {input_ids, labels}, the loss on
// the local logits) and torch/distributed/tensor/experimental/_attention.py (the cases name torch@1963fc8,
// 2024-12-23, which could not be fetched; read at pytorch/pytorch@0123248a and an early-2025 copy: the
// ring forward, backward and allgather rotater are the same in both). What each GPU does:
// - context_parallel() shards every buffer: chunk(2 cp) and cat of chunks r and 2cp-1-r (head-tail load
//   balance, equal shares, so no rank holds more), copies the shard into the buffer in place
//   (resize_ keeps the storage) and clone()s freqs_cis to restore it after the step; the generator keeps
//   the shards list and the last clone until it exits.
// - Every tensor of the model has sequence_length / cp rows; the loss sees b x s/cp tokens and the full
//   vocabulary. Autograd keeps what SDPA keeps without CP (local Q, K, V, the merged output and lse).
// - _templated_ring_attention (forward, and again in the recompute of full AC): key/value.contiguous(),
//   torch.cat of the local K and V, ft_c.all_gather_tensor of it (one all-gather: the whole sequence's K
//   and V with the heads SDPA sees, 16-bit) held by the rotater, a local of the call, until the
//   attention returns. Each step's block output and lse go through _SDPAMerger with convert_to_f32:
//   out.to(float32), then out - sigmoid(block_lse - lse) * (out - block_out) (two fp32 temporaries at a
//   time). Widest point: a full-size merge (step 1 on a rank >= 1), when the local copies and the cat of
//   step 0 are gone.
// - _templated_ring_attention_backward: grad_query/key/value = zeros_like(..., dtype=float32) (local
//   size), a new allgather rotater (the whole K and V gathered again), the dK/dV ring by all-to-all
//   (torch.cat of the fp32 dK and dV sent, ft_c.permute_tensor's output received). Widest point: step 0,
//   with the contiguous copies, the cat being gathered, the op's 16-bit dQ, dK, dV and the first dK/dV
//   exchange all alive.
// The buffers are transients of one layer; the step timeline adds them while a layer's attention runs.
// They are the eager code's: with run.compile the ring is traced into the block's graph and inductor
// may fuse the merge's pointwise chain (no fp32 temporaries), so the forward figure is an upper bound.
void ringAttentionBuffers(ActivationSet& set, const ModelSpec& m, const RunSpec& r, const Dims& x,
    const StageSlice& slice, bool explain, SavedTensorSizes* sizes)
{
    const Count cp = r.parallelism.contextParallel;
    if (cp <= 1 || r.mode != Mode::Training)
        return;
    const Count b = x.b, s = x.s, a = x.a, d = x.d, full = checkedMul(s, cp);
    const Count kv = x.repeatKv && m.numKvHeads != m.numHeads ? a : x.g; // heads of K and V handed to SDPA
    const double p = x.p;
    if (slice.first) {
        Collector step { set, ActivationScope::Embedding, 1, explain, 0, 1, sizes ? &sizes->saved : nullptr };
        if (m.position == PositionKind::Rope) {
            step.add("context_parallel: freqs_cis cloned to restore it after the step (complex64, whole sequence)",
                "context parallel", { full, d / 2 }, 8);
            step.add("context_parallel: load-balanced shard of freqs_cis and its clone (complex64)", "context parallel",
                { 2, s, d / 2 }, 8);
        }
        step.add("context_parallel: load-balanced shards of input ids and labels (int64)", "context parallel",
            { 2, b, s }, 8);
    }
    ActivationSet fwd;
    Collector f { fwd, ActivationScope::Layer, 1, explain };
    f.add("ring attention: K and V all-gathered over the whole sequence (16-bit, allgather rotater)",
        "ring attention forward", { b, 2 * kv, full, d }, p);
    f.add("ring attention: merged output accumulator (fp32, _SDPAMerger)", "ring attention forward", { b, a, s, d }, 4);
    f.add("ring attention: this step's block output (16-bit)", "ring attention forward", { b, a, s, d }, p);
    f.add("ring attention: block output upcast to fp32", "ring attention forward", { b, a, s, d }, 4);
    f.add("ring attention: merge temporaries out - sigmoid(lse_i - lse) * (out - out_i) (two fp32)",
        "ring attention forward", { b, 2 * a, s, d }, 4);
    f.add("ring attention: merged and block log-sum-exp (fp32)", "ring attention forward", { b, 2 * a, s }, 4);
    ActivationSet bwd;
    Collector g { bwd, ActivationScope::Layer, 1, explain };
    g.add("ring backward: K and V all-gathered again (16-bit)", "ring attention backward", { b, 2 * kv, full, d }, p);
    g.add("ring backward: contiguous copies of the local K and V (16-bit)", "ring attention backward",
        { b, 2 * kv, s, d }, p);
    g.add("ring backward: local K and V concatenated for the all-gather (16-bit)", "ring attention backward",
        { b, 2 * kv, s, d }, p);
    g.add("ring backward: dQ accumulator (fp32)", "ring attention backward", { b, a, s, d }, 4);
    g.add("ring backward: dK and dV accumulators (fp32)", "ring attention backward", { b, 2 * kv, s, d }, 4);
    g.add("ring backward: the flash backward's dQ (16-bit)", "ring attention backward", { b, a, s, d }, p);
    g.add("ring backward: the flash backward's dK and dV (16-bit)", "ring attention backward", { b, 2 * kv, s, d }, p);
    g.add("ring backward: dK and dV concatenated to send (fp32)", "ring attention backward", { b, 2 * kv, s, d }, 4);
    g.add("ring backward: dK and dV received by all-to-all (fp32)", "ring attention backward", { b, 2 * kv, s, d }, 4);
    set.ringForwardBytes = fwd.bytes;
    set.ringBackwardBytes = bwd.bytes;
    if (sizes) { // the allocator replay allocates them one by one, in this order, while the layer's attention runs
        for (const ActivationTensor& t : fwd.tensors)
            sizes->ringForward.push_back(t.bytesEach);
        for (const ActivationTensor& t : bwd.tensors)
            sizes->ringBackward.push_back(t.bytesEach);
    }
    if (explain) {
        set.ringBuffers = std::move(fwd.tensors);
        set.ringBuffers.insert(set.ringBuffers.end(), bwd.tensors.begin(), bwd.tensors.end());
    }
}

/// DoRA's weight norm (PEFT 0.18.0 DoraLinearLayer.forward and get_weight_norm, tuners/lora/dora.py@77daa8d3),
/// computed in every forward of each adapted linear and freed when it returns: x_eye = torch.eye(in) in x's type
/// (under autocast lora_A casts it to 16 bits), lora_A(x_eye), lora_weight = lora_B(...) (B A whole, in x out),
/// the weight in x's type (a copy unless it is the 16-bit parameter; a 4-bit weight is dequantized), then
/// s * lora_weight and weight + s * lora_weight, whole. The widest adapted linear's, in allocation order: the step
/// timeline adds it while a layer's forward (and its recompute) runs. With dropout the weight's copy is kept for
/// backward (doraSaved) and is counted there instead.
void doraTransients(ActivationSet& set, const ModelSpec& m, const RunSpec& r, const Dims& x, const StageSlice& slice,
    bool explain, SavedTensorSizes* sizes)
{
    if (!r.finetune.dora || r.mode != Mode::Training || r.finetune.method == FinetuneMethod::Full
        || slice.layers() == 0)
        return;
    const double xb = x.loraInput > 0 ? 4 : x.p;
    const bool qlora = r.finetune.method == FinetuneMethod::Qlora;
    ActivationSet widest;
    for (const ParamTensor& t : parameterTensors(m)) {
        if (!t.linear || t.group == ParamGroup::Head || t.group == ParamGroup::Embedding
            || !isTarget(r.finetune, t.module) || t.copies < m.numLayers)
            continue;
        ActivationSet one;
        Collector c { one, ActivationScope::Layer, 1, explain || sizes != nullptr };
        const std::string prefix = "DoRA " + std::string(t.module);
        const Count in = t.rows, out = t.cols;
        c.add(prefix, ": x_eye = torch.eye(in_features) in x's type", "dora forward", { in, in }, xb);
        if (x.autocast && xb != x.p)
            c.add(prefix, ": x_eye cast by autocast for lora_A", "dora forward", { in, in }, x.p);
        c.add(prefix, ": lora_A(x_eye)", "dora forward", { in, r.finetune.rank }, x.loraAct);
        c.add(prefix, ": lora_weight = lora_B(lora_A(x_eye)), B A whole", "dora forward", { in, out }, x.loraAct);
        // The weight in x's type lives until forward returns; with dropout it is kept for backward (doraSaved)
        // unless autocast's 16-bit cast of it is what F.linear keeps.
        if ((qlora || xb != x.p) && (r.finetune.dropout == 0 || (x.autocast && xb != x.p)))
            c.add(prefix, qlora ? ": weight dequantized into x's type" : ": weight copied into x's type",
                "dora forward", { out, in }, xb);
        c.add(prefix, ": s x lora_weight", "dora forward", { out, in }, x.loraAct);
        c.add(prefix, ": weight + s x lora_weight (its norm per output is n)", "dora forward", { out, in }, xb);
        if (one.bytes > widest.bytes)
            widest = std::move(one);
    }
    set.doraForwardBytes = widest.bytes;
    if (sizes)
        for (const ActivationTensor& t : widest.tensors)
            sizes->doraForward.push_back(t.bytesEach);
    if (explain)
        set.doraTransients = std::move(widest.tensors);
}

/// A loop that keeps the 16-bit logits referenced through backward (lit-gpt finetune/lora.py@8641822:
/// `logits` lives until the next iteration) turns them from a forward transient into a held buffer.
/// Under PyTorch's pipelining (torchtitan) the logits are the last stage's output, which output_chunks keeps
/// (pipeline_schedule.cpp pipelineBuffers counts them): no forward transient either.
bool logitsAreStageOutput(const RunSpec& r)
{
    return r.framework == Framework::Torchtitan && r.parallelism.pipelineParallel > 1 && r.mode == Mode::Training;
}
void holdLogits(ActivationSet& set, const FrameworkProfile& f, const RunSpec& r, Bytes logits16)
{
    if (logitsAreStageOutput(r)) {
        set.lossForwardBytes -= std::min(set.lossForwardBytes, logits16);
        set.lossForwardParts[0] -= std::min(set.lossForwardParts[0], logits16);
        return;
    }
    if (!f.logitsHeld)
        return;
    set.lossHeldBytes = logits16;
    set.lossForwardBytes -= std::min(set.lossForwardBytes, logits16);
    set.lossForwardParts[0] -= std::min(set.lossForwardParts[0], logits16);
}

/// The loss's saved tensors (into `head`) and its transients (into `set`), as lossSetup() resolves it.
void lossTensors(Collector& head, ActivationSet& set, const ModelSpec& m, const RunSpec& r, const Dims& x, Count vocab)
{
    const FrameworkProfile& f = frameworkProfile(r.framework);
    const LossSetup loss = lossSetup(r, vocab, m.hiddenSize);
    set.lossFramework = f.version;
    const Count tokens = checkedMul(x.b, x.s);
    const Bytes p = static_cast<Bytes>(x.p);
    const Bytes logits16 = checkedMul(tokens, vocab, p);
    // The LM head keeps its input (chunks read views of it), except Liger's fused function,
    // which saves only the gradients it computed in forward.
    // A frozen LM head (LoRA never targets it) needs no input for a weight gradient.
    const bool headFrozen = x.frozenKeepsNoInput && r.finetune.method != FinetuneMethod::Full
        && !(x.nf4Keeps && r.finetune.quantizeLmHead); // an NF4 head keeps its input
    if (loss.kind != LossKind::Fused && !headFrozen)
        head.add("LM head input (final norm output)", "head", { x.b, x.gs, x.h },
            x.fp8Torchao ? x.p : x.pg); // torchtitan's float8 filter leaves "output" in 16-bit
    // After prepare_model_for_kbit_training the LM head's weight is fp32 and frozen: autocast casts it to 16 bits in
    // every forward (its weight cache holds only leaves that require grad) and the matmul keeps that cast for the
    // input's gradient until the head's backward.
    if (x.embeddingFp32 && !r.finetune.quantizeLmHead && loss.kind != LossKind::Fused)
        head.add("LM head weight as autocast casts it from fp32 (kept for the input's gradient)", "head",
            { vocab, x.h }, x.p);
    if (x.compiledLoss && loss.kind == LossKind::Upcast && f.lossUpcastInGraph) {
        // torchtitan/components/loss.py@e7c0cae934df: torch.compile(cross_entropy(pred.flatten(0, 1).float(),
        // labels)) on the model's 16-bit logits; train.py@e7c0cae `del pred` before backward. By kCompileRule
        // the upcast is pointwise and the log-softmax two per-row reductions: the graph keeps its 16-bit input
        // and the row max and sum of exponentials, and its backward writes the 16-bit gradient of the logits
        // (no fp32 copy, log-softmax or fp32 gradient is materialized).
        // Under PyTorch's pipelining those logits are the last stage's output, which output_chunks keeps longer
        // (pipeline_schedule.cpp pipelineBuffers counts them there): the same storage, counted once.
        if (!logitsAreStageOutput(r))
            head.add("16-bit logits (input of the compiled loss, kept for backward)", "loss", { x.b, x.s, vocab }, x.p);
        head.add(
            "row max and sum of exponentials (fp32, the compiled log-softmax's reductions)", "loss", { tokens, 2 }, 4);
        head.drop({}, "fp32 copy of the logits", "loss", { x.b, x.s, vocab }, 4);
        head.drop({}, "log-softmax of the logits (fp32)", "loss", { x.b, x.s, vocab }, 4);
        set.lossForwardBytes = 0;
        set.lossForwardParts = {};
        set.lossBackwardBytes = logits16;
        set.lossForwardWhat = "loss: the compiled cross-entropy reduces the 16-bit logits it keeps";
        set.lossBackwardWhat = "loss backward: one 16-bit gradient of the logits (fused)";
        set.lossSource = "compiled cross_entropy(pred.float()) on the 16-bit logits (torchtitan "
                         "components/loss.py@e7c0cae): its input and two reductions per token";
        return;
    }
    if (x.compiledLoss && loss.kind == LossKind::Upcast) {
        // torchtune compile_loss (training/_compile.py@1814feb): nn.CrossEntropyLoss compiled whole on
        // the model's fp32 logits (TransformerDecoder returns output(h).float() eagerly). By kCompileRule
        // the log-softmax is pointwise on the logits apart from two per-row reductions: the graph keeps
        // its input and the row max and sum of exponentials, and its backward writes one fp32 gradient.
        head.add(
            "fp32 logits (input of the compiled cross-entropy, kept for backward)", "loss", { x.b, x.s, vocab }, 4);
        head.add(
            "row max and sum of exponentials (fp32, the compiled log-softmax's reductions)", "loss", { tokens, 2 }, 4);
        head.drop({}, "log-softmax of the logits (fp32)", "loss", { x.b, x.s, vocab }, 4);
        set.lossForwardBytes = logits16; // the 16-bit logits while .float() copies them
        set.lossBackwardBytes = checkedMul(tokens, vocab, 4);
        set.lossForwardWhat = "loss: 16-bit logits beside their fp32 copy, which the compiled loss keeps";
        set.lossBackwardWhat = "loss backward: one fp32 gradient of the logits (fused)";
        set.lossSource = "compiled nn.CrossEntropyLoss on the model's fp32 logits (torchtune compile_loss, "
                         "training/_compile.py@1814feb): its input and two reductions per token, no log-softmax";
        return;
    }
    if (loss.kind == LossKind::LossParallel && f.lossParallelDtensor) {
        // torch/distributed/tensor/parallel/loss.py@02eef6b _log_softmax on the fp32 shard (the loop's
        // .float() copy): shifted = x - all_reduce(max); sum(exp(shifted)); result = shifted - log(sum);
        // result is saved. At its widest the 16-bit logits, their fp32 copy, `shifted` and exp(shifted)
        // (or `result`) are alive. Backward (_nll_loss_and_log_softmax_backward):
        // (zeros_like(x) scattered + exp(x)) * grad: three fp32 tensors beside the saved result.
        head.add("log-softmax of the vocabulary shard (fp32)", "loss", { x.b, x.s, vocab }, 4);
        head.add("cross-entropy total weight (fp32 scalar)", "loss", { 1 }, 4);
        set.lossForwardBytes = checkedMul(tokens, vocab, p + 8);
        set.lossBackwardBytes = checkedMul(tokens, vocab, 12);
        holdLogits(set, f, r, logits16);
        set.lossForwardWhat = "loss: logits, their fp32 copy and the shifted logits beside the saved log-softmax";
        set.lossBackwardWhat = "loss backward: zeros scattered, exp(log-softmax) and their product (fp32)";
        set.lossSource = "PyTorch loss_parallel (distributed/tensor/parallel/loss.py@02eef6b): each GPU upcasts its "
                         "vocabulary shard, subtracts the all-reduced max, keeps the fp32 log-softmax";
        return;
    }
    switch (loss.kind) {
    case LossKind::LossParallel: // DTensor's loss_parallel returned above: this is Megatron-LM's
        // Megatron-LM's vocab_parallel_cross_entropy (tensor_parallel/cross_entropy.py@0d7e02b): the bf16 logits'
        // .float() copy becomes the softmax in place (-= max, exp(out=), div_) and is saved with the target mask and
        // the masked targets; backward turns it into the gradient in place and autograd casts that to bf16.
        head.add("softmax of the vocabulary shard (fp32: the .float() copy, normalized in place)", "loss",
            { x.b, x.s, vocab }, 4);
        head.add("target mask (bool)", "loss", { tokens }, 1);
        head.add("masked targets (int64)", "loss", { tokens }, 8);
        set.lossForwardBytes = logits16; // the bf16 logits beside their fp32 copy (the saved softmax)
        set.lossForwardParts = { logits16, 0 };
        set.lossBackwardBytes = logits16; // the gradient, computed in place in fp32, cast to bf16
        holdLogits(set, f, r, logits16);
        set.lossForwardWhat = "loss: bf16 logits beside their fp32 copy, which becomes the saved softmax";
        set.lossBackwardWhat = "loss backward: the fp32 gradient written into the softmax, cast to bf16";
        set.lossSource = "Megatron-LM vocab_parallel_cross_entropy (tensor_parallel/cross_entropy.py@0d7e02b): each "
                         "GPU upcasts its vocabulary shard and normalizes it in place";
        return;
    case LossKind::Upcast:
    case LossKind::HfShift:
        head.add("log-softmax of the logits (fp32)", "loss", { x.b, x.s, vocab }, 4);
        head.add("cross-entropy total weight (fp32 scalar)", "loss", { 1 }, 4);
        // The logits and their fp32 copy exist while log_softmax runs; backward makes two fp32
        // gradients of the logits. The loop frees the logits before backward (torchtitan train.py@9dec370:
        // `del pred`; HF ForCausalLMLoss's upcast is a local of the loss).
        set.lossForwardBytes = checkedMul(tokens, vocab, p + 4);
        set.lossForwardParts = { logits16, checkedMul(tokens, vocab, 4) };
        set.lossBackwardBytes = checkedMul(tokens, vocab, 8);
        holdLogits(set, f, r, logits16);
        // TRL's SFTTrainer (sft_trainer.py@1cf8d56c compute_loss): after the loss, under no_grad,
        // outputs.logits[..., :-1, :].contiguous() and its argmax for the token accuracy. Under Trainer's autocast
        // (whatever the parameters' type) the output logits are fp32 (accelerate convert_outputs_to_fp32), and so is
        // the copy; without autocast 16-bit logits and their copy (2 x p) stay under the loss's own p + 4.
        if (r.sftTokenAccuracy && loss.kind == LossKind::HfShift) {
            const Bytes logits32 = checkedMul(tokens, vocab, 4), shifted32 = checkedMul(tokens - x.b, vocab, 4);
            set.lossForwardBytes = checkedAdd(checkedAdd(logits32, shifted32), checkedMul(tokens - x.b, 8));
            set.lossForwardParts = { logits32, shifted32 };
            set.lossForwardWhat = "loss: SFTTrainer's token accuracy: the fp32 logits (accelerate's output "
                                  "conversion) and their shifted copy beside the saved log-softmax";
        }
        set.lossSource = loss.kind == LossKind::HfShift
            ? "HF Transformers ForCausalLMLoss (loss/loss_utils.py@8cb5963c, v4.57.1): logits.float(), labels padded "
              "and shifted, cross_entropy"
            : "logits.float() then cross_entropy: the fp32 log-softmax is saved";
        return;
    case LossKind::Native: {
        // cross_entropy on the logits as the model returns them, e.g. lit_gpt/utils.py@8641822
        // chunked_cross_entropy with chunk_size=0 (`F.cross_entropy(logits, targets)`, no upcast): 16-bit, or fp32
        // where Fabric converted them (loss.logitsFp32: the 16-bit logits are gone before the log-softmax exists).
        const double lp = loss.logitsFp32 ? 4 : x.p;
        const Bytes logits = checkedMul(tokens, vocab, static_cast<Bytes>(lp));
        head.add(loss.logitsFp32 ? "log-softmax of the logits (fp32, as Fabric returned them)"
                                 : "log-softmax of the logits (16-bit)",
            "loss", { x.b, x.s, vocab }, lp);
        head.add("cross-entropy total weight (scalar)", "loss", { 1 }, lp);
        set.lossForwardBytes = logits;
        set.lossForwardParts = { logits, 0 };
        set.lossBackwardBytes = checkedMul(logits, 2);
        holdLogits(set, f, r, logits);
        set.lossForwardWhat = loss.logitsFp32 ? "loss: fp32 logits beside their saved log-softmax"
                                              : "loss: 16-bit logits beside their saved log-softmax";
        set.lossBackwardWhat = loss.logitsFp32 ? "loss backward: two fp32 gradients of the logits"
                                               : "loss backward: two 16-bit gradients of the logits";
        set.lossSource = loss.logitsFp32
            ? "cross_entropy on the logits Lightning Fabric returned in fp32 (convert_output@71aed75), no further "
              "upcast (lit-gpt chunked_cross_entropy(chunk_size=0)@8641822)"
            : "cross_entropy on the 16-bit logits, no upcast (as lit-gpt chunked_cross_entropy(chunk_size=0)@8641822)";
        return;
    }
    case LossKind::Chunked: {
        // LitGPT drops the last position of each sequence (`logits[-1][..., :-1, :]`).
        const Count rows = f.shiftLogits ? tokens - x.b : tokens;
        // One cross-entropy per chunk that still has positions after LitGPT's shift (an empty
        // last chunk keeps no total weight).
        const Count positions = std::max<Count>(1, loss.chunkRows / std::max<Count>(1, x.b));
        const Count chunks = ceilDiv(x.s - (f.shiftLogits ? 1 : 0), positions);
        const double lsBytes = loss.chunkUpcast || loss.logitsFp32 ? 4 : x.p;
        // torchtune compile_loss compiles compute_cross_entropy (one chunk's .float() and
        // cross_entropy): by kCompileRule the graph keeps its 16-bit input chunk and two fp32
        // reductions per row; the upcast is fused into them and never materialized.
        const bool compiledChunks = x.compiledLoss && loss.chunkUpcast;
        if (compiledChunks) {
            head.add("16-bit logits of every chunk (inputs of the compiled cross-entropy, kept for backward)", "loss",
                { rows, vocab }, x.p);
            head.add("row max and sum of exponentials of every chunk (fp32)", "loss", { rows, 2 }, 4);
            head.drop({}, "log-softmax of every chunk (fp32, all kept for backward)", "loss", { rows, vocab }, 4);
        } else {
            head.add(lsBytes == 4 ? "log-softmax of every chunk (fp32, all kept for backward)"
                                  : "log-softmax of every chunk (16-bit, all kept for backward)",
                "loss", { rows, vocab }, lsBytes);
        }
        // With b > 1 a chunk of the (b, s) targets is not contiguous: reshape(-1) copies it and
        // nll_loss keeps the copy (torchtune labels.chunk, LitGPT targets.split; measured in
        // tests/validation). torchtune then divides by the int64 count of tokens, which div keeps.
        if (x.b > 1)
            head.add("targets of every chunk (int64 copies)", "loss", { rows }, 8);
        if (loss.chunkUpcast)
            head.add("token count (int64 scalar, total_loss / total_elements)", "loss", { 1 }, 8);
        Collector weights { set, ActivationScope::Head, chunks, head.detail, 0, 1, head.sizes };
        if (!compiledChunks) // reduction="sum" decomposes without nll_loss's total weight
            weights.add("cross-entropy total weight of a chunk (scalar)", "loss", { 1 }, lsBytes);
        // Every chunk's 16-bit logits exist at once (torchtune TransformerDecoder.chunked_output,
        // LitGPT GPT.forward(lm_head_chunk_size)); torchtune upcasts one chunk at a time.
        const Bytes upcastChunk = loss.chunkUpcast ? checkedMul(loss.chunkRows, vocab, 4) : 0;
        const Bytes gradBytes = loss.chunkUpcast || loss.logitsFp32 ? 4 : p;
        set.lossBackwardBytes = checkedMul(loss.chunkRows, vocab, 2 * gradBytes);
        // Fabric's fp32 copies of every chunk replace the 16-bit ones before any log-softmax exists, so the
        // saved log-softmaxes (4 B) outweigh the 16-bit chunks that met the copies.
        const Bytes logits = loss.logitsFp32 ? checkedMul(tokens, vocab, 4) : logits16;
        // torchtune _loss_step@1814feb: `del logits` before backward.
        set.lossForwardBytes = checkedAdd(logits, upcastChunk);
        set.lossForwardParts = { logits, upcastChunk };
        holdLogits(set, f, r, logits);
        if (compiledChunks) {
            // The chunks are now saved by autograd (counted above), the fp32 math fused: one chunk's
            // 16-bit gradient is all backward writes.
            set.lossForwardBytes = 0;
            set.lossBackwardBytes = checkedMul(loss.chunkRows, vocab, p);
            set.lossForwardWhat = "loss: the compiled cross-entropy of each chunk (its inputs are kept)";
            set.lossBackwardWhat = "loss backward: one chunk's 16-bit gradient (fused upcast and softmax)";
            set.lossSource = "chunked output, each chunk's upcast + cross-entropy compiled (torchtune "
                             "CEWithChunkedOutputLoss + compile_loss@1814feb)";
            return;
        }
        set.lossForwardWhat = loss.chunkUpcast
            ? "loss: every chunk's 16-bit logits, one chunk's fp32 copy, the saved log-softmaxes"
            : loss.logitsFp32 ? "loss: every chunk's logits in fp32 (Fabric's copies) beside their saved log-softmaxes"
                              : "loss: every chunk's 16-bit logits beside their saved log-softmaxes";
        set.lossBackwardWhat = gradBytes == 4 ? "loss backward: two fp32 gradients of one chunk's logits"
                                              : "loss backward: two 16-bit gradients of one chunk's logits";
        set.lossSource = loss.chunkUpcast
            ? "chunked output, each chunk upcast to fp32 (torchtune CEWithChunkedOutputLoss@1814feb)"
            : loss.logitsFp32
            ? "chunked LM head, every chunk returned in fp32 by Lightning Fabric (convert_output@71aed75) and kept "
              "through backward; cross-entropy per chunk (lit-gpt chunked_cross_entropy@8641822)"
            : "chunked LM head and cross-entropy on 16-bit chunks, logits kept through backward (lit-gpt "
              "chunked_cross_entropy@8641822)";
        return;
    }
    case LossKind::Fused: {
        // Liger fused_linear_cross_entropy.py@e11c2d6: forward computes the gradients of the LM
        // head input and weight chunk by chunk and saves only those (ctx.save_for_backward).
        head.add("gradient of the LM head input (computed in forward)", "loss", { tokens, x.h }, x.p);
        head.add("gradient of the LM head weight (computed in forward)", "loss", { vocab, x.h }, x.p);
        // One chunk's logits, their fp32 copy (then cast back) and the fp32 per-token loss.
        set.lossForwardBytes = checkedAdd(checkedMul(loss.chunkRows, vocab, p + 4), checkedMul(tokens, 4));
        set.lossBackwardBytes = 0;
        set.lossForwardWhat = "loss: one chunk's logits and fp32 copy (fused linear cross-entropy)";
        set.lossBackwardWhat = "loss backward: the gradients computed in forward are handed on";
        set.lossSource = "Liger fused linear cross-entropy (ops/fused_linear_cross_entropy.py@e11c2d6): no full logits";
        return;
    }
    }
}
/// torchtune's OffloadActivations (training/_activation_offloading.py@1814feb, use_streams=True,
/// max_fwd_stash_size=5, min_offload_size=1024 B) around the model's forward: every saved tensor of
/// at least 1 KiB is copied to pinned host memory and its GPU copy dropped once five newer ones
/// have been saved; in backward a tensor comes back when its node runs and is dropped when the next
/// node starts. With whole-layer checkpointing (required) a layer saves its input only, so the GPU
/// keeps at most two layers' inputs (the fwd stash at the loss holds the LM head's input chunks,
/// which the head still counts; in backward the current and the previous node's). The loss runs
/// outside the context: its tensors stay. Offloaded: the embedding's, the layers' beyond two, and
/// the final norm's.
void offloadActivations(ActivationSet& set, const LayerTensors& layer, const StageSlice& slice)
{
    const Bytes headBytes = set.headBytes, embeddingBytes = set.embeddingBytes;
    const Bytes layerBytes = set.bytes - headBytes - embeddingBytes;
    const Count layers = std::max<Count>(1, slice.layers());
    const Bytes keptLayers = layerBytes / layers * std::min<Count>(2, slice.layers());
    Bytes finalNorm = 0;
    if (slice.last) {
        ActivationSet scratch;
        Collector c { scratch, ActivationScope::Head, 1, false };
        layer.norm(c, "final norm");
        finalNorm = scratch.bytes;
    }
    set.offloadedBytes = embeddingBytes + (layerBytes - keptLayers) + finalNorm;
    set.bytes -= set.offloadedBytes;
    set.embeddingBytes = 0;
    set.headBytes -= finalNorm;
}

} // namespace

ActivationSet trainingActivations(
    const ModelSpec& m, const RunSpec& r, const StageSlice& slice, bool explain, SavedTensorSizes* sizes)
{
    ActivationSet set;
    std::vector<SavedTensorSize>* saved = sizes ? &sizes->saved : nullptr;
    if (explain)
        set.tensors.reserve(64);
    const Dims x = makeDims(m, r, r.microBatchSize, r.localSequence()); // s / cp rows with context parallelism
    if (x.compiled)
        set.compileScope = frameworkProfile(r.framework).compileScope;
    const bool lora = r.finetune.method != FinetuneMethod::Full;
    const auto kind = r.checkpointing.kind;
    const bool wholeLayers = kind == Checkpointing::Kind::Full || kind == Checkpointing::Kind::Every;
    // {"layers": n}: the first n layers of the stage keep their input only, the others everything (Megatron-LM
    // transformer_block.py@0d7e02b _checkpointed_forward, recompute_method "block").
    const Count checkpointed
        = kind == Checkpointing::Kind::Layers ? r.checkpointing.checkpointedLayers(slice.layers()) : 0;
    const Count vocab = ceilDiv(m.vocabSize, x.t);

    Collector outside { set, ActivationScope::Embedding, 1, explain, 0, 1, saved };
    // A frozen embedding (LoRA) keeps no ids; the loss keeps them as its targets unless it
    // copies them (chunks of a (b > 1, s) batch; measured with lit-gpt, tests/validation/litgpt_block.py).
    const bool targetsCopied = lossSetup(r, vocab, m.hiddenSize).kind == LossKind::Chunked && x.b > 1;
    const bool idsKept = !(lora && x.frozenKeepsNoInput && (!slice.last || targetsCopied));
    if (slice.first && idsKept) {
        // Embedding backward keeps the token ids (the loss keeps the same storage as targets).
        Collector ids { set, ActivationScope::Embedding, slice.embeddingMicroBatches, explain, 0, 1, saved };
        ids.add("token ids (int64)", "embedding", { x.b, x.s }, 8);
        if (!lora) {
            if (m.position == PositionKind::Learned)
                ids.add("position ids (int64)", "embedding", { x.s }, 8);
            if (x.dropout)
                ids.add("embedding dropout mask (bool)", "embedding", { x.b, x.hs, x.h }, 1);
        }
    }
    // RoPE tables are computed once per forward and read by every layer's multiplications,
    // unless whole layers are checkpointed (then they are rebuilt in backward).
    if (m.position == PositionKind::Rope && m.attentionType == AttentionType::Mha && !wholeLayers && slice.layers() > 0
        && checkpointed < slice.layers()) {
        const double table = x.embeddingFp32 ? 4 : x.p; // cos.to(hidden_states.dtype), the embedding's output
        outside.add("RoPE cos table", "embedding", { x.s, m.headDim }, table);
        outside.add("RoPE sin table", "embedding", { x.s, m.headDim }, table);
    }

    LayerTensors layer(m, r, x);
    // (Under FSDP1 flat parameters with adapters the first block's weights need gradients: kept as a full block's.)
    const bool frozenFirst = lora && slice.first && !x.baseNeedsGrad;
    Count cursor = 0; // layers are collected in order: dense, then MoE (the allocator replay places them)
    auto layerSet = [&](bool moe, Count count, bool firstFrozen) {
        Collector c { set, ActivationScope::Layer, count, explain, cursor, 1, saved };
        layer.collect(c, moe, firstFrozen);
        cursor += count;
    };
    auto oneLayer = [&](bool moe, std::vector<SavedTensorSize>* out = nullptr) {
        ActivationSet tmp;
        Collector c { tmp, ActivationScope::Layer, 1, out != nullptr, 0, 1, out };
        layer.collect(c, moe, false);
        return tmp;
    };

    // The layer backward rebuilds at its worst: an MoE layer where one is checkpointed and it keeps more than a dense
    // one; with `sizes`, its tensors become the replay's recompute list.
    auto rebuiltLayer = [&](bool moeRebuilt) {
        ActivationSet dense = oneLayer(false, sizes ? &sizes->recompute : nullptr);
        if (!moeRebuilt)
            return dense;
        std::vector<SavedTensorSize> moeSizes;
        ActivationSet moe = oneLayer(true, sizes ? &moeSizes : nullptr);
        if (moe.bytes <= dense.bytes)
            return dense;
        if (sizes)
            sizes->recompute = std::move(moeSizes);
        return moe;
    };

    if (kind == Checkpointing::Kind::SelectiveOp) {
        selectiveOpLayers(set, x, slice, oneLayer(false), explain, saved);
    } else if (checkpointed > 0) {
        // The first `checkpointed` layers of the stage (dense or MoE where the model has them) keep their input; the
        // rest keep everything, as without checkpointing; backward rebuilds one checkpointed layer at a time.
        const Bytes before = set.bytes;
        // With fp32 norms but a 16-bit embedding (TRL) the first layer's input is the embedding's 16-bit output.
        const Count first16 = x.kbitFp32 && !x.embeddingFp32 && slice.first ? 1 : 0;
        if (first16 > 0) {
            Collector c0 { set, ActivationScope::Layer, 1, explain, 0, 1, saved };
            c0.add(
                "first layer input (checkpoint; the embedding's 16-bit output)", "checkpoint", { x.b, x.hs, x.h }, x.p);
        }
        Collector c { set, ActivationScope::Layer, checkpointed - first16, explain, first16, 1, saved };
        c.add("layer input (checkpoint, first layers of the stage)", "checkpoint", { x.b, x.hs, x.h }, x.residual);
        // The timeline's per-layer share of these checkpoints (an even share; the remainder joins the other layers).
        set.checkpointInputBytes = (set.bytes - before) / checkpointed;
        const Count moeCkpt = m.moeLayersIn(slice.firstLayer, slice.firstLayer + checkpointed);
        const Count denseCkpt = checkpointed - moeCkpt;
        const ActivationSet worst = rebuiltLayer(moeCkpt > 0);
        set.recomputeBytes = worst.bytes;
        cursor = checkpointed;
        layerSet(false, slice.denseLayers - denseCkpt, false);
        layerSet(true, slice.moeLayers - moeCkpt, false);
        set.largestLayerTensorBytes = std::max(set.largestLayerTensorBytes, worst.largestLayerTensorBytes);
    } else if (wholeLayers) {
        // Each checkpointed segment keeps only its input; one segment is rebuilt at a time.
        const Count segment = kind == Checkpointing::Kind::Full ? 1 : std::max<Count>(1, r.checkpointing.every);
        const Count segments = ceilDiv(slice.layers(), segment);
        // With fp32 norms but a 16-bit embedding (TRL) the first segment's input is still 16-bit.
        const Count first16 = x.kbitFp32 && !x.embeddingFp32 && slice.first && segments > 0 ? 1 : 0;
        const char* input = segment > 1 ? "segment input (checkpoint every k layers)"
            : x.kbitFp32                ? "layer input (checkpoint; fp32 residual stream)"
                                        : "layer input (checkpoint)";
        if (first16 > 0) {
            Collector c0 { set, ActivationScope::Layer, 1, explain, 0, segment, saved };
            c0.add(
                "first layer input (checkpoint; the embedding's 16-bit output)", "checkpoint", { x.b, x.hs, x.h }, x.p);
        }
        Collector c { set, ActivationScope::Layer, segments - first16, explain, first16 * segment, segment, saved };
        c.add(input, "checkpoint", { x.b, x.hs, x.h }, x.residual);
        const Count rebuilt = std::min(segment, slice.layers());
        const ActivationSet worst = rebuiltLayer(slice.moeLayers > 0);
        set.recomputeBytes = checkedMul(worst.bytes, rebuilt);
        // Backward runs on the rebuilt layer: its tensors, not the checkpoint, set the working set.
        set.largestLayerTensorBytes = worst.largestLayerTensorBytes;
    } else {
        const Count dense = slice.denseLayers, moe = slice.moeLayers;
        // LoRA: the first layer's input comes from a frozen embedding and needs no grad.
        if (frozenFirst && dense > 0) {
            layerSet(false, 1, true);
            layerSet(false, dense - 1, false);
        } else {
            layerSet(false, dense, false);
        }
        if (frozenFirst && dense == 0 && moe > 0) {
            layerSet(true, 1, true);
            layerSet(true, moe - 1, false);
        } else {
            layerSet(true, moe, false);
        }
    }

    ringAttentionBuffers(set, m, r, x, slice, explain, sizes);
    doraTransients(set, m, r, x, slice, explain, sizes);
    if (slice.last) {
        Collector head { set, ActivationScope::Head, 1, explain, 0, 1, saved };
        layer.norm(head, "final norm");
        lossTensors(head, set, m, r, x, vocab);
    }
    if (r.activationOffloading && r.mode == Mode::Training)
        offloadActivations(set, layer, slice);
    return set;
}

ActivationSet inferenceActivations(const ModelSpec& m, const RunSpec& r, bool explain)
{
    ActivationSet set;
    const Dims x = makeDims(m, r, r.inference.batchSize, r.inference.contextLength);
    Collector c { set, ActivationScope::Layer, 1, explain };
    const Count a = x.a, g = x.g, ffn = m.moe.enabled() ? m.expertWidth() * m.moe.topK : m.ffnHiddenSize;
    // One layer's forward over the whole prompt (prefill) holds these at its widest point.
    c.add("residual stream", "layer", { x.b, x.s, x.h }, x.p);
    c.add("norm output", "layer", { x.b, x.s, x.h }, x.p);
    c.add("Q, K, V", "layer", { x.b, x.s, (a + 2 * g) * x.d }, x.p);
    c.add("attention output", "layer", { x.b, x.s, a * x.d }, x.p);
    c.add("MLP intermediates (gate, up, product)", "layer", { x.b, x.s, (m.gated() ? 3 : 2) * ceilDiv(ffn, x.t) }, x.p);
    Collector head { set, ActivationScope::Head, 1, explain };
    head.add("logits of the last position (fp32)", "head", { x.b, ceilDiv(m.vocabSize, x.t) }, 4);
    return set;
}

} // namespace vramlab
