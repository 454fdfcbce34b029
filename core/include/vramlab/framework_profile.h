// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/run_spec.h"

#include <string_view>

namespace vramlab {

/// What a training framework does that decides memory, at one pinned version: the
/// defaults of the run keys it sets (`run.loss`, `run.optimizer_impl`) and the shape of
/// its model code where that differs from the plain eager reference. Every field is read
/// from the framework's source; framework_profile.cpp cites file@commit for each.
struct FrameworkProfile {
    Framework framework = Framework::Plain;
    std::string_view version; ///< "torchtitan@9dec370ad26b5f8e9a7333a0e36165018262644b"
    LossKind loss = LossKind::Upcast;
    Count lossChunks = 0; ///< default number of loss chunks (torchtune: 8)
    Count lossChunkTokens = 0; ///< default tokens per chunk (LitGPT: 128)
    bool chunkUpcast = true; ///< chunked loss upcasts each chunk to fp32 (torchtune) or not (LitGPT)
    OptimizerImpl optimizerImpl = OptimizerImpl::Foreach;
    bool rmsNormFp32 = true; ///< RMSNorm computes in fp32 (keeps an fp32 copy of its input)
    bool repeatKv = false; ///< K and V materialized to the query heads before SDPA
    /// run.parallelism.context_parallel is modelled: PyTorch's context_parallel (allgather ring
    /// attention) around the step, with the RoPE table among its sharded buffers (core/src/context_parallel.cpp).
    bool contextParallel = false;
    bool attentionOutputCopy = false; ///< transpose(1, 2).contiguous() copy of the attention output, read by wo
    bool fusedQkvLora = false; ///< one LoRA dropout and one A for the fused qkv linear (LitGPT LoRAQKVLinear)
    bool nf4KeepsInputs = false; ///< QLoRA's NF4 linears keep their 16-bit input (bitsandbytes MatMul4Bit)
    /// QLoRA's NF4 weights were quantized from fp16 and each matmul dequantizes into fp16, then casts to the input's
    /// type: an fp16 and a bf16 copy of the weight at once under bf16 (Lightning + bitsandbytes 0.41).
    bool nf4DequantFromFp16 = false;
    /// Transformer Engine's fused norm kernels (Megatron-LM's default transformer_impl): RMSNorm and LayerNorm keep
    /// their 16-bit input and fp32 statistics per token, no fp32 copy and no normalized tensor of their own (the
    /// fused linear that reads the output keeps it as its input).
    bool fusedNormKernel = false;
    /// A fused SwiGLU (Megatron's bias_swiglu_impl) keeps only its input, the gate and up projections' output, and
    /// recomputes the SiLU in backward.
    bool fusedGlu = false;
    /// PEFT keeps LoRA adapters in fp32 (get_peft_model's autocast_adapter_dtype) and each adapted linear casts its
    /// input to them: a copy of its own, which lora_A keeps (in fp32, or in 16-bit where autocast runs the adapters).
    bool loraAdaptersFp32 = false;
    Nf4Format nf4Format = Nf4Format::Bitsandbytes; ///< QLoRA's 4-bit base (run.finetune.quant's default)
    bool fusedQkvView
        = false; ///< q, k, v are views of one fused qkv output; with as many KV heads as heads V keeps it whole
    bool logitsHeld = false; ///< the training loop keeps the logits through backward
    /// Lightning Fabric hands the module's floating outputs back in torch's default dtype, fp32: every precision
    /// plugin's convert_output (LitGPT's logits, every chunk of them, reach the loss in fp32).
    bool outputToDefaultDtype = false;
    /// run.fp8 as torchao's Float8Linear (dynamic tensorwise, the LM head left in 16-bit): no resident fp8
    /// weight copy (each forward casts the gathered weight), autograd keeps each linear's fp8 input and fp8
    /// transposed unsharded weight; false: Transformer Engine's fp8 weight copies beside the weights.
    bool fp8Torchao = false;
    bool shiftLogits = false; ///< the loss drops the last position of each sequence (LitGPT)
    /// Sequence parallelism as DTensor does it: the all-gathered (full-sequence) input of each
    /// column-parallel matmul is what autograd keeps (Megatron keeps its shard and gathers again).
    bool sequenceParallelKeepsGathered = false;
    /// run.loss "loss-parallel" as PyTorch's DTensor loss_parallel computes it (fp32 shifted and exp
    /// temporaries, a 3-tensor backward); false: Megatron's in-place vocab_parallel_cross_entropy.
    bool lossParallelDtensor = true;
    /// What `run.compile` compiles: "" when the framework's compile is not modelled (it is
    /// refused), else each transformer block on its own, and the loss where `compileLoss`.
    std::string_view compileScope;
    bool compileLoss = false;
    /// A compiled loss receives the 16-bit logits and upcasts them inside its graph (torchtitan's
    /// cross_entropy_loss(pred.float())); false: the model hands it fp32 logits (torchtune).
    bool lossUpcastInGraph = false;
    /// FSDP1 (run.parallelism.sharding "fsdp1") as the framework sets it up: gradient accumulation under no_sync
    /// and how adapters are wrapped.
    bool fsdpNoSync = false;
    FsdpWrap fsdpWrap = FsdpWrap::Peft;
    /// Mixed precision leaves the parameters in fp32 and runs the module under autocast (Lightning Fabric's
    /// MixedPrecision, and FSDPPrecision's param_dtype fp32): frozen weights stay fp32 (4 B), autocast casts each one
    /// to 16 bits every time it is used, and FSDP1 gathers in fp32 (accelerate gathers in bf16).
    bool mixedKeepsModelFp32 = false;
};

/// A LoRA run whose frozen base stays fp32 under mixed precision (FrameworkProfile::mixedKeepsModelFp32).
bool frozenBaseFp32(const RunSpec& r);

/// The profile of `f` at its pinned version.
const FrameworkProfile& frameworkProfile(Framework f);

/// The run's effective loss and optimizer implementation: the explicit key, else the framework's.
LossKind effectiveLoss(const RunSpec& r);
OptimizerImpl effectiveOptimizerImpl(const RunSpec& r);
Nf4Format effectiveNf4Format(const RunSpec& r);
/// How a QLoRA training run's 16-bit parameters were upcast (run.finetune.kbit_preparation): None unless QLoRA
/// under hf-transformers with bitsandbytes' NF4; there TRL's SFTTrainer by default.
KbitPreparation kbitPreparation(const RunSpec& r);

/// FSDP1 (zero_stage 3, sharding "fsdp1") in training, as run.parallelism.no_sync and fsdp_wrap resolve: the
/// unsharded gradients kept through gradient accumulation; frozen weights sharing a flat parameter with adapters
/// (their gradients computed, their inputs kept); the bytes of a gathered parameter and an unsharded gradient.
bool fsdp1(const RunSpec& r);
bool fsdp1UnshardedGradients(const RunSpec& r);
bool fsdp1FrozenGradients(const RunSpec& r);
Bytes fsdp1ComputeBytes(const RunSpec& r);

/// The resolved loss: kind, rows per chunk and whether chunks are upcast to fp32.
struct LossSetup {
    LossKind kind = LossKind::Upcast;
    Count chunkRows = 0; ///< chunked: tokens (b x rows) of the largest chunk; fused: Liger's chunk
    bool chunkUpcast = true;
    /// Native or chunked: the loss receives the logits already in fp32, converted whole by the framework
    /// (FrameworkProfile::outputToDefaultDtype) unless run.loss_dtype names their 16-bit type.
    bool logitsFp32 = false;
};
LossSetup lossSetup(const RunSpec& r, Count vocabLocal, Count hidden);

} // namespace vramlab
