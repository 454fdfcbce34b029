// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/dtype.h"
#include "vramlab/gpu_catalog.h"
#include "vramlab/serving_spec.h"
#include "vramlab/units.h"

#include <optional>
#include <string>
#include <vector>

namespace vramlab {

enum class Mode { Training, Inference };
/// fp32; pure bf16/fp16 (model.to(dtype), no master copy); mixed: 16-bit working
/// weights and activations, fp32 master weights, gradients and optimizer states.
enum class Precision { Fp32, Bf16, Fp16, MixedBf16, MixedFp16 };
/// Mixed precision: a 16-bit compute type under autocast (or MixedPrecision's param_dtype) beside fp32 parameters.
constexpr bool mixedPrecision(Precision p)
{
    return p == Precision::MixedBf16 || p == Precision::MixedFp16;
}
enum class Optimizer { AdamW, Adam, AdamW8bit, Sgd, SgdMomentum, Lion, Adafactor };
enum class AttentionImpl { Eager, Flash };
enum class FinetuneMethod { Full, Lora, Qlora };
/// QLoRA's 4-bit base: bitsandbytes' Linear4bit (PEFT, LitGPT) or torchao's NF4Tensor (torchtune).
enum class Nf4Format { Bitsandbytes, Torchao };
/// What upcasts a bitsandbytes 4-bit model's 16-bit parameters before QLoRA training under Hugging Face:
/// Trl: TRL's SFTTrainer (v0.25 trl/models/utils.py prepare_model_for_kbit_training: the norms to fp32; v0.24
/// PEFT's, then peft_module_casting_to_bf16 under bf16: the embedding and LM head back to 16 bits);
/// Peft: PEFT's prepare_model_for_kbit_training called directly (utils/other.py@77daa8d3: every 16-bit parameter
/// that is not a Params4bit to fp32); None: neither.
enum class KbitPreparation { None, Trl, Peft };
/// run.parallelism.sharding with zero_stage 3: ZeRO-3 as DeepSpeed does it, or PyTorch's FSDP2 (per-parameter
/// DTensor shards) or FSDP1 (one FlatParameter per wrapped unit).
enum class Sharding { Zero, Fsdp2, Fsdp1 };
/// run.parallelism.fsdp_wrap (FSDP1 with adapters): Blocks, each transformer block one flat parameter with its
/// adapters inside (Lightning's auto_wrap_policy={Block}; use_orig_params=True then computes the frozen weights'
/// gradients too); Peft, PEFT's fsdp_auto_wrap_policy (every trainable leaf its own unit: frozen flat parameters
/// get no gradient).
enum class FsdpWrap { Blocks, Peft };

/// The training code whose memory behaviour is modelled (core/src/framework_profile.cpp
/// pins each to a version and cites the source of every behaviour). `Plain` is the
/// eager-PyTorch reference loop of tests/validation, today's model.
enum class Framework { Plain, Torchtitan, HfTransformers, Torchtune, Litgpt, Deepspeed, Megatron };

/// How the cross-entropy of the logits is computed (see lossPlan() in activation_model.h).
enum class LossKind {
    Upcast, ///< logits.float() then cross_entropy: fp32 copy, fp32 log-softmax saved
    Native, ///< cross_entropy on the 16-bit logits (torchtune's non-chunked recipe)
    HfShift, ///< HF Transformers ForCausalLMLoss: upcast, labels padded and shifted
    Chunked, ///< the LM head in chunks (torchtune CEWithChunkedOutputLoss, LitGPT chunked CE)
    Fused, ///< Liger fused linear cross-entropy: no full logits
    LossParallel, ///< vocabulary-parallel cross-entropy under tensor parallelism (torchtitan)
};

/// torch.optim's implementation: foreach (multi-tensor, with temporaries) or fused (none);
/// Paged32: bitsandbytes PagedAdamW, fp32 states whatever the precision, no temporaries; Paged8: PagedAdamW8bit
/// (optimizer adamw-8bit). Paged states live in CUDA unified memory (model_states.cpp).
enum class OptimizerImpl { Foreach, Fused, Paged32, Paged8 };

/// How pipeline ranks order their micro-batches (core/src/pipeline_schedule.cpp): 1F1B, or interleaved 1F1B where
/// each rank holds `virtual_stages` chunks of the layers (Megatron-LM virtual pipeline, PyTorch's
/// ScheduleInterleaved1F1B).
enum class PipelineSchedule { OneFOneB, Interleaved };

struct Checkpointing {
    /// SelectiveOp: torchtitan's op-level selective checkpointing (its _save_list).
    /// Layers: the first `every` layers of each pipeline stage are checkpointed whole and the rest keep everything
    /// (Megatron-LM --recompute-method block --recompute-num-layers N; torchtitan@9dec370's every-k-th-layer option
    /// keeps the same bytes with floor(L / k) layers checkpointed: parallelize_llama.py counts blocks from 1).
    enum class Kind { None, Full, Selective, Every, SelectiveOp, Layers };
    Kind kind = Kind::None;
    Count every = 0; ///< Kind::Every: segments of `every` consecutive layers keep only their input; Kind::Layers:
                     ///< how many layers are checkpointed
    /// Layers of a stage of `stageLayers` that keep only their input (Full and Every: all; Layers: the first N).
    Count checkpointedLayers(Count stageLayers) const
    {
        return kind == Kind::Layers                     ? std::min(every, stageLayers)
            : kind == Kind::Full || kind == Kind::Every ? stageLayers
                                                        : 0;
    }
};

struct Parallelism {
    Count gpus = 1; ///< all GPUs: data x tensor x pipeline
    int zeroStage = 0; ///< 0-3 over the data-parallel group
    Count tensorParallel = 1;
    Count pipelineParallel = 1;
    Count expertParallel = 1; ///< MoE experts spread over this many data-parallel ranks
    /// torchtitan's context parallelism (PyTorch context_parallel, allgather ring attention): each
    /// of these GPUs holds sequence_length / contextParallel tokens of every sample. FSDP shards over
    /// dp_shard x cp (parallelize_llama.py@9dec370: world_mesh["dp_shard_cp"]), so the sharding group
    /// stays gpus / (tensor x pipeline) and dataParallel() is unchanged; samples per step are
    /// dataParallel() / contextParallel (see core/src/context_parallel.cpp).
    Count contextParallel = 1;
    /// torchtitan's async TP (inductor's micro_pipeline_tp): all-gather and reduce-scatter fused with the matmuls,
    /// through a symmetric-memory workspace outside the caching allocator.
    bool asyncTp = false;
    /// torch DDP's gradient_as_bucket_view: param.grad are views of the reducer's flat buckets; false (DDP's
    /// default) keeps the buckets as a second copy of every gradient (torchDdpBuckets()).
    bool gradientAsBucketView = false;
    /// run.parallelism.no_sync (FSDP1): gradient accumulation under FullyShardedDataParallel.no_sync(), which keeps
    /// every flat parameter's unsharded gradient until the syncing backward; unset: the framework's.
    std::optional<bool> noSync;
    std::optional<FsdpWrap> fsdpWrap; ///< run.parallelism.fsdp_wrap; unset: the framework's
    PipelineSchedule pipelineSchedule = PipelineSchedule::OneFOneB;
    /// Interleaved 1F1B: model chunks per pipeline rank (Megatron --num-virtual-stages-per-pipeline-rank); rank r
    /// holds chunks r, r + pp, r + 2 pp, ... of num_layers / (pp x virtualStages) layers each.
    Count virtualStages = 1;
    bool sequenceParallel = false;
    bool offloadOptimizer = false; ///< optimizer states + master weights (+ fp32 gradients) in host memory
    bool offloadParams = false; ///< ZeRO-3 parameters in host memory
    /// run.parallelism.sharding: "fsdp2", ZeRO-3 as PyTorch FSDP2 does it with mixed precision (no resident 16-bit
    /// shard: the fp32 shard is the parameter); "fsdp1", as FSDP1's flat parameters do it (core/src/model_states.cpp).
    Sharding sharding = Sharding::Zero;
    bool fsdp2() const { return sharding == Sharding::Fsdp2; }
    bool fsdp1() const { return sharding == Sharding::Fsdp1; }
    /// run.parallelism.fp8_all_gather: FSDP2 all-gathers the float8 linears' weights in fp8 (torchao
    /// enable_fsdp_float8_all_gather: fsdp_pre_all_gather casts the shard), 1 B per gathered element.
    bool fp8AllGather = false;
    /// HSDP (run.parallelism.fsdp_shard_group): ZeRO-3 shards over this many data-parallel ranks
    /// and replicates across dataParallel() / it; 0: over every data-parallel rank.
    Count fsdpShardGroup = 0;
    /// DeepSpeed's zero_optimization.reduce_bucket_size (elements; run.framework "deepspeed", ZeRO >= 1): the 16-bit
    /// gradient bucket each rank reduces through. Unset: DeepSpeed's default, 5e8 (runtime/zero/config.py@e2dc3eeb).
    std::optional<Count> reduceBucketSize;
    /// DeepSpeed's zero_optimization.overlap_comm; unset: DeepSpeed's default, on for ZeRO-3 only.
    std::optional<bool> overlapComm;
    /// DeepSpeed ZeRO-3 (runtime/zero/config.py@e2dc3eeb), elements; unset: DeepSpeed's default.
    std::optional<Count> stage3PrefetchBucketSize; ///< 5e7: parameters fetched ahead of the current module
    std::optional<Count> stage3MaxLiveParameters; ///< 1e9: caps the prefetch (not the current module)
    std::optional<Count> stage3MaxReuseDistance; ///< 1e9: a parameter reused within this many is not released
    std::optional<Count> stage3ParamPersistenceThreshold; ///< 1e5: smaller parameters stay gathered
    Count dataParallel() const { return gpus / (tensorParallel * pipelineParallel); }
    /// The ranks the sharded states are split over (ZeRO-3's group; HSDP's shard group).
    Count shardGroup() const { return fsdpShardGroup > 0 ? fsdpShardGroup : dataParallel(); }
    /// Data-parallel replicas that read different samples (FSDP's group less the CP ranks).
    Count sampleParallel() const { return dataParallel() / contextParallel; }
};

struct Finetune {
    FinetuneMethod method = FinetuneMethod::Full;
    Count rank = 16;
    double alpha = 32;
    double dropout = 0.0; ///< LoRA dropout: each target keeps a dropped copy of its input
    std::vector<std::string> targets = { "q", "k", "v", "o" };
    bool doubleQuant = true; ///< QLoRA: NF4 block scales quantized again (4.127 bits), else fp32 per 64 (4.5)
    std::optional<Nf4Format> quant; ///< run.finetune.quant; unset: the framework's (effectiveNf4Format)
    bool quantizeLmHead
        = false; ///< QLoRA: the LM head in NF4 too (Lightning's BitsandbytesPrecision without ignore_modules)
    /// DoRA (PEFT's use_dora): a trainable magnitude per output of each adapted linear, and the norm of the
    /// adapted weight computed in every forward (tuners/lora/dora.py@77daa8d3).
    bool dora = false;
    /// run.finetune.kbit_preparation; unset: TRL's for QLoRA under hf-transformers (kbitPreparation()).
    std::optional<KbitPreparation> kbitPreparation;
    /// run.finetune.base_fp32: LoRA's frozen base stays fp32 under mixed precision (a model loaded in fp32 and run
    /// under autocast, as transformers loads one without a dtype); unset: the framework's (Lightning's bf16-mixed).
    std::optional<bool> baseFp32;
};

struct Inference {
    Count batchSize = 1;
    Count contextLength = 4096; ///< prompt + generated tokens held in the KV cache
    DType weightDtype = DType::Bf16;
    DType kvCacheDtype = DType::Bf16;
};

/// Memory that is not a tensor of the model: stated, with defaults the user can change.
struct Overheads {
    Bytes cudaContextBytes = 512 * kMiB; ///< CUDA context + kernels (lazy loading): 300-600 MiB measured
    Bytes workspaceBytes = 32 * kMiB; ///< cuBLAS/cuBLASLt workspace (32 MiB on Hopper)
    bool allocatorRounding = true; ///< PyTorch caching allocator rounds each block up to 512 B
    double fragmentation = 0.0; ///< extra fraction of activations lost to fragmentation
    std::optional<Bytes>
        commBufferBytes; ///< NCCL + bucket buffers; default: 2 x 25 MiB buckets + 256 MiB NCCL with >1 GPU
};

/// PYTORCH_CUDA_ALLOC_CONF as the caching-allocator replay reads it (run.allocator).
struct AllocatorSettings {
    bool expandableSegments = false; ///< expandable_segments:True (PyTorch's default is False)
};

struct RunSpec {
    Mode mode = Mode::Training;
    Count sequenceLength = 2048;
    /// Tokens of each training sample on one GPU: the sequence, or its share under context parallelism.
    Count localSequence() const { return sequenceLength / parallelism.contextParallel; }
    Count microBatchSize = 1;
    Count gradientAccumulationSteps = 1;
    Precision precision = Precision::MixedBf16;
    std::optional<DType> gradientDtype; ///< override for mixed precision
    std::optional<bool> masterWeights; ///< override for mixed precision
    /// Megatron-LM's --use-precision-aware-optimizer (Transformer Engine's FusedAdam holds the master weights and the
    /// states): with bf16 parameters the fp32 master is stored as 16-bit remainders (store_param_remainders).
    bool precisionAwareOptimizer = false;
    /// Both Adam moments in this type (Megatron's --exp-avg-dtype and --exp-avg-sq-dtype); unset: the regime's.
    std::optional<DType> optimizerStateDtype;
    bool fp8 = false; ///< FP8 GEMMs (Transformer Engine): fp8 GEMM inputs saved, fp8 weight copies
    Optimizer optimizer = Optimizer::AdamW;
    Checkpointing checkpointing;
    AttentionImpl attention = AttentionImpl::Flash;
    Parallelism parallelism;
    Finetune finetune;
    Inference inference;
    std::optional<Serving> serving; ///< run.mode "serving" (mode stays Inference for the estimator)
    Overheads overheads;
    AllocatorSettings allocator;
    std::optional<GpuSpec> gpu; ///< from the catalog or custom
    double mfu = 0.4; ///< compute efficiency: share of peak the hardware FLOPs run at (step time)
    /// Fraction of each GPU's memory kept free: fits means peak <= (1 - margin) x memory. 5 %
    /// by default: the caching allocator's reserve above the allocated peak and other processes
    /// (a desktop, a second job) need room, and a run planned at zero headroom fails on the GPU.
    double safetyMargin = 0.05;

    Framework framework = Framework::Plain; ///< sets the defaults of the optional keys below
    std::optional<LossKind> loss; ///< unset: the framework's
    std::optional<Count> lossChunks; ///< chunked: number of chunks along the sequence (torchtune num_output_chunks)
    std::optional<Count> lossChunkTokens; ///< chunked: tokens per chunk (LitGPT lm_head_chunk_size)
    std::optional<DType> lossDtype; ///< chunked: fp32 (upcast per chunk) or the logits' 16-bit type (no upcast)
    std::optional<OptimizerImpl> optimizerImpl; ///< unset: the framework's
    bool optimizerInBackward
        = false; ///< torchtune optimizer_in_bwd: each parameter stepped and its gradient freed in backward
    /// torchtitan FSDP2: the last block stays unsharded from its forward to its backward
    /// (reshard_after_forward = layer_id < n_layers - 1).
    bool keepLastBlockGathered = false;
    /// run.parallelism.reshard_after_forward false: FSDP2 keeps every block unsharded after its forward.
    bool keepAllGathered = false;
    /// FSDP2 holds every block's gathered weights through the step: reshard_after_forward false, or inside
    /// PyTorch's pipelining, whose stage sets set_reshard_after_backward(False) before every micro-batch's
    /// backward (torch/distributed/pipelining/stage.py backward_maybe_with_nosync; torchtitan@9dec370 also
    /// passes reshard_after_forward False to every block with pipeline parallelism, parallelize_llama.py apply_fsdp).
    bool fsdpKeepsGathered() const
    {
        return mode == Mode::Training && parallelism.fsdp2() && parallelism.zeroStage == 3
            && (keepAllGathered || fsdp2InPipeline());
    }
    /// FSDP2 inside PyTorch's pipelining: set_requires_gradient_sync(False) on every micro-batch, so the gradients
    /// accumulate unsharded in the reduce dtype (fp32: _fsdp_param.py to_accumulated_grad_if_needed) until the
    /// stage's run_post_backward reduce-scatters them after the last micro-batch.
    bool fsdp2InPipeline() const
    {
        return mode == Mode::Training && parallelism.fsdp2() && parallelism.zeroStage == 3
            && parallelism.pipelineParallel > 1
            && (framework == Framework::Torchtitan || framework == Framework::Plain);
    }
    /// torch.compile as the framework applies it (torchtitan, torchtune: each transformer block
    /// compiled on its own; torchtune also its loss): AOTAutograd's min-cut partitioner chooses
    /// the saved tensors (core/src/activation_model.cpp states the rule).
    bool compile = false;
    /// run.compile_loss: with run.compile, whether the loss is compiled too; unset: the framework's
    /// (torchtune yes; torchtitan no at the pinned 9dec370, yes from early 2025: components/loss.py@e7c0cae).
    std::optional<bool> compileLoss;
    /// torchtune's OffloadActivations (enable_activation_offloading): saved tensors of the model's
    /// forward go to pinned host memory (core/src/activation_model.cpp, offloadActivations).
    bool activationOffloading = false;
    /// run.sft_token_accuracy: TRL's SFTTrainer (v0.25.1 sft_trainer.py compute_loss) under Trainer's autocast
    /// (bf16 or fp16 true): accelerate returns the logits in fp32 (convert_outputs_to_fp32) and SFTTrainer copies them
    /// after each forward for its token accuracy, beside the saved log-softmax.
    bool sftTokenAccuracy = false;
};

std::string_view toString(Precision p);
std::string_view toString(Optimizer o);
std::string_view toString(Mode m);
std::string_view toString(AttentionImpl a);
std::string_view toString(FinetuneMethod f);
std::string toString(const Checkpointing& c);
std::string_view toString(Framework f);
std::string_view toString(LossKind l);
std::string_view toString(Nf4Format f);
std::string_view toString(KbitPreparation k);
std::string_view toString(Sharding s);
std::string_view toString(FsdpWrap w);
std::string_view toString(OptimizerImpl o);
std::string_view toString(PipelineSchedule p);

/// The default run on `before`'s machine: its GPU and GPU count (the launcher's), overheads, allocator settings,
/// efficiency, safety margin and inference settings kept. A framework's config applies onto this, since what the
/// config leaves out is that framework's default, not the scenario's.
RunSpec defaultRunKeepingMachine(const RunSpec& before);

} // namespace vramlab
