// SPDX-License-Identifier: MIT
#include "vramlab/framework_profile.h"

#include "vramlab/precision_regime.h"

#include <array>
#include <bit>

namespace vramlab {

namespace {

FrameworkProfile plain()
{
    // The eager reference loop of tests/validation (torch_measure.py): logits.float(),
    // cross_entropy, torch.optim.AdamW with its default foreach implementation.
    FrameworkProfile p;
    p.version = "plain PyTorch (tests/validation/torch_measure.py)";
    return p;
}

FrameworkProfile torchtitan()
{
    FrameworkProfile p;
    p.framework = Framework::Torchtitan;
    p.version = "torchtitan@9dec370ad26b5f8e9a7333a0e36165018262644b";
    // train.py@9dec370: loss_fn = cross_entropy(pred.flatten(0, 1).float(), labels.flatten(0, 1));
    // `del pred` before loss.backward(). (Loss parallel under TP: run.loss "loss-parallel".)
    p.loss = LossKind::Upcast;
    // torchtitan/optimizer.py@9dec370: AdamW(..., fused=fused, foreach=not fused), --optimizer.fused default False.
    p.optimizerImpl = OptimizerImpl::Foreach;
    // torchtitan/models/llama/model.py@9dec370: RMSNorm._norm(x.float()).type_as(x) * weight;
    // repeat_kv (unsqueeze/expand/reshape: a copy) before F.scaled_dot_product_attention;
    // output.transpose(1, 2).contiguous() read by wo.
    p.rmsNormFp32 = true;
    p.repeatKv = true;
    p.attentionOutputCopy = true;
    // train.py@9dec370: create_context_parallel_ctx(cp_mesh, cp_buffers=[input_ids, labels, model.freqs_cis],
    // cp_no_restore_buffers={input_ids, labels}, rotate_method "allgather" by default) around forward and backward.
    p.contextParallel = true;
    // torchtitan/parallelisms/parallelize_llama.py@9dec370 apply_compile: each TransformerBlock
    // compiled on its own (after AC wrapping, before FSDP); train.py@9dec370 leaves
    // `loss_fn = torch.compile(loss_fn)` commented out, so the loss stays eager.
    p.compileScope = "each TransformerBlock compiled on its own (parallelize_llama.py apply_compile); the loss eager";
    // torchtitan/components/loss.py@e7c0cae934df (June 2025): build_cross_entropy_loss wraps
    // cross_entropy(pred.flatten(0, 1).float(), labels) in torch.compile when training.compile is set
    // (run.compile_loss true reproduces it; the pinned 9dec370 leaves the loss eager).
    p.lossUpcastInGraph = true;
    // parallelize_llama.py@9dec370 apply_tp: PrepareModuleInput(Shard(1) -> Replicate()) before
    // attention and feed_forward, and the output ColwiseParallel(input_layouts=Shard(1)): the
    // gathered full-sequence tensors are the matmuls' inputs, kept for their weight gradients.
    p.sequenceParallelKeepsGathered = true;
    // torchtitan/float8.py@9dec370 swaps nn.Linear for torchao's Float8Linear (filter: fqn != "output");
    // torchao/float8/float8_linear.py@eab345c2268a Float8Linear.forward casts input and (unsharded) weight
    // to fp8 each forward and manual_float8_matmul_with_args_in_float8 save_for_backward(input_fp8,
    // weight_fp8_t); force_recompute_fp8_weight_in_bwd defaults off (config.py).
    p.fp8Torchao = true;
    return p;
}

FrameworkProfile hfTransformers()
{
    FrameworkProfile p;
    p.framework = Framework::HfTransformers;
    p.version = "transformers v4.57.1 (8cb5963cc221), peft v0.18.0 (77daa8d3b7de), bitsandbytes 0.48.2";
    // src/transformers/loss/loss_utils.py@8cb5963c (unchanged since 4.49, #35646): ForCausalLMLoss upcasts
    // (logits.float()), pads and shifts the labels (not the logits) and calls cross_entropy on the fp32 view;
    // LlamaForCausalLM returns the lm_head's logits without .float() since 4.46 (#33902).
    p.loss = LossKind::HfShift;
    // models/llama/modeling_llama.py@8cb5963c LlamaRMSNorm: hidden_states.to(torch.float32), rsqrt, cast back
    // before the weight multiply (the fp32 copy is kept; the 16-bit normalized tensor only for a trained weight).
    p.rmsNormFp32 = true;
    // integrations/sdpa_attention.py@8cb5963c (attn_implementation "sdpa", the default): without a mask (no
    // padding, torch >= 2.5: use_gqa_in_sdpa) SDPA runs with enable_gqa=True, K and V unrepeated; its output
    // is copied by transpose(1, 2).contiguous() and that copy is o_proj's input.
    p.repeatKv = false;
    p.attentionOutputCopy = true;
    // peft tuners/tuners_utils.py@77daa8d3 cast_adapter_dtype (autocast_adapter_dtype=True): fp16/bf16 adapters
    // are upcast to fp32; tuners/lora/layer.py@77daa8d3 Linear.forward: x = self._cast_input_dtype(x,
    // lora_A.weight.dtype) (a copy where the dtypes differ), lora_B(lora_A(dropout(x))) with nn.Identity for
    // dropout 0. bitsandbytes autograd/_functions.py@b48ecdb3 MatMul4Bit keeps only the packed weight
    // (ctx.tensors = (None, B), since 0.43.2, commit 9e753741): nf4KeepsInputs stays false.
    p.loraAdaptersFp32 = true;
    // Under FSDP1 (accelerate v1.10.0's default fsdp_version 1) the Trainer runs every micro-batch but the last in
    // accelerator.no_sync (trainer.py@f4ef41c4, 4.52 era, :2547-2555), and for a PeftModel sets the plugin's
    // auto_wrap_policy to PEFT's fsdp_auto_wrap_policy (:5240-5247; peft utils/other.py@b34d8a2c: every leaf with a
    // trainable weight its own unit). accelerate's mixed precision is MixedPrecision(param_dtype=bf16).
    p.fsdpNoSync = true;
    p.fsdpWrap = FsdpWrap::Peft;
    return p;
}

FrameworkProfile torchtune()
{
    FrameworkProfile p;
    p.framework = Framework::Torchtune;
    p.version = "torchtune@1814feb17a9038e1a8053ce93111bd26774a8db6";
    // torchtune/modules/loss/ce_chunked_output_loss.py@1814feb: CEWithChunkedOutputLoss(num_output_chunks=8),
    // cross_entropy(logits.float(), ..., reduction="sum") per chunk; the shipped configs use it.
    // Without it the model upcasts: torchtune/modules/transformer.py@1814feb TransformerDecoder.forward
    // returns self.output(h).float() (run.loss "upcast").
    p.loss = LossKind::Chunked;
    p.lossChunks = 8;
    p.chunkUpcast = true;
    // torch.optim.AdamW as configured (foreach, PyTorch's default).
    p.optimizerImpl = OptimizerImpl::Foreach;
    // torchtune/modules/rms_norm.py@1814feb: x.float(), rsqrt, .type_as(x) * scale.
    p.rmsNormFp32 = true;
    // torchtune/modules/attention.py@1814feb: k.unsqueeze(2).expand(...).flatten(1, 2) (a copy),
    // output.transpose(1, 2).contiguous().view(b, s_x, -1) read by output_proj.
    p.repeatKv = true;
    p.attentionOutputCopy = true;
    // torchtune/training/_compile.py@1814feb: compile_model compiles each TransformerSelfAttentionLayer
    // (the final norm and the output projection stay eager); compile_loss compiles
    // CEWithChunkedOutputLoss.compute_cross_entropy (the upcast and cross-entropy of one chunk), or
    // any other loss module whole.
    p.compileScope = "each TransformerSelfAttentionLayer and the loss compiled (training/_compile.py)";
    p.compileLoss = true;
    // torchtune/modules/low_precision/nf4_linear.py@1814feb FrozenNF4Linear and modules/peft/lora.py@1814feb
    // LoRALinear(quantize_base=True): to_nf4(weight) from torchao.dtypes.nf4tensor, forward linear_nf4
    // (LinearNF4 saves only the NF4 weight: no input kept).
    p.nf4Format = Nf4Format::Torchao;
    return p;
}

FrameworkProfile litgpt()
{
    FrameworkProfile p;
    p.framework = Framework::Litgpt;
    p.version = "lit-gpt@8641822b3249bb94f068c254aa5d13decbc9f0a0";
    // lit_gpt/lora.py@8641822 GPT.forward(lm_head_chunk_size=128): a list of 128-token lm_head
    // chunks; lit_gpt/utils.py@8641822 chunked_cross_entropy: F.cross_entropy per chunk on the
    // 16-bit logits (no upcast), reduction="none", torch.cat(...).mean().
    p.loss = LossKind::Chunked;
    p.lossChunkTokens = 128;
    p.chunkUpcast = false;
    // finetune/lora.py@8641822: `logits[-1] = logits[-1][..., :-1, :]` (the loss sees s - 1
    // positions); `logits` stays referenced through fabric.backward(loss).
    p.shiftLogits = true;
    p.logitsHeld = true;
    // finetune/lora.py@8641822 runs the model through fabric.setup_module: _FabricModule.forward ends with
    // `output = self._precision.convert_output(output)`, and HalfPrecision (bf16-true), MixedPrecision and
    // BitsandbytesPrecision all return apply_to_collection(data, _convert_fp_tensor, dst_type=
    // torch.get_default_dtype()) (lightning@71aed75, the commit lit-gpt pins: src/lightning/fabric/wrappers.py,
    // plugins/precision/{half,amp,bitsandbytes}.py; unchanged at lightning master 2026). The default dtype is
    // fp32 outside the forward, so the list of 16-bit lm_head chunks comes back as fp32 copies, which the loop keeps
    // and chunked_cross_entropy's log-softmaxes are fp32.
    p.outputToDefaultDtype = true;
    // torch.optim.AdamW(trainable_params): foreach by default in PyTorch 2.1.
    p.optimizerImpl = OptimizerImpl::Foreach;
    // lit_gpt/rmsnorm.py@8641822: norm_x = mean(x * x); x_normed = x * rsqrt(norm_x + eps);
    // weight * x_normed: all in the input dtype, no fp32 copy.
    p.rmsNormFp32 = false;
    // lit_gpt/lora.py@8641822 LoRAQKVLinear.forward: after_A = F.linear(lora_dropout(x), lora_A)
    // once for the fused qkv (lora_A has r rows per enabled q/k/v); conv1d for B; zero_pad
    // (index_copy saves only its index).
    p.fusedQkvLora = true;
    // lit_gpt/model.py@8641822 CausalSelfAttention.forward: qkv.view(B, T, G, q_per_kv + 2, hs)
    // .permute(0, 2, 3, 1, 4).split(...); k and v expanded to the query heads and reshaped (a copy
    // with grouped queries); q and k copied again by RoPE's torch.cat; with G == n_head,
    // v.reshape(B, -1, T, hs) stays a view, so the V that attention keeps holds the whole qkv
    // output (measured with lit_gpt itself, torch 1.13 CPU: tests/validation/litgpt_block.py).
    p.fusedQkvView = true;
    p.repeatKv = true;
    // bitsandbytes/autograd/_functions.py@0.41.0 (a06a0f6) MatMul4Bit.forward: `ctx.tensors = (A, B)`
    // whenever the input needs a gradient (lit-gpt@8641822 pins bitsandbytes 0.41.1): every NF4
    // linear keeps its 16-bit input, unlike a frozen nn.Linear.
    p.nf4KeepsInputs = true;
    // lightning@71aed75 plugins/precision/bitsandbytes.py _Linear4bit._quantize_weight: `w = weight.contiguous().to(
    // device="cuda", dtype=torch.half)` then quantize_4bit, whose state records A.dtype (bitsandbytes/functional.py@
    // 0.41.0: fp16). MatMul4Bit.forward and backward (autograd/_functions.py@0.41.0) run
    // `F.dequantize_4bit(B, state).to(A.dtype)`: dequantize_4bit allocates its output in the state's dtype, so under
    // bf16 the fp16 weight and its bf16 cast exist together.
    p.nf4DequantFromFp16 = true;
    // lit-gpt finetune/lora.py@8641822 with devices > 1: FSDPStrategy(auto_wrap_policy={Block},
    // activation_checkpointing_policy={Block}, ...); lightning@71aed75 fabric/strategies/fsdp.py sets
    // use_orig_params=True, so each Block's flat parameter holds its LoRA adapters beside the frozen weights, and
    // `fabric.no_backward_sync(model, enabled=is_accumulating)` is `module.no_sync()`.
    p.fsdpNoSync = true;
    p.fsdpWrap = FsdpWrap::Blocks;
    // lit_gpt/utils.py@8641822 get_default_supported_precision(training=True) is "bf16-mixed": Fabric's
    // MixedPrecision (lightning@71aed75 plugins/precision/amp.py) has no convert_module and no init dtype, so the
    // model is built and kept in fp32 and only forward_context's torch.autocast lowers each op; under FSDP,
    // plugins/precision/fsdp.py makes bf16-mixed MixedPrecision(param_dtype=float32), so parameters are gathered in
    // fp32 too.
    p.mixedKeepsModelFp32 = true;
    return p;
}

FrameworkProfile deepspeed()
{
    FrameworkProfile p = plain();
    p.framework = Framework::Deepspeed;
    // No loss of its own: the user's model code computes it (runtime/engine.py@e2dc3eeb forward() calls the module).
    // "Adam"/"AdamW" build FusedAdam (engine.py@e2dc3eeb:1415-1440; ops/adam/fused_adam.py: multi_tensor_applier,
    // states created by the first step, no per-parameter temporaries). ZeRO's gradient dtype, buckets and step copies
    // are in precision_regime.cpp, overheads.cpp and estimator.cpp (deepSpeedStep).
    p.version = "DeepSpeed v0.16.4 (e2dc3eeb1923)";
    p.optimizerImpl = OptimizerImpl::Fused;
    return p;
}

FrameworkProfile megatron()
{
    FrameworkProfile p = plain();
    p.framework = Framework::Megatron;
    p.version = "Megatron-LM core_v0.15.0 (0d7e02bd26d3), Transformer Engine";
    // megatron/core/tensor_parallel/cross_entropy.py@0d7e02b vocab_parallel_cross_entropy on the bf16 logits
    // [s, b, V/t] (parallel_output=True, gpt_model.py:607): .float() copy, max subtracted, exp and the division by
    // the sum in place, ctx.save_for_backward(exp_logits, ...): the fp32 copy is the saved softmax; backward
    // writes the gradient into it and autograd casts it to a new bf16 tensor.
    p.loss = LossKind::LossParallel;
    p.lossParallelDtensor = false;
    // megatron/core/optimizer/__init__.py@0d7e02b: Transformer Engine's FusedAdam (else Apex's): multi_tensor_adam
    // updates in place, no per-parameter temporaries.
    p.optimizerImpl = OptimizerImpl::Fused;
    // --transformer-impl transformer_engine (arguments.py@0d7e02b:1339): TELayerNormColumnParallelLinear fuses
    // the norm into q/k/v and fc1; its kernel keeps the input, mu/rsigma and the norm output for the linear.
    p.fusedNormKernel = true;
    // --no-bias-swiglu-fusion defaults to fusion on (arguments.py@0d7e02b:2165); fusions/fused_bias_swiglu.py
    // SwiGLUFunction.forward: ctx.save_for_backward(input) -- the fc1 output only.
    p.fusedGlu = true;
    return p;
}

} // namespace

const FrameworkProfile& frameworkProfile(Framework f)
{
    static const std::array<FrameworkProfile, 7> profiles
        = { plain(), torchtitan(), hfTransformers(), torchtune(), litgpt(), deepspeed(), megatron() };
    return profiles[static_cast<size_t>(f)];
}

LossKind effectiveLoss(const RunSpec& r)
{
    return r.loss.value_or(frameworkProfile(r.framework).loss);
}

Nf4Format effectiveNf4Format(const RunSpec& r)
{
    return r.finetune.quant.value_or(frameworkProfile(r.framework).nf4Format);
}

KbitPreparation kbitPreparation(const RunSpec& r)
{
    // peft utils/other.py@77daa8d3 (and TRL's copy) skip the cast for GPTQ, AQLM, EETQ, HQQ and torchao models.
    const bool applies = r.mode == Mode::Training && r.finetune.method == FinetuneMethod::Qlora
        && r.framework == Framework::HfTransformers && effectiveNf4Format(r) == Nf4Format::Bitsandbytes;
    return applies ? r.finetune.kbitPreparation.value_or(KbitPreparation::Trl) : KbitPreparation::None;
}

bool frozenBaseFp32(const RunSpec& r)
{
    return r.mode == Mode::Training && r.finetune.method == FinetuneMethod::Lora && mixedPrecision(r.precision)
        && r.finetune.baseFp32.value_or(frameworkProfile(r.framework).mixedKeepsModelFp32);
}

bool fsdp1(const RunSpec& r)
{
    return r.mode == Mode::Training && r.parallelism.fsdp1() && r.parallelism.zeroStage == 3;
}

bool fsdp1UnshardedGradients(const RunSpec& r)
{
    // torch/distributed/fsdp/fully_sharded_data_parallel.py (v2.6.0) no_sync: "FSDP will accumulate the full model
    // gradients (instead of gradient shards) until the eventual sync"; _runtime_utils.py _post_backward_hook
    // returns before the reduce-scatter while not _sync_gradients.
    return fsdp1(r) && r.gradientAccumulationSteps > 1
        && r.parallelism.noSync.value_or(frameworkProfile(r.framework).fsdpNoSync);
}

bool fsdp1FrozenGradients(const RunSpec& r)
{
    // _flat_param.py (v2.6.0) _init_flat_param_and_metadata: with use_orig_params=True the flat parameter requires
    // grad if any of its parameters does, and the frozen ones are differentiable views of it (_use_unsharded_views):
    // "the gradient memory usage will be higher than expected (... equivalent to not freezing those parameters)".
    return fsdp1(r) && r.finetune.method != FinetuneMethod::Full
        && r.parallelism.fsdpWrap.value_or(frameworkProfile(r.framework).fsdpWrap) == FsdpWrap::Blocks;
}

Bytes fsdp1ComputeBytes(const RunSpec& r)
{
    return mixedPrecision(r.precision) && frameworkProfile(r.framework).mixedKeepsModelFp32
        ? 4
        : static_cast<Bytes>(bytesPerElement(precisionRegime(r).working));
}

OptimizerImpl effectiveOptimizerImpl(const RunSpec& r)
{
    return r.optimizerImpl.value_or(frameworkProfile(r.framework).optimizerImpl);
}

LossSetup lossSetup(const RunSpec& r, Count vocabLocal, Count hidden)
{
    const FrameworkProfile& f = frameworkProfile(r.framework);
    LossSetup s;
    s.kind = effectiveLoss(r);
    const Count b = r.microBatchSize, seq = r.localSequence(); // each GPU's share under context parallelism
    if (s.kind == LossKind::Chunked) {
        // torchtune: h.chunk(num_output_chunks, dim=1) -> chunks of ceil(s / n) positions;
        // LitGPT: x.split(lm_head_chunk_size, dim=1) -> chunks of that many positions.
        const Count tokens = r.lossChunkTokens.value_or(0);
        const Count chunks = r.lossChunks.value_or(0);
        Count rows = 0;
        if (tokens > 0)
            rows = std::min(tokens, seq);
        else if (chunks > 0)
            rows = ceilDiv(seq, chunks);
        else if (f.lossChunkTokens > 0)
            rows = std::min(f.lossChunkTokens, seq);
        else
            rows = ceilDiv(seq, f.lossChunks > 0 ? f.lossChunks : 8);
        s.chunkRows = checkedMul(b, rows);
        s.chunkUpcast = r.lossDtype ? *r.lossDtype == DType::Fp32 : f.chunkUpcast;
    } else if (s.kind == LossKind::Fused) {
        // Liger src/liger_kernel/ops/fused_linear_cross_entropy.py@e11c2d6c84e16dfebde09bae01983b64399519c1:
        // inc_factor = cdiv(V, H); chunk_size = next_power_of_2(cdiv(BT, inc_factor)).
        const Count bt = checkedMul(b, seq);
        const Count inc = ceilDiv(vocabLocal, std::max<Count>(1, hidden));
        s.chunkRows = std::min(
            bt, static_cast<Count>(std::bit_ceil(static_cast<uint64_t>(ceilDiv(bt, std::max<Count>(1, inc))))));
    }
    if (f.outputToDefaultDtype && (s.kind == LossKind::Chunked || s.kind == LossKind::Native)
        && (!r.lossDtype || *r.lossDtype == DType::Fp32)) {
        s.logitsFp32 = true; // converted whole by the framework, not upcast chunk by chunk
        s.chunkUpcast = false;
    }
    return s;
}

} // namespace vramlab
