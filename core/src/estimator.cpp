// SPDX-License-Identifier: MIT
#include "vramlab/estimator.h"

#include "vramlab/allocation_trace.h"
#include "vramlab/context_parallel.h"
#include "vramlab/errors.h"
#include "vramlab/flops_model.h"
#include "vramlab/framework_profile.h"
#include "vramlab/kv_cache.h"
#include "vramlab/model_states.h"
#include "vramlab/overheads.h"
#include "vramlab/pipeline_schedule.h"
#include "vramlab/precision_regime.h"

#include <algorithm>
#include <cmath>

namespace vramlab {

namespace {

/// Report::lowerBound gathers every reason the peak is a lower bound, "; " between them.
void addLowerBound(Report& rep, std::string_view why)
{
    if (!rep.lowerBound.empty())
        rep.lowerBound += "; ";
    rep.lowerBound += why;
}

std::string n(Count v)
{
    return std::to_string(v);
}

/// The run keys that decide the model states (weights, master, gradients, optimizer).
bool sameStateInputs(const RunSpec& a, const RunSpec& b)
{
    const Parallelism &p = a.parallelism, &q = b.parallelism;
    // The keys the planner and sweeps vary first: a miss is seen after one or two.
    return p.zeroStage == q.zeroStage && p.offloadOptimizer == q.offloadOptimizer && p.offloadParams == q.offloadParams
        && p.tensorParallel == q.tensorParallel && p.pipelineParallel == q.pipelineParallel && p.gpus == q.gpus
        && p.expertParallel == q.expertParallel && a.mode == b.mode && a.precision == b.precision
        && a.gradientDtype == b.gradientDtype && a.masterWeights == b.masterWeights && a.fp8 == b.fp8
        && a.precisionAwareOptimizer == b.precisionAwareOptimizer && a.optimizerStateDtype == b.optimizerStateDtype
        && a.optimizer == b.optimizer && p.sharding == q.sharding && a.optimizerImpl == b.optimizerImpl
        && a.finetune.doubleQuant == b.finetune.doubleQuant && a.finetune.quantizeLmHead == b.finetune.quantizeLmHead
        && a.finetune.quant == b.finetune.quant && a.framework == b.framework // the NF4 format's default
        && a.finetune.method == b.finetune.method && a.finetune.rank == b.finetune.rank
        && a.finetune.dora == b.finetune.dora && a.finetune.kbitPreparation == b.finetune.kbitPreparation
        && (a.finetune.method == FinetuneMethod::Full || a.finetune.targets == b.finetune.targets)
        && a.inference.weightDtype == b.inference.weightDtype && p.noSync == q.noSync && p.fsdpWrap == q.fsdpWrap
        && p.fsdpShardGroup == q.fsdpShardGroup && a.keepAllGathered == b.keepAllGathered
        && a.keepLastBlockGathered == b.keepLastBlockGathered
        && fsdp1UnshardedGradients(a) == fsdp1UnshardedGradients(b); // no_sync holds them only with accumulation
}

/// DeepSpeed's transients around ZeRO's reduction and step (runtime/zero/stage_1_and_2.py and stage3.py@e2dc3eeb),
/// with P/N the trainable parameters of this rank's partition:
/// - the 16-bit gradient bucket of reduce_bucket_size elements: ZeRO-1 fills it at the accumulation boundary after
///   backward (no hooks without overlap_comm), ZeRO-2 allocates it for every backward (two with overlap_comm),
///   ZeRO-3 keeps one from setup (overheads.cpp) and concatenates a bucket's partitions for the reduce-scatter;
/// - the step flattens the partition's 16-bit gradients and casts them to fp32 (flatten(...).to(fp32)): 2 + 4 B
///   x P/N, or with offload_optimizer the fp32 partition copied back to the GPU, 4 B x P/N (ZeRO-1/2);
/// - without ZeRO, fp16's FP16_Optimizer flattens fp32 copies of every gradient at the step (4 B x P).
void deepSpeedStep(StepInputs& in, const RunSpec& r, const PrecisionRegime& reg, const ModelStateBytes& states)
{
    const Parallelism& par = r.parallelism;
    const int zero = par.zeroStage;
    if (zero == 0) {
        if (r.precision == Precision::MixedFp16)
            in.optimizerTemporaries = checkedMul(states.trainableLocal, 4);
        return;
    }
    if (!reg.master)
        return;
    const Bytes bucket = deepSpeedBucketBytes(r);
    const bool overlap = par.overlapComm.value_or(zero == 3);
    const Count partition = ceilDiv(states.trainableLocal, std::max<Count>(1, par.shardGroup()));
    const Bytes work = static_cast<Bytes>(bytesPerElement(reg.working));
    const Bytes stepCopies
        = par.offloadOptimizer ? (zero == 3 ? 0 : checkedMul(partition, 4)) : checkedMul(partition, 4 + work);
    in.optimizerTemporaries = stepCopies;
    if (zero == 1 && !overlap) // filled at the accumulation boundary, freed before the step
        in.optimizerTemporaries = std::max(stepCopies, bucket);
    else if (zero == 3) // the bucket itself is resident (overheads.cpp); reduce_scatter_coalesced concatenates it
        in.layerGradientBucket = bucket;
    else // ZeRO-2, or ZeRO-1 with hooks (overlap_comm): for the whole backward, two with overlap_comm
        in.backwardBucket = checkedMul(bucket, overlap ? 2 : 1);
}

/// The estimate's numbers the step simulation replays (see step_timeline.h for each).
StepInputs stepInputs(const ModelSpec& m, const RunSpec& r, const PrecisionRegime& reg, const ModelStateBytes& states,
    const StageSlice& slice, const Report& rep, Count inFlight, const PipelineBuffers& buffers)
{
    const Parallelism& par = r.parallelism;
    const ActivationSet& acts = rep.activations;
    StepInputs in;
    in.training = true;
    in.weights = states.weights;
    in.master = states.master;
    in.gradients = states.gradients;
    // Paged optimizer states are outside PyTorch's allocator (model_states.h pagedOptimizer): neither the live
    // tensors nor the replay's segments hold them.
    in.optimizer = states.optimizer - states.pagedOptimizer;
    for (const Component& c : rep.overheadParts)
        (c.key == "zero3_gather" ? in.zero3Gather : in.baseOverhead) += c.bytes;
    in.embeddingActs = acts.embeddingBytes;
    in.headActs = acts.headBytes;
    in.layerActs = acts.bytes - acts.embeddingBytes - acts.headBytes;
    in.recompute = acts.recomputeBytes;
    in.backwardWorkingSet = checkedMul(2, acts.largestLayerTensorBytes);
    in.ringForward = acts.ringForwardBytes; // context parallelism (activation_model.cpp ringAttentionBuffers)
    in.ringBackward = acts.ringBackwardBytes;
    in.doraForward = acts.doraForwardBytes; // activation_model.cpp doraTransients
    if (slice.last) { // the loss as the framework computes it (activation_model.cpp lossTensors)
        in.lossForward = acts.lossForwardBytes;
        in.lossBackward = acts.lossBackwardBytes;
        in.lossHeld = acts.lossHeldBytes;
        in.lossForwardWhat = acts.lossForwardWhat;
        in.lossBackwardWhat = acts.lossBackwardWhat;
    }
    in.stageOutputKept = buffers.outputKept; // PyTorch's pipelining (pipeline_schedule.cpp pipelineBuffers)
    in.stageInputGradKept = buffers.inputGradKept;
    const Count dp = par.dataParallel();
    // One layer's unsharded gradients before their reduce-scatter; DeepSpeed's own bucket is deepSpeedStep's.
    if (par.zeroStage >= 2 && dp > 1 && states.gradients > 0 && r.framework != Framework::Deepspeed)
        in.layerGradientBucket = checkedMul(
            ceilDiv(rep.params.perLayerMax, par.tensorParallel), static_cast<Count>(bytesPerElement(reg.gradients)));
    // PyTorch's default (foreach) AdamW builds sqrt(v) for every parameter at once: one
    // fp32 list the size of m or v; foreach Lion builds its update list the size of m.
    // Fused and 8-bit kernels, SGD and offloaded optimizers keep none on the GPU.
    // run.optimizer_impl "fused" (torch.optim fused=True) keeps none either.
    const bool foreach = effectiveOptimizerImpl(r) == OptimizerImpl::Foreach;
    if (foreach && (r.optimizer == Optimizer::Adam || r.optimizer == Optimizer::AdamW))
        in.optimizerTemporaries = states.optimizer / 2;
    else if (foreach && r.optimizer == Optimizer::Lion)
        in.optimizerTemporaries = states.optimizer;
    if (r.framework == Framework::Deepspeed)
        deepSpeedStep(in, r, reg, states);
    in.optimizerInBackward = r.optimizerInBackward;
    // torchtitan FSDP2 (parallelize_llama.py@9dec370 apply_fsdp): reshard_after_forward =
    // layer_id < n_layers - 1, so the last block's gathered weights stay through the loss.
    if (r.keepLastBlockGathered && par.zeroStage == 3)
        in.lossGathered = in.zero3Gather / 2;
    // DeepSpeed ZeRO-3: the LM head and the layers reused within stage3_max_reuse_distance (overheads.cpp).
    if (slice.last && r.framework == Framework::Deepspeed && par.dataParallel() > 1)
        in.lossGathered = deepSpeedZero3(m, r, rep.params).keptAtLossBytes;
    in.trainableParamsLocal = states.trainableLocal;
    in.paramsLocal = checkedAdd(states.trainableLocal, states.frozenLocal);
    in.layers = slice.layers();
    in.segmentLayers
        = r.checkpointing.kind == Checkpointing::Kind::Every ? std::max<Count>(1, r.checkpointing.every) : 1;
    if (r.checkpointing.kind == Checkpointing::Kind::Layers) { // the first N layers keep their input only
        in.checkpointedLayers = r.checkpointing.checkpointedLayers(slice.layers());
        in.checkpointInputBytes = acts.checkpointInputBytes;
    }
    in.firstStage = slice.first;
    in.lastStage = slice.last;
    in.microBatches = r.gradientAccumulationSteps;
    in.inFlight = inFlight;
    // DDP, Megatron and DeepSpeed allocate gradient buffers once at setup; a single GPU's
    // zero_grad(set_to_none=True) frees them, so they reappear during each step's backward.
    // FSDP2 keeps no buffer: torchtitan train.py@9dec370 calls optimizers.zero_grad() (set_to_none)
    // before each step's forward, and the sharded gradients reappear block by block in backward.
    // torch DDP without gradient_as_bucket_view: param.grad is its own tensor, freed by zero_grad and made again in
    // backward, beside the reducer's resident buckets (overheads.cpp ddpBucketBytes).
    in.gradientsResident = par.gpus > 1 && !par.fsdp2() && !par.fsdp1() && !(torchDdp(r) && !par.gradientAsBucketView);
    return in;
}

/// Why the caching-allocator replay cannot follow this run tensor by tensor (empty: it can).
std::string replayRefusal(const RunSpec& r)
{
    if (r.activationOffloading)
        return "not replayed with activation offloading: which saved tensors stay on the GPU is known as a "
               "total, not tensor by tensor";
    return {};
}

/// The parameter tensors of this GPU as the allocator replay places them.
std::vector<ParamShape> paramShapes(const std::vector<LocalParam>& params)
{
    std::vector<ParamShape> out;
    out.reserve(params.size());
    for (const LocalParam& p : params)
        out.push_back({ checkedMul(p.rows, p.cols), p.copies, p.name.starts_with("layers."), p.trainable });
    return out;
}

/// The caching-allocator replay (allocation_trace.h) of the reported stage: the three counters
/// and whether fragmentation alone would run out of memory. It reads the lean estimate's step
/// inputs and changes none of its numbers: PyTorch releases its cached blocks and retries
/// before it raises out of memory (release_cached_blocks), so reserved memory above the GPU is
/// not an OOM by itself and the verdict stays the live peak against the usable memory.
void replayAllocator(Report& rep, const ModelSpec& m, const RunSpec& r, const std::vector<ParamTensor>& tensors,
    const StageSlice& slice, const StageSlice& actSlice)
{
    rep.allocatorNote = replayRefusal(r);
    if (!rep.allocatorNote.empty())
        return;
    // The same saved tensors as the lean estimate, now with each one's size and place.
    SavedTensorSizes sizes;
    const ActivationSet acts = trainingActivations(m, r, actSlice, true, &sizes); // sizes come with the listing
    Bytes listed = 0;
    for (const SavedTensorSize& t : sizes.saved)
        listed = checkedAdd(listed, checkedMul(t.bytesEach, t.count));
    if (listed != rep.activations.bytes) { // a saved tensor outside the list: no replay rather than a guess
        rep.allocatorNote = "not replayed: the saved tensors' list does not add up to the activations";
        return;
    }
    ReplayInputs in;
    static_cast<StepInputs&>(in) = rep.stepInputs;
    const std::vector<LocalParam> local = localParameters(tensors, m, r, slice);
    in.params = paramShapes(local);
    // Each tensor's own working weight: they differ in dtype (QLoRA) or in being gathered (FSDP2's root).
    for (size_t i = 0; i < local.size(); ++i)
        in.params[i].weightsEach = modelStates({ local[i] }, r, false).weights / std::max<Count>(1, local[i].copies);
    // What the caching allocator serves besides the model tensors, and what it never sees: the
    // CUDA context, and NCCL's own cudaMalloc'd buffers (DDP's gradient buckets are PyTorch
    // tensors). cuBLAS's workspace comes from the caching allocator (PyTorch >= 1.11,
    // CublasHandlePool getNewWorkspace). The lean 512 B rounding part is what the replay models.
    const Bytes buckets = !r.overheads.commBufferBytes ? ddpBucketBytes(r, in.gradients) : 0;
    for (const Component& c : rep.overheadParts) {
        if (c.key == "cuda_context" || c.key == "symm_mem_workspace")
            in.outsideAllocator += c.bytes;
        else if (c.key == "comm_buffers")
            in.outsideAllocator += c.bytes - buckets;
        else if (c.key != "zero3_gather" && c.key != "allocator")
            in.residentExtras.push_back(c.bytes);
    }
    if (buckets > 0 && torchDdp(r)) {
        // DDP's buckets as its reducer sizes them: the first 1 MiB (dist._DEFAULT_FIRST_BUCKET_BYTES), then
        // bucket_cap_mb (25 MiB) each, filled parameter by parameter (whole parameters, here whole MiB).
        Bytes left = buckets;
        for (Bytes cap = kMiB; left > 0; cap = 25 * kMiB) {
            in.residentExtras.push_back(std::min(cap, left));
            left -= in.residentExtras.back();
        }
    } else if (buckets > 0) {
        in.residentExtras.insert(in.residentExtras.end(), { buckets / 2, buckets - buckets / 2 });
    }
    in.ringForwardSizes = std::move(sizes.ringForward);
    in.doraForwardSizes = std::move(sizes.doraForward);
    in.ringBackwardSizes = std::move(sizes.ringBackward);
    in.savedSizes = std::move(sizes.saved);
    in.recomputeSizes = std::move(sizes.recompute);
    in.largestLayerTensor = acts.largestLayerTensorBytes;
    if (slice.last) // the loss's forward transients as tensors, or as one block where they are not split
        in.lossForwardParts = acts.lossForwardParts[0] + acts.lossForwardParts[1] == in.lossForward
            ? acts.lossForwardParts
            : std::array<Bytes, 2> { in.lossForward, 0 };
    switch (r.optimizer) {
    case Optimizer::Adam:
    case Optimizer::AdamW:
    case Optimizer::AdamW8bit:
        in.optimizerStateTensors = 2;
        break;
    case Optimizer::Sgd:
        in.optimizerStateTensors = 0;
        break;
    default:
        in.optimizerStateTensors = 1;
    }
    // cudaMalloc fails when the GPU is full, not at run.safety_margin: the whole memory less
    // what the allocator does not hold.
    CachingAllocatorConfig cfg;
    cfg.expandableSegments = r.allocator.expandableSegments;
    if (r.gpu && r.gpu->memoryBytes > 0)
        cfg.capacityBytes = std::max<Bytes>(1, r.gpu->memoryBytes - in.outsideAllocator);
    const AllocatorPeaks p = replayTrainingStep(in, cfg);
    rep.allocatorReplayed = true;
    rep.peakAllocatedBytes = p.peakAllocatedBytes;
    rep.peakReservedBytes = p.peakReservedBytes;
    // nvidia-smi also counts the paged optimizer states, resident once a step has prefetched them, as far as the GPU
    // holds them beside the allocator's segments (the driver evicts the rest).
    rep.peakDeviceBytes = checkedAdd(p.peakReservedBytes, in.outsideAllocator);
    const Bytes room = r.gpu && r.gpu->memoryBytes > 0 ? std::max<Bytes>(0, r.gpu->memoryBytes - rep.peakDeviceBytes)
                                                       : rep.pagedOptimizerBytes;
    rep.peakDeviceBytes = checkedAdd(rep.peakDeviceBytes, std::min(rep.pagedOptimizerBytes, room));
    rep.allocatorOutOfMemory = p.outOfMemory;
    rep.allocatorExtrapolated = p.extrapolated;
    if (!p.outOfMemory || !rep.fits)
        return;
    // The model's own answer to "would expandable segments avoid it": the same replay with them.
    bool expandableAvoids = false;
    if (!cfg.expandableSegments) {
        cfg.expandableSegments = true;
        expandableAvoids = !replayTrainingStep(in, cfg).outOfMemory;
    }
    rep.warnings.push_back(std::string("allocator: the run fits by its live peak, but the caching allocator's "
                                       "fragmentation would run out of memory (no cached block fits even after "
                                       "releasing the cache)")
        + (expandableAvoids ? "; PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True avoids it "
                              "(run.allocator.expandable_segments)"
                : cfg.expandableSegments && !r.allocator.expandableSegments
                ? "; expandable segments (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True) would not avoid it"
                : ""));
}

/// The framework keys' combinations that the model does not cover are refused, naming the key.
/// torchao's NF4Tensor (torchao/dtypes/nf4tensor.py@77ca57d16844) always quantizes its block scales
/// again, and from_tensor / double_quantize_scalers assert that a weight splits into whole blocks of
/// 64 and its scales into whole blocks of 256 (to_nf4's defaults): torchtune cannot load anything else.
void validateTorchaoNf4(const ModelSpec& m, const RunSpec& r)
{
    if (!r.finetune.doubleQuant)
        throw InputError("run.finetune.double_quant",
            "false is bitsandbytes' format; torchao's NF4Tensor (run.finetune.quant \"torchao-nf4\") always "
            "quantizes its scales again: expected true");
    constexpr Count kWhole = 64 * 256;
    for (const ParamTensor& t : parameterTensors(m)) {
        const bool quantized
            = t.linear && t.group != ParamGroup::Router && (t.group != ParamGroup::Head || r.finetune.quantizeLmHead);
        if (quantized && t.elements() % kWhole != 0)
            throw InputError("run.finetune.quant",
                "\"torchao-nf4\" needs every quantized weight to split into whole blocks (64 elements, scales in "
                "groups of 256: a multiple of 16,384 elements), as torchao's to_nf4 asserts; "
                    + std::string(t.name) + " has " + formatCount(t.elements()));
    }
}

/// FSDP1 as modelled: FULL_SHARD (or HYBRID_SHARD) in the frameworks whose setup was read (core/src/
/// framework_profile.cpp); its own keys only with it.
void validateFsdp1(const RunSpec& r)
{
    const Parallelism& p = r.parallelism;
    const bool on = p.fsdp1() && r.mode == Mode::Training;
    for (const auto& [key, set] : { std::pair { "run.parallelism.no_sync", p.noSync.has_value() },
             std::pair { "run.parallelism.fsdp_wrap", p.fsdpWrap.has_value() } })
        if (set && !(on && p.zeroStage == 3))
            throw InputError(key, "applies to FSDP1 training: expected zero_stage 3 and sharding \"fsdp1\"");
    if (p.fsdpWrap && r.finetune.method == FinetuneMethod::Full)
        throw InputError("run.parallelism.fsdp_wrap",
            "applies to FSDP1 with adapters (LoRA); full fine-tuning "
            "has no frozen weights to wrap apart");
    // lit-gpt finetune/lora.py@8641822 setup(): "Quantization is currently not supported for multi-GPU training.
    // Please set devices=1 when using the --quantization flag."
    if (r.framework == Framework::Litgpt && r.mode == Mode::Training && r.finetune.method == FinetuneMethod::Qlora
        && p.gpus > 1)
        throw InputError("run.parallelism.gpus",
            "LitGPT refuses quantization on more than one GPU (\"Quantization is currently not supported for "
            "multi-GPU training\"): expected 1");
    if (!on)
        return;
    if (p.zeroStage != 3)
        throw InputError("run.parallelism.sharding",
            "\"fsdp1\" is modelled as FULL_SHARD (or HYBRID_SHARD with fsdp_shard_group): expected zero_stage 3, got "
                + n(p.zeroStage));
    if (r.framework != Framework::Plain && r.framework != Framework::HfTransformers && r.framework != Framework::Litgpt)
        throw InputError("run.parallelism.sharding",
            "\"fsdp1\" is modelled as plain PyTorch, the Hugging Face Trainer (accelerate) and LitGPT (Lightning) "
            "set it up; framework \""
                + std::string(toString(r.framework)) + "\" shards otherwise");
    if (p.pipelineParallel > 1)
        throw InputError("run.parallelism.sharding", "\"fsdp1\" is modelled without pipeline parallelism");
    // Lightning's FSDPStrategy and accelerate's FSDP1 plugin shard over data parallelism alone.
    if (p.tensorParallel > 1 || p.expertParallel > 1)
        throw InputError(p.tensorParallel > 1 ? "run.parallelism.tensor_parallel" : "run.parallelism.expert_parallel",
            "\"fsdp1\" is modelled as the Trainer and Lightning run it, over data parallelism only: expected 1");
    // TRL v0.25.0 trl/models/utils.py: sharded QLoRA skips prepare_model_for_kbit_training and keeps the adapters
    // in the quant storage type (autocast_adapter_dtype=False), and FSDP1 flattens only uniform dtypes: that path
    // (bnb_4bit_quant_storage) is not modelled.
    if (r.finetune.method == FinetuneMethod::Qlora)
        throw InputError("run.parallelism.sharding",
            "QLoRA under FSDP1 (bnb_4bit_quant_storage, TRL's sharded-QLoRA path) is not modelled; expected "
            "sharding \"zero\" or \"fsdp2\", or one GPU");
    if (r.framework == Framework::HfTransformers && p.fsdpWrap == FsdpWrap::Blocks)
        throw InputError("run.parallelism.fsdp_wrap",
            "the Hugging Face Trainer wraps a PeftModel with PEFT's fsdp_auto_wrap_policy (trainer.py "
            "_fsdp_qlora_plugin_updates), and PEFT's fp32 adapters cannot share a bf16 flat parameter: expected "
            "\"peft\"");
    if (p.offloadParams || p.offloadOptimizer)
        throw InputError(p.offloadParams ? "run.parallelism.offload_params" : "run.parallelism.offload_optimizer",
            "FSDP1's CPUOffload is not modelled; expected false with sharding \"fsdp1\"");
    if (r.keepLastBlockGathered)
        throw InputError("run.parallelism.reshard_after_forward",
            "\"all but last block\" is torchtitan's FSDP2 setting; FSDP1's FULL_SHARD reshards every block");
}

void validateFrameworkKeys(const ModelSpec& m, const RunSpec& r)
{
    const LossKind loss = effectiveLoss(r);
    const std::string lossName(toString(loss));
    if (loss != LossKind::Chunked) {
        for (const auto& [key, set] : { std::pair { "run.loss_chunks", r.lossChunks.has_value() },
                 std::pair { "run.loss_chunks_tokens", r.lossChunkTokens.has_value() },
                 std::pair { "run.loss_dtype", r.lossDtype.has_value() } })
            if (set)
                throw InputError(key, "applies to run.loss \"chunked\" only, the loss here is \"" + lossName + "\"");
    }
    if (r.lossChunks && r.lossChunkTokens)
        throw InputError(
            "run.loss_chunks_tokens", "expected either run.loss_chunks or run.loss_chunks_tokens, not both");
    if (r.lossDtype && *r.lossDtype != DType::Fp32 && *r.lossDtype != precisionRegime(r).activations)
        throw InputError("run.loss_dtype",
            "expected fp32 (upcast per chunk) or the logits' own type ("
                + std::string(toString(precisionRegime(r).activations)) + ")");
    if (r.finetune.baseFp32.value_or(false) && r.mode == Mode::Training
        && (r.finetune.method != FinetuneMethod::Lora || !mixedPrecision(r.precision)))
        throw InputError("run.finetune.base_fp32",
            "true applies to LoRA under mixed precision (a model loaded in fp32 and run under autocast)");
    if (r.sftTokenAccuracy && r.mode == Mode::Training && loss != LossKind::HfShift)
        throw InputError("run.sft_token_accuracy",
            "is TRL's SFTTrainer beside transformers' loss: expected run.loss \"hf-shift\" (with Liger's fused loss "
            "SFTTrainer keeps no logits), got \""
                + lossName + "\"");
    if (loss == LossKind::Fused && r.parallelism.tensorParallel > 1)
        throw InputError(
            "run.loss", "\"fused\" (Liger) is modelled without tensor parallelism; expected tensor_parallel 1");
    if (r.optimizerInBackward && r.gradientAccumulationSteps != 1)
        throw InputError("run.optimizer_in_backward",
            "expected gradient_accumulation_steps 1 (torchtune: optimizer in backward "
            "is not compatible with gradient accumulation), got "
                + n(r.gradientAccumulationSteps));
    if (r.optimizerImpl == OptimizerImpl::Paged32 && r.optimizer != Optimizer::AdamW && r.optimizer != Optimizer::Adam)
        throw InputError(
            "run.optimizer_impl", "\"paged-32bit\" is bitsandbytes' PagedAdamW; expected optimizer adamw or adam");
    if (r.optimizerImpl == OptimizerImpl::Paged8 && r.optimizer != Optimizer::AdamW8bit)
        throw InputError(
            "run.optimizer_impl", "\"paged-8bit\" is bitsandbytes' PagedAdamW8bit; expected optimizer adamw-8bit");
    if ((!r.finetune.doubleQuant || r.finetune.quantizeLmHead || r.finetune.quant)
        && r.finetune.method != FinetuneMethod::Qlora && r.mode == Mode::Training)
        throw InputError(r.finetune.quant   ? "run.finetune.quant"
                : r.finetune.quantizeLmHead ? "run.finetune.quantize_lm_head"
                                            : "run.finetune.double_quant",
            "applies to finetune method qlora only");
    // DeepSpeed runtime/engine.py@e2dc3eeb _do_optimizer_sanity_check: bf16 with grad_accum_dtype fp32 at ZeRO-1 and
    // no offload runs BF16_Optimizer (bf16 gradients beside its fp32 buffer), modelled without ZeRO only.
    if (r.framework == Framework::Deepspeed && r.mode == Mode::Training && r.precision == Precision::MixedBf16
        && r.gradientDtype == DType::Fp32 && r.parallelism.zeroStage == 1 && !r.parallelism.offloadOptimizer)
        throw InputError("run.gradient_dtype",
            "DeepSpeed runs BF16_Optimizer for bf16 with fp32 gradient accumulation at ZeRO-1, which is modelled "
            "without ZeRO only; expected it unset (the model's type) or zero_stage 0 or 2");
    // Megatron-LM core_v0.15.0 optimizer_config.py __post_init__: the precision-aware optimizer needs Adam and the
    // distributed optimizer; exp_avg(_sq)_dtype "can only be fp32 when not using precision-aware optimizer".
    if (r.precisionAwareOptimizer && r.mode == Mode::Training) {
        if (r.framework != Framework::Megatron)
            throw InputError("run.precision_aware_optimizer", "is Megatron-LM's: expected framework \"megatron\"");
        if (r.optimizer != Optimizer::AdamW && r.optimizer != Optimizer::Adam)
            throw InputError("run.precision_aware_optimizer", "only supported with adam (Megatron asserts it)");
        if (r.parallelism.zeroStage < 1)
            throw InputError("run.precision_aware_optimizer",
                "only supported with the distributed optimizer: expected zero_stage 1 or more");
    }
    if (r.optimizerStateDtype && !r.precisionAwareOptimizer && r.mode == Mode::Training)
        throw InputError("run.optimizer_state_dtype",
            "applies with precision_aware_optimizer (Megatron-LM asserts fp32 states without it; torch.optim keeps "
            "the states in the parameters' type, which run.precision sets)");
    // DoRA as PEFT 0.18.0 runs it (tuners/lora/dora.py, variants.py@77daa8d3); torchtune's DoRALinear and
    // LitGPT's keep other tensors, and a tensor-parallel base shards what PEFT's norm reads whole.
    if (r.finetune.dora && r.mode == Mode::Training) {
        if (r.finetune.method == FinetuneMethod::Full)
            throw InputError("run.finetune.dora", "applies to finetune method lora or qlora only");
        if (r.framework != Framework::HfTransformers)
            throw InputError("run.finetune.dora",
                "modelled as PEFT 0.18.0 runs it: expected framework \"hf-transformers\", got \""
                    + std::string(toString(r.framework)) + "\"");
        if (r.parallelism.tensorParallel > 1 || r.parallelism.pipelineParallel > 1)
            throw InputError("run.finetune.dora",
                "modelled without tensor or pipeline parallelism (PEFT's norm reads whole weights)");
        if (r.finetune.method == FinetuneMethod::Qlora && effectiveNf4Format(r) != Nf4Format::Bitsandbytes)
            throw InputError(
                "run.finetune.dora", "modelled with bitsandbytes' 4-bit weights (PEFT dequantize_module_weight)");
    }
    // The upcast TRL or PEFT makes of a transformers model that bitsandbytes quantized.
    if (r.finetune.kbitPreparation.value_or(KbitPreparation::None) != KbitPreparation::None
        && r.mode == Mode::Training) {
        const char* key = "run.finetune.kbit_preparation";
        if (r.finetune.method != FinetuneMethod::Qlora)
            throw InputError(key, "applies to finetune method qlora only");
        if (r.framework != Framework::HfTransformers)
            throw InputError(key,
                "is TRL's or PEFT's (prepare_model_for_kbit_training): expected framework \"hf-transformers\", got \""
                    + std::string(toString(r.framework)) + "\"");
        if (effectiveNf4Format(r) != Nf4Format::Bitsandbytes)
            throw InputError(key,
                "TRL and PEFT cast nothing for a torchao-quantized model (utils/other.py@77daa8d3): expected "
                "run.finetune.quant \"bnb-nf4\"");
    }
    if (r.finetune.method == FinetuneMethod::Qlora && r.mode == Mode::Training
        && effectiveNf4Format(r) == Nf4Format::Torchao)
        validateTorchaoNf4(m, r);
    if (r.keepLastBlockGathered && r.parallelism.zeroStage != 3)
        throw InputError(
            "run.parallelism.reshard_after_forward", "expected zero_stage 3 (FSDP) for \"all but last block\"");
    // torchtitan@9dec370 parallelize_llama.py: async TP asserts compile ("Async TP requires --training.compile")
    // and applies it to the TP mesh, whose plan is always sequence-parallel.
    if (r.parallelism.asyncTp && r.mode == Mode::Training)
        if (r.framework != Framework::Torchtitan || !r.compile || r.parallelism.tensorParallel < 2
            || !r.parallelism.sequenceParallel)
            throw InputError("run.parallelism.async_tp",
                "modelled as torchtitan applies it: framework torchtitan, compile true, tensor_parallel above 1 and "
                "sequence_parallel true; expected false or no key");
    validateFsdp1(r);
    // lit-gpt finetune/lora.py@8641822 setup(): `if "mixed" in precision: raise ValueError("Quantization and mixed
    // precision is not supported.")`.
    if (r.framework == Framework::Litgpt && r.mode == Mode::Training && r.finetune.method == FinetuneMethod::Qlora
        && mixedPrecision(r.precision))
        throw InputError("run.precision",
            "LitGPT refuses quantization with mixed precision (\"Quantization and mixed precision is not "
            "supported.\"): expected bf16 or fp16 (bf16-true, 16-true)");
    if (r.keepAllGathered && !(r.parallelism.zeroStage == 3 && r.parallelism.fsdp2()))
        throw InputError("run.parallelism.reshard_after_forward",
            "false is modelled for FSDP2 (zero_stage 3, sharding \"fsdp2\"); expected true or no key");
    if (r.compile) {
        // The min-cut rule (activation_model.cpp) is stated for the dense blocks it was read on.
        const FrameworkProfile& f = frameworkProfile(r.framework);
        const bool compiledLoss = r.compileLoss.value_or(f.compileLoss);
        const std::string fw(toString(r.framework));
        const std::string why = r.mode != Mode::Training ? "training (the saved tensors it changes exist only there)"
            : f.compileScope.empty()
            ? "framework torchtitan or torchtune (what framework \"" + fw + "\" compiles is not modelled yet)"
            : r.attention != AttentionImpl::Flash   ? "attention \"flash\" (a compiled eager softmax is not modelled)"
            : m.moe.enabled()                       ? "a dense model (compiled MoE routing is not modelled)"
            : m.attentionType != AttentionType::Mha ? "multi-head or grouped-query attention (not MLA)"
            : compiledLoss && loss != LossKind::Upcast
                && !(loss == LossKind::Chunked && lossSetup(r, 1, 1).chunkUpcast && !f.lossUpcastInGraph)
            ? std::string(f.lossUpcastInGraph ? "torchtitan's compiled loss with run.loss \"upcast\""
                                              : "torchtune's compiled loss with run.loss \"upcast\" or \"chunked\" "
                                                "upcast per chunk")
            : "";
        if (!why.empty())
            throw InputError(
                r.compileLoss && compiledLoss && loss != LossKind::Upcast ? "run.compile_loss" : "run.compile",
                "true is modelled for " + why);
    } else if (r.compileLoss.value_or(false)) {
        throw InputError("run.compile_loss", "true compiles the loss with the blocks: expected run.compile true");
    }
    if (r.fp8 && r.mode == Mode::Training && frameworkProfile(r.framework).fp8Torchao
        && (m.moe.enabled() || m.attentionType != AttentionType::Mha || r.finetune.method != FinetuneMethod::Full))
        throw InputError("run.fp8",
            "true with framework torchtitan is torchao's Float8Linear, modelled on dense multi-head or grouped-query "
            "blocks trained in full (wq, wk, wv, wo, w1, w3, w2)");
    // DeepSpeed's ZeRO buckets (runtime/zero/config.py@e2dc3eeb) have no meaning elsewhere.
    const bool deepSpeedZero = r.framework == Framework::Deepspeed && r.parallelism.zeroStage >= 1;
    if (r.parallelism.reduceBucketSize && !deepSpeedZero)
        throw InputError("run.parallelism.reduce_bucket_size",
            "only with run.framework \"deepspeed\" and zero_stage 1-3 (DeepSpeed's ZeRO gradient bucket)");
    if (r.parallelism.overlapComm && !deepSpeedZero)
        throw InputError("run.parallelism.overlap_comm",
            "only with run.framework \"deepspeed\" and zero_stage 1-3 (DeepSpeed's ZeRO option)");
    const bool deepSpeedZero3 = deepSpeedZero && r.parallelism.zeroStage == 3 && r.mode == Mode::Training;
    const std::pair<const std::optional<Count>*, const char*> stage3Keys[] = {
        { &r.parallelism.stage3PrefetchBucketSize, "run.parallelism.stage3_prefetch_bucket_size" },
        { &r.parallelism.stage3MaxLiveParameters, "run.parallelism.stage3_max_live_parameters" },
        { &r.parallelism.stage3MaxReuseDistance, "run.parallelism.stage3_max_reuse_distance" },
        { &r.parallelism.stage3ParamPersistenceThreshold, "run.parallelism.stage3_param_persistence_threshold" },
    };
    for (const auto& [value, key] : stage3Keys)
        if (value->has_value() && !deepSpeedZero3)
            throw InputError(key, "only with run.framework \"deepspeed\" and zero_stage 3 (a DeepSpeed ZeRO-3 option)");
    if (r.parallelism.fp8AllGather
        && !(r.fp8 && frameworkProfile(r.framework).fp8Torchao && r.parallelism.zeroStage == 3 && r.parallelism.fsdp2()
            && r.mode == Mode::Training))
        throw InputError("run.parallelism.fp8_all_gather",
            "true is torchao's enable_fsdp_float8_all_gather: expected run.fp8 true, framework torchtitan, "
            "zero_stage 3 and sharding \"fsdp2\"");
    if (r.activationOffloading && r.mode == Mode::Training
        && (r.framework != Framework::Torchtune || r.checkpointing.kind != Checkpointing::Kind::Full))
        throw InputError("run.activation_offloading",
            "true is modelled as torchtune's OffloadActivations, which runs with whole-layer checkpointing: expected "
            "framework torchtune and checkpointing \"full\"");
    if (r.checkpointing.kind == Checkpointing::Kind::SelectiveOp && r.mode == Mode::Training) {
        // The save list is counted on torchtitan's Llama block (7 mm per block).
        const char* why = m.moe.enabled()           ? "a dense model (MoE blocks have other mm counts)"
            : m.attentionType != AttentionType::Mha ? "multi-head or grouped-query attention (not MLA)"
            : !m.gated()                            ? "a gated MLP (w1, w3, w2)"
            : r.attention != AttentionImpl::Flash   ? "attention \"flash\" (SDPA is in the save list)"
            : r.fp8 && !(frameworkProfile(r.framework).fp8Torchao && r.compile)
            ? "fp8 off, or fp8 with framework torchtitan and run.compile: eager op-level checkpointing with torchao's "
              "float8 caches the aten.abs output of every linear input and unsharded weight (torchtitan "
              "parallelize_llama.py@9dec370 _save_list), which is not modelled"
            : r.finetune.method != FinetuneMethod::Full ? "full fine-tuning (torchtitan trains all weights)"
                                                        : nullptr;
        if (why)
            throw InputError(
                "run.checkpointing", std::string("\"selective-op\" (torchtitan's save list) expects ") + why);
    }
}

// string_views: comparing a std::string with a const char* measured its length each time.
constexpr std::string_view kLoraTargets[]
    = { "q", "k", "v", "o", "gate", "up", "down", "q_a", "q_b", "kv_a", "kv_b", "all-linear" };

} // namespace

struct EstimateCache::Impl {
    const ModelSpec* model = nullptr;
    std::vector<ParamTensor> tensors;
    ParameterCount params;
    struct States {
        RunSpec run;
        Count stage;
        bool explained;
        ModelStateBytes states;
    };
    std::vector<States> states;
    size_t nextState = 0; ///< the entry to overwrite when `states` is full
    bool holdActivations = false;
    /// The first, a middle and the last stage's; apart for FSDP1 flat parameters holding adapters, whose frozen
    /// weights keep what full fine-tuning keeps (a ZeRO-3 layout of the planner's beside its ZeRO-0 one).
    std::optional<ActivationSet> heldActivations[2][3];

    /// Parameter tensors of `m`, rebuilt only when the model object changes.
    void forModel(const ModelSpec& m)
    {
        if (model == &m)
            return;
        model = &m;
        tensors = parameterTensors(m);
        params = countParameters(tensors, m);
        states.clear();
        nextState = 0;
    }
    const ModelStateBytes* find(const RunSpec& r, Count stage, bool explain) const
    {
        for (const States& s : states)
            if (s.stage == stage && (s.explained || !explain) && sameStateInputs(s.run, r))
                return &s.states;
        return nullptr;
    }
};

EstimateCache::EstimateCache()
    : m_impl(std::make_unique<Impl>())
{
}
EstimateCache::~EstimateCache() = default;

void EstimateCache::holdActivations(bool on)
{
    m_impl->holdActivations = on;
    for (auto& byBase : m_impl->heldActivations)
        for (std::optional<ActivationSet>& a : byBase)
            a.reset();
}

void validateScenario(const Scenario& sc)
{
    validateRun(sc.model, sc.run);
}

namespace {

/// Hybrid state-space models: their shapes, and what is modelled of them (the serving engines' budgets).
void validateHybrid(const ModelSpec& m, const RunSpec& r)
{
    const SsmSpec& s = m.ssm;
    if (s.enabled()) {
        if (!(s.numHeads > 0 && s.headDim > 0 && s.stateSize > 0 && s.groups > 0 && s.numHeads % s.groups == 0))
            throw InputError("model.ssm",
                "expected num_heads, head_dim, state_size and groups above 0, and num_heads a multiple of groups");
        // One mixer per block (Nemotron-H, Granite-4.0-H), or Mamba-2 beside attention in every block (Falcon-H1).
        if (s.parallel ? s.layers != m.attentionLayers() || s.layers != m.numLayers
                       : checkedAdd(s.layers, m.attentionLayers()) > m.numLayers)
            throw InputError("model.ssm.layers",
                s.parallel ? "expected model.num_layers (" + n(m.numLayers)
                        + ") with parallel: Mamba-2 beside attention in every block, got " + n(s.layers)
                           : "expected at most model.num_layers - model.attention_layers ("
                        + n(m.numLayers - m.attentionLayers()) + "): one mixer per block, got " + n(s.layers));
    }
    // What each block computes in order is not in the scenario (only how many blocks of each kind), and the
    // training tensors of the selective scan as mamba_ssm's kernels save them are not modelled yet.
    if (r.mode == Mode::Training)
        throw InputError("model.ssm",
            std::string("serving with vllm or sglang (hybrid state-space models: the training activations of the ")
                + s.label() + " scan are not modelled yet)");
    if (!r.serving || r.serving->engine == ServingEngine::HfGenerate)
        throw InputError("model.ssm",
            std::string("serving with vllm or sglang (hybrid state-space models: Transformers' generate() and its "
                        "cache of ")
                + s.label() + " states are not modelled yet)");
    // llama.cpp places each layer's tensors and caches by layer index (which blocks are attention is not in
    // the scenario), and its recurrent-state buffers are not modelled yet.
    if (r.serving->engine == ServingEngine::LlamaCpp)
        throw InputError("model.ssm",
            "serving with vllm or sglang (llama.cpp's recurrent-state buffers and per-layer offload of hybrid models "
            "are not modelled yet)");
    if (r.parallelism.pipelineParallel > 1)
        throw InputError("run.parallelism.pipeline_parallel",
            "1 with a hybrid state-space model (which blocks a stage holds depends on the layer order, which the "
            "scenario does not give)");
    // A vision tower beside them only as vLLM's --language-model-only serves it (without the tower).
    if (m.slidingWindow > 0 || m.attentionType == AttentionType::Mla
        || (m.vision.enabled() && !r.serving->dropsVisionTower()))
        throw InputError("model.ssm",
            "full multi-head attention in the attention blocks of a hybrid state-space model (sliding windows, "
            "MLA and vision towers beside Mamba-2 layers are not modelled)");
}

/// The shape Qwen's two towers share: a Conv3d over frames, blocks of whole heads, a merger of patches.
bool qwenTowerShaped(const VisionSpec& v)
{
    return v.intermediateSize > 0 && v.numLayers > 0 && v.numHeads > 0 && v.patchSize > 0 && v.temporalPatchSize > 0
        && v.spatialMergeSize > 0 && v.hiddenSize % v.numHeads == 0;
}

} // namespace

void validateRun(const ModelSpec& m, const RunSpec& r)
{
    const Parallelism& p = r.parallelism;
    if (!(m.numHeads % m.numKvHeads == 0))
        throw InputError("model.num_kv_heads",
            "expected a divisor of model.num_heads (" + n(m.numHeads) + "), got " + n(m.numKvHeads));
    if (m.rotaryDim > m.headDim)
        throw InputError(
            "model.rotary_dim", "expected at most model.head_dim (" + n(m.headDim) + "), got " + n(m.rotaryDim));
    if (!(m.moe.topK <= m.moe.numExperts))
        throw InputError("model.moe.top_k",
            "expected at most model.moe.num_experts (" + n(m.moe.numExperts) + "), got " + n(m.moe.topK));
    if (!(!m.moe.enabled() || m.moe.topK >= 1))
        throw InputError("model.moe.top_k", "expected at least 1 with experts");
    if (!(m.moe.firstDenseLayers <= m.numLayers))
        throw InputError("model.moe.first_dense_layers",
            "expected at most model.num_layers (" + n(m.numLayers) + "), got " + n(m.moe.firstDenseLayers));
    if (!(m.moe.layerInterval >= 1))
        throw InputError("model.moe.layer_interval", "expected at least 1, got " + n(m.moe.layerInterval));
    // A hybrid's blocks are counted by kind, not placed: where every Nth MLP falls is not known.
    if (m.moe.enabled() && m.moe.layerInterval > 1 && m.hybrid())
        throw InputError("model.moe.layer_interval",
            "1 in a hybrid model (blocks without attention or an MLP are counted, not placed, so every Nth layer's "
            "experts cannot be placed among them)");
    // OLMo-2's norms read the sublayer outputs: which of them keep tensors under LoRA, and how other
    // frameworks build the block, is not modelled (the HF eager block is).
    if (m.normAfterSublayers && r.mode == Mode::Training
        && (r.finetune.method != FinetuneMethod::Full
            || (r.framework != Framework::Plain && r.framework != Framework::HfTransformers)))
        throw InputError("model.norm_after_sublayers",
            "modelled for full training with framework plain or hf-transformers only (LoRA, QLoRA and other "
            "frameworks place the kept tensors differently)");
    // gpt-oss trains through a per-expert loop whose clamps, sigmoid and (up + 1) product keep other tensors
    // than a SwiGLU, and an eager softmax over the scores and the sinks: not modelled, so not guessed.
    if (m.clampedSwiGlu && r.mode == Mode::Training)
        throw InputError("model.clamped_swiglu",
            "inference or serving (gpt-oss: the training activations of its clamped GLU experts and attention "
            "sinks are not modelled)");
    // Gated attention (Qwen3-Next, Qwen3.5): the gate's tensors in training and in one request's forward, and
    // llama.cpp's graph of it, are not modelled; the engines' weights and profiling forward are.
    if (m.attentionOutputGate && !m.ssm.enabled() // a hybrid's own refusal (model.ssm) says more
        && (r.mode == Mode::Training || !r.serving
            || (r.serving->engine != ServingEngine::Vllm && r.serving->engine != ServingEngine::Sglang)))
        throw InputError("model.attention_output_gate",
            "serving with vllm or sglang (the attention output gate's activations in training and in one "
            "request's estimate, and llama.cpp's buffers for it, are not modelled yet)");
    // vLLM and SGLang (quantization "mxfp4") and llama.cpp (MXFP4 GGUF tensors) keep gpt-oss's experts as the
    // checkpoint ships them; the engines' budgets would price them at run.precision, about 3.8 x too much.
    if (m.clampedSwiGlu && r.serving)
        throw InputError("model.clamped_swiglu",
            "inference without a serving engine (gpt-oss: the engines keep its MXFP4 experts, which their "
            "weight budget does not model yet)");
    if (m.mrope && m.position != PositionKind::Rope)
        throw InputError("model.mrope", "false without RoPE (model.position rope): multimodal RoPE is a kind of RoPE");
    const bool llama4Tower = m.vision.enabled() && m.vision.kind == VisionKind::Llama4;
    const bool qwen25Tower = m.vision.enabled() && m.vision.qwen25();
    if (r.serving && r.serving->languageModelOnly && !m.vision.qwen() && !llama4Tower && !qwen25Tower)
        throw InputError("run.serving.language_model_only",
            "false without Qwen3.5's, Qwen2.5-VL's or Llama 4's vision tower (model.vision.kind qwen-vit, "
            "qwen2.5-vit or llama4): what vLLM drops of other towers is not modelled");
    if (m.vision.enabled() && m.vision.qwen()) {
        const VisionSpec& v = m.vision;
        if (!(qwenTowerShaped(v) && v.outHiddenSize > 0 && v.numPositionEmbeddings > 0))
            throw InputError("model.vision",
                "expected intermediate_size, num_layers, num_heads, patch_size, temporal_patch_size, "
                "spatial_merge_size, out_hidden_size and num_position_embeddings above 0 and hidden_size of num_heads");
        // Qwen3.5's tower: its parameters are counted; its activations in training, the engines' profiling of it
        // and llama.cpp's mmproj are not modelled. vLLM's --language-model-only builds the model without it
        // (vllm/model_executor/models/qwen3_5.py, _mark_tower_model).
        if (!(r.serving && r.serving->dropsVisionTower()))
            throw InputError("model.vision",
                "serving with vllm and run.serving.language_model_only (Qwen3.5's vision transformer: its "
                "activations, and the engines' profiling of it on dummy images, are not modelled)");
    } else if (m.vision.enabled()) {
        const VisionSpec& v = m.vision;
        if (v.qwen25()) {
            if (!qwenTowerShaped(v))
                throw InputError("model.vision",
                    "expected intermediate_size, num_layers, num_heads, patch_size, temporal_patch_size and "
                    "spatial_merge_size above 0 and hidden_size of num_heads");
            if (v.outHiddenSize != m.hiddenSize) // the merger's output replaces image tokens' embeddings
                throw InputError("model.vision.out_hidden_size",
                    "equal to model.hidden_size (" + n(m.hiddenSize) + "): the merger feeds the language model");
        } else if (!(v.intermediateSize > 0 && v.numLayers > 0 && v.numHeads > 0 && v.patchSize > 0 && v.imageSize > 0
                       && v.imageSize % v.patchSize == 0 && v.hiddenSize % v.numHeads == 0))
            throw InputError("model.vision",
                "expected intermediate_size, num_layers, num_heads, image_size and patch_size above 0, image_size a "
                "multiple of patch_size and hidden_size of num_heads");
        if (v.kind == VisionKind::Llama4 && !(v.projectorInputDim > 0 && v.outHiddenSize > 0))
            throw InputError("model.vision", "expected projector_input_dim and out_hidden_size above 0 (Llama 4)");
        // bitsandbytes quantizes every nn.Linear of the checkpoint, the tower's too; that is not modelled.
        if (r.mode == Mode::Training && r.finetune.method == FinetuneMethod::Qlora)
            throw InputError("model.vision",
                std::string("full training or LoRA with the vision tower (QLoRA also quantizes the tower's linears, "
                            "which is not modelled); for text-only QLoRA ")
                    + (v.qwen25() ? "use the language model's preset (Qwen2.5-VL 7B's is qwen2.5-7b's shapes)"
                                  : "import the language model alone (its text_config)"));
        // vLLM's profiling run encodes dummy images (gpu_model_runner profile_run), an activation peak that is
        // not modelled; llama.cpp loads the tower from a separate --mmproj file.
        // vLLM builds Llama 4 and Qwen2.5-VL without their towers under --language-model-only (mllama4.py,
        // qwen2_5_vl.py: _mark_tower_model; self.visual = None from 0.10.1).
        const bool dropped = (llama4Tower || qwen25Tower) && r.serving && r.serving->dropsVisionTower();
        if (r.serving
            && ((r.serving->engine == ServingEngine::Vllm && !dropped) || r.serving->engine == ServingEngine::LlamaCpp
                || (qwen25Tower && r.serving->engine == ServingEngine::Sglang)))
            throw InputError("model.vision",
                std::string(llama4Tower
                        ? "serving with vllm and run.serving.language_model_only, which leaves Llama 4's "
                          "tower out, or with sglang before 0.5.8"
                        : qwen25Tower
                        ? "serving with vllm and run.serving.language_model_only, which leaves Qwen2.5-VL's tower out, "
                          "or with hf-generate (SGLang's budget for it is not modelled)"
                        : "serving with sglang or hf-generate")
                    + " (vLLM profiles the vision encoder on dummy images and llama.cpp loads it from an --mmproj "
                      "file, neither modelled yet)");
    }
    if (!(m.attentionFreeLayers >= 0 && m.attentionFreeLayers <= m.numLayers))
        throw InputError("model.attention_layers",
            "expected from 0 to model.num_layers (" + n(m.numLayers) + "), got " + n(m.attentionLayers()));
    if (!(m.mlpFreeLayers >= 0 && m.mlpFreeLayers <= m.numLayers))
        throw InputError("model.mlp_layers",
            "expected from 0 to model.num_layers (" + n(m.numLayers) + "), got " + n(m.mlpLayers()));
    if (m.hybrid())
        validateHybrid(m, r);
    // transformers' Llama 4 runs every expert on every token (modeling_llama4.py Llama4TextMoe: repeat, bmm), so
    // training and hf-generate keep num_experts times a routed MoE's tensors; the engines route top-k.
    const bool engine = r.mode != Mode::Training && r.serving && r.serving->engine != ServingEngine::HfGenerate;
    if (m.moe.enabled() && m.moe.everyExpertEveryToken && !engine)
        throw InputError("model.moe.every_expert_every_token",
            "serving with vllm, sglang or llama.cpp (transformers' Llama4TextMoe runs every expert on every token, "
            "weighting the unrouted ones by zero; the tensors that keeps in training and in hf-generate are not "
            "modelled)");
    if (m.chunkedLocalAttention) {
        if (!(m.slidingWindow > 0))
            throw InputError("model.sliding_window", "expected the chunk (above 0) with model.chunked_local_attention");
        // transformers has no flash kernel for it and builds the chunk mask as a T x T tensor under sdpa
        // (masking_utils.py@4.57.1 sdpa_mask): not modelled, so training and hf-generate are refused.
        if (!engine)
            throw InputError("model.chunked_local_attention",
                "serving with vllm, sglang or llama.cpp (what transformers keeps for chunked attention, a T x T mask "
                "under sdpa, is not modelled)");
    }
    // Phi-3.5-MoE trains with SparseMixer (modeling_phimoe.py sparsemixer: Gumbel-sampled experts, a custom
    // autograd multiplier keeping the masked gates) and multiplies the MoE input by uniform noise twice
    // (input_jitter_noise): tensors no other router keeps. Its inference routes top-k like Mixtral.
    if (m.moe.sparseMixer && r.mode == Mode::Training)
        throw InputError("model.moe.sparse_mixer",
            "inference or serving (Phi-3.5-MoE: the training tensors of SparseMixer routing and input jitter are not "
            "modelled)");
    if (m.attentionType == AttentionType::Mla)
        if (!(m.mla.kvLoraRank > 0 && m.mla.vHeadDim > 0 && m.mla.qkNopeHeadDim + m.mla.qkRopeHeadDim > 0))
            throw InputError(
                "model.mla", "expected kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim and v_head_dim above 0");
    if (m.position == PositionKind::Learned && r.mode == Mode::Training)
        if (!(r.sequenceLength <= m.maxPositionEmbeddings))
            throw InputError("run.sequence_length",
                "expected at most model.max_position_embeddings (" + n(m.maxPositionEmbeddings)
                    + ") with learned positions, got " + n(r.sequenceLength));

    const Count tpPp = p.tensorParallel * p.pipelineParallel;
    if (!(p.gpus % tpPp == 0))
        throw InputError("run.parallelism.gpus",
            "expected a multiple of tensor_parallel x pipeline_parallel (" + n(tpPp) + "), got " + n(p.gpus));
    if (!(p.pipelineParallel <= m.numLayers))
        throw InputError("run.parallelism.pipeline_parallel",
            "expected at most model.num_layers (" + n(m.numLayers) + "), got " + n(p.pipelineParallel));
    if (!(m.numHeads % p.tensorParallel == 0))
        throw InputError("run.parallelism.tensor_parallel",
            "expected a divisor of model.num_heads (" + n(m.numHeads) + "), got " + n(p.tensorParallel));
    if (!(m.numKvHeads % p.tensorParallel == 0 || p.tensorParallel % m.numKvHeads == 0))
        throw InputError("run.parallelism.tensor_parallel",
            "expected a divisor or a multiple of model.num_kv_heads (" + n(m.numKvHeads) + "), got "
                + n(p.tensorParallel));
    if (!(!p.offloadParams || p.zeroStage == 3 || r.mode == Mode::Inference))
        throw InputError("run.parallelism.offload_params",
            "expected zero_stage 3 (parameter offload is ZeRO-Infinity), got zero_stage " + n(p.zeroStage));
    const Count dp = p.dataParallel();
    if (p.fsdpShardGroup > 0) {
        const Count g = p.fsdpShardGroup;
        if (p.zeroStage != 3 || dp % g != 0 || g % p.contextParallel != 0)
            throw InputError("run.parallelism.fsdp_shard_group",
                "expected a divisor of gpus / (tensor_parallel x pipeline_parallel) (" + n(dp)
                    + ") that is a multiple of context_parallel (" + n(p.contextParallel) + "), with zero_stage 3, got "
                    + n(g) + (p.zeroStage != 3 ? " with zero_stage " + n(p.zeroStage) : ""));
        if (p.expertParallel > 1 || p.offloadParams || p.offloadOptimizer)
            throw InputError("run.parallelism.fsdp_shard_group",
                "HSDP is modelled without expert parallelism and without offload (how their shards split over the "
                "replicas is not modelled yet); expected no key or "
                    + n(dp));
    }
    if (!(dp % p.expertParallel == 0))
        throw InputError("run.parallelism.expert_parallel",
            "expected a divisor of the data-parallel size (" + n(dp) + "), got " + n(p.expertParallel));
    if (!(p.expertParallel == 1 || (m.moe.enabled() && m.moe.numExperts % p.expertParallel == 0)))
        throw InputError("run.parallelism.expert_parallel",
            "expected 1 for a dense model or a divisor of model.moe.num_experts, got " + n(p.expertParallel));
    if (r.checkpointing.kind == Checkpointing::Kind::Every)
        if (!(r.checkpointing.every >= 1))
            throw InputError("run.checkpointing.every", "expected a layer count of at least 1");
    if (r.checkpointing.kind == Checkpointing::Kind::Layers
        && !(r.checkpointing.every >= 1 && r.checkpointing.every <= m.numLayers))
        throw InputError("run.checkpointing.layers",
            "expected from 1 to model.num_layers (" + n(m.numLayers) + ") layers, got " + n(r.checkpointing.every));
    if (r.finetune.targets.empty()) // a file cannot say it either: the reader wants a non-empty list
        throw InputError("run.finetune.targets", "expected at least one module name");
    for (size_t i = 0; i < r.finetune.targets.size(); ++i) {
        const std::string& t = r.finetune.targets[i];
        const bool known = std::find(std::begin(kLoraTargets), std::end(kLoraTargets), t) != std::end(kLoraTargets);
        if (!(known))
            throw InputError("run.finetune.targets[" + std::to_string(i) + "]",
                "expected one of q, k, v, o, gate, up, down, q_a, q_b, kv_a, kv_b, all-linear, got \"" + t + "\"");
    }
    validateFrameworkKeys(m, r);
    validateContextParallel(m, r);
    validatePipelineSchedule(m, r);
    if (r.finetune.method == FinetuneMethod::Qlora && r.mode == Mode::Training)
        if (!(r.precision != Precision::Fp32))
            throw InputError("run.precision", "expected a 16-bit precision with QLoRA (bf16 adapters), got fp32");
}

Bytes usableBytes(const RunSpec& r)
{
    if (!r.gpu)
        return 0;
    return r.gpu->memoryBytes - static_cast<Bytes>(std::ceil(r.safetyMargin * double(r.gpu->memoryBytes)));
}

Report estimate(const Scenario& sc, const EstimateOptions& options)
{
    Report rep = estimate(sc.model, sc.run, options);
    rep.scenarioName = sc.name;
    rep.warnings.insert(rep.warnings.begin(), sc.warnings.begin(), sc.warnings.end());
    return rep;
}

Report estimate(const ModelSpec& m, const RunSpec& r, const EstimateOptions& options, EstimateCache* cache)
{
    validateRun(m, r);
    // Serving engines budget a hybrid model's state per sequence (servingEstimate); one request's memory here
    // would leave its Mamba-2 states and scan temporaries out.
    if (m.hybrid())
        throw InputError("model.ssm",
            "the serving engine's budget (the Serving tab, serve-estimate): one request's memory outside vLLM or "
            "SGLang is not modelled for hybrid state-space models");
    const bool explain = options.explain;
    const Parallelism& par = r.parallelism;
    const bool training = r.mode == Mode::Training;

    Report rep;
    rep.scenarioName = m.name;
    std::optional<EstimateCache> local; // made only without the caller's (an allocation per call)
    EstimateCache::Impl& memo = (cache ? *cache : local.emplace()).impl();
    memo.forModel(m);
    const std::vector<ParamTensor>& tensors = memo.tensors;
    rep.params = memo.params;
    const bool peft = training && r.finetune.method != FinetuneMethod::Full;
    rep.loraParams = peft ? loraParameters(m, r.finetune) : 0;
    // A vision tower stays frozen in full training too (localParameters in model_states.cpp).
    rep.trainableParams = training ? (peft ? rep.loraParams : rep.params.total - rep.params.vision) : 0;

    // Pick the pipeline stage with the most memory: the first holds the most micro-batches
    // in flight (1F1B) and the embedding, the last the LM head and loss.
    const Count pp = par.pipelineParallel;
    struct StageResult {
        Count index;
        StageSlice slice; ///< the layers whose states the rank holds
        StageSlice actSlice; ///< the layers of the saved tensors of one pass (interleaved: all chunks in flight)
        ModelStateBytes states;
        ActivationSet acts;
        Count inFlight;
        Bytes sum;
        Count chunks; ///< interleaved: chunk-micro-batches in flight
        PipelineBuffers buffers;
    };
    std::optional<StageResult> worst;
    // The first and the last stage; with PyTorch's pipelining also the second, the first with receive buffers both
    // ways and the most layers of the middle ones (earlier stages take the remainder; torchtitan the middle ones).
    const Count candidates[] = { 0, middleStageMayPeak(r) ? 1 : pp - 1, pp - 1 };
    for (size_t c = 0; c < std::size(candidates); ++c) {
        const Count stage = candidates[c];
        if (c > 0 && stage == candidates[c - 1])
            continue;
        const PipelineRank rank = pipelineRank(m, r, stage);
        StageResult s { stage, rank.params, rank.activations, {}, {}, 1, 0, rank.chunksInFlight, rank.buffers };
        if (const ModelStateBytes* known = memo.find(r, stage, explain)) {
            s.states = *known;
        } else {
            s.states = modelStates(localParameters(tensors, m, r, s.slice), r, explain);
            if (cache) {
                // A sweep moves one key, the planner 8 ZeRO x offload pairs x 2 stages: 32
                // entries, the oldest overwritten in turn (no erase moving the others).
                if (memo.states.size() < 32)
                    memo.states.push_back({ r, stage, explain, s.states });
                else
                    memo.states[memo.nextState++ % 32] = { r, stage, explain, s.states };
            }
        }
        if (training) {
            std::optional<ActivationSet>& held = memo.heldActivations[fsdp1FrozenGradients(r) ? 1 : 0][stage == 0 ? 0
                    : stage == pp - 1                                                                             ? 2
                                                                                                                  : 1];
            if (!memo.holdActivations || !held)
                s.acts = trainingActivations(m, r, s.actSlice, explain);
            else
                s.acts = *held;
            if (memo.holdActivations && !held)
                held = s.acts;
            s.inFlight = rank.inFlight;
        }
        s.sum = checkedMul(s.acts.bytes, s.inFlight);
        const Bytes kept = checkedMul(r.gradientAccumulationSteps, s.buffers.outputKept + s.buffers.inputGradKept);
        for (Bytes b :
            { s.states.weights, s.states.master, s.states.gradients, s.states.optimizer, s.buffers.receive, kept })
            accumulate(s.sum, b);
        if (!worst || s.sum > worst->sum)
            worst = std::move(s);
    }
    StageResult& st = *worst; // its formulas move into the report
    rep.stage = pp == 1 ? "all layers"
        : !explain      ? "pipeline stage"
                   : "pipeline stage " + n(st.index + 1) + " of " + n(pp) + " (" + n(st.slice.layers()) + " layers)";
    rep.microBatchesInFlight = st.inFlight;
    rep.stageIndex = st.index;
    rep.hostBytes = st.states.hostBytes;
    rep.pagedOptimizerBytes = st.states.pagedOptimizer;
    rep.hostFormula = std::move(st.states.hostFormula);
    if (training && st.acts.offloadedBytes > 0) { // torchtune OffloadActivations: pinned host copies
        const Bytes offloaded = checkedMul(st.acts.offloadedBytes, st.inFlight);
        rep.hostBytes = checkedAdd(rep.hostBytes, offloaded);
        if (explain)
            rep.hostFormula += std::string(rep.hostFormula.empty() ? "" : " + ") + "offloaded activations "
                + formatCount(offloaded) + " B (pinned, torchtune OffloadActivations)";
    }

    KvCacheBytes kv;
    if (training) {
        rep.activations = std::move(worst->acts);
    } else {
        rep.activations = inferenceActivations(m, r, explain);
        kv = kvCache(m, r, explain);
    }
    const Bytes actBytes = checkedMul(rep.activations.bytes, st.inFlight);

    const PrecisionRegime reg = precisionRegime(r);
    std::string actFormula;
    if (!explain) {
    } else if (training) {
        actFormula = "sum of " + n(static_cast<Count>(rep.activations.tensors.size())) + " saved tensors ("
            + std::string(toString(r.attention)) + ", checkpointing " + toString(r.checkpointing) + ") for micro-batch "
            + n(r.microBatchSize) + " x " + n(r.localSequence()) + " tokens"
            + (par.contextParallel > 1 ? " (sequence / context_parallel " + n(par.contextParallel) + ")" : "");
        if (st.inFlight > 1)
            actFormula += " x " + n(st.inFlight) + " micro-batches in flight (1F1B)";
        if (par.pipelineSchedule == PipelineSchedule::Interleaved) {
            const Count v = std::max<Count>(1, par.virtualStages), layers = st.slice.layers();
            const std::string perChunk = layers % v == 0
                ? n(layers / v) + (layers / v == 1 ? " layer" : " layers")
                : n(layers / v) + " or " + n(layers / v + 1) + " layers"; // torchtitan's uneven split
            actFormula += ", over the " + n(st.chunks) + " chunk-micro-batches of " + perChunk
                + " alive at this rank's first backward (interleaved 1F1B, " + n(par.virtualStages)
                + " chunks per rank: " + n(st.actSlice.layers()) + " layers' tensors in all)";
        }
    } else {
        actFormula = "one layer's prefill working set for batch " + n(r.inference.batchSize) + " x "
            + n(r.inference.contextLength) + " tokens (freed layer by layer)";
    }
    if (explain)
        actFormula += " = " + formatCount(actBytes) + " B";
    if (explain && rep.activations.offloadedBytes > 0)
        actFormula += "; " + formatCount(checkedMul(rep.activations.offloadedBytes, st.inFlight))
            + " B more are in host memory (torchtune OffloadActivations: the GPU keeps two layers' inputs)";
    if (explain && rep.activations.compileRemovedBytes > 0)
        actFormula += "; torch.compile (" + std::string(rep.activations.compileScope) + ") recomputes in backward "
            + n(static_cast<Count>(rep.activations.compileRemoved.size())) + " kinds of tensor eager code keeps ("
            + formatCount(checkedMul(rep.activations.compileRemovedBytes, st.inFlight)) + " B)";
    // Which framework behaviour made the loss tensors (the plain default keeps today's text).
    if (explain && training && st.slice.last && (r.framework != Framework::Plain || r.loss))
        actFormula += "; loss: " + std::string(rep.activations.lossSource) + " ["
            + std::string(frameworkProfile(r.framework).version) + "]";

    using K = ComponentKind;
    auto part = [](K k, Bytes bytes, std::string formula, std::string_view why) {
        return Component { componentKey(k), componentLabel(k), bytes, std::move(formula), why };
    };
    // Pushed one by one with the formulas moved: an initializer list copied every string.
    rep.components.reserve(kReportComponents.size());
    rep.components.push_back(part(K::Weights, st.states.weights, std::move(st.states.weightsFormula),
        training ? "The copy of the weights that forward and backward read."
                 : "The weights the model reads for every token."));
    rep.components.push_back(part(K::MasterWeights, st.states.master, std::move(st.states.masterFormula),
        "An fp32 copy the optimizer updates, so small updates are not lost in 16-bit rounding."));
    rep.components.push_back(part(K::Gradients, st.states.gradients, std::move(st.states.gradientsFormula),
        "One gradient per trainable weight, written by the backward pass."));
    rep.components.push_back(part(K::OptimizerStates, st.states.optimizer, std::move(st.states.optimizerFormula),
        "What the optimizer remembers between steps (Adam: running mean and variance of the gradients)."));
    rep.components.push_back(part(K::Activations, actBytes, std::move(actFormula),
        training ? "Tensors the forward pass keeps so the backward pass can compute gradients."
                 : "Intermediate tensors of the layer being computed; freed as the next layer runs."));
    rep.components.push_back(part(K::KvCache, kv.bytes, training && explain ? "no KV cache in training" : kv.formula,
        "Keys and values of every past token, kept so each new token attends without recomputing them."));
    rep.overheadParts = overheadParts(m, r, rep.params, rep.activations, st.inFlight, st.states.gradients, explain);
    if (st.buffers.receive > 0) {
        const bool middle = st.index > 0 && st.index < pp - 1;
        const Bytes each = st.index > 0 ? st.buffers.inputGradKept : st.buffers.outputKept; // the tensor between stages
        rep.overheadParts.push_back({ "pipeline_buffers", "Pipeline receive buffers", st.buffers.receive,
            explain ? n(r.gradientAccumulationSteps) + " micro-batches x "
                    + (middle ? "2 (input, output's gradient) x " : "") + formatBytes(each)
                    + " (PyTorch pipelining: one tensor between stages each, kept from the first step)"
                    : std::string(),
            "PyTorch's pipeline stage receives each micro-batch's input and its output's gradient into buffers it "
            "allocates once and keeps." });
    }
    Bytes overhead = 0;
    std::string overheadFormula;
    for (const Component& c : rep.overheadParts) {
        overhead = checkedAdd(overhead, c.bytes);
        if (explain)
            overheadFormula.append(overheadFormula.empty() ? "" : " + ")
                .append(c.label)
                .append(" ")
                .append(formatBytes(c.bytes));
    }
    rep.components.push_back(part(K::Overhead, overhead, std::move(overheadFormula),
        "Memory the run needs that is not a model tensor: context, workspaces, allocator, buffers."));
    for (const Component& c : rep.components)
        rep.total = checkedAdd(rep.total, c.bytes);

    if (training) {
        rep.stepInputs = stepInputs(m, r, reg, st.states, st.actSlice, rep, st.inFlight, st.buffers);
        // The window's report keeps the events: the Timeline chart reuses them.
        const bool record
            = explain && options.recordTimeline && timelineEventCount(rep.stepInputs) <= kMaxTimelineEvents;
        rep.timeline = simulateStep(rep.stepInputs, 2, record);
        rep.peak = rep.timeline.peak;
        rep.peakEvent = rep.timeline.atPeak;
        if (explain)
            rep.peakWhere = rep.timeline.peakWhere(rep.stepInputs);
    } else {
        rep.peak = rep.total;
        if (explain)
            rep.peakWhere = "prefill of the whole context";
    }

    const Bytes weightsRead = st.states.weights;
    rep.flops = estimateFlops(m, r, rep.params, rep.loraParams, weightsRead, kv.bytes, explain);
    if (training)
        applyStepTime(m, r, rep, explain);
    if (explain)
        rep.gpu = r.gpu; // the verdict below needs only the size; the name is for display
    if (r.gpu) {
        rep.usableBytes = usableBytes(r);
        rep.fits = rep.peak <= rep.usableBytes;
        rep.hasVerdict = true;
    }
    if (training && options.replayAllocator)
        replayAllocator(rep, m, r, tensors, st.slice, st.actSlice);
    if (rep.pagedOptimizerBytes > 0) {
        // The QLoRA paper's paged optimizers: the driver evicts managed pages to the host when the GPU runs out and
        // the update pages them back, so the verdict is the allocator's peak; what does not fit beside it travels.
        const Bytes paged = rep.pagedOptimizerBytes;
        const Bytes evicted
            = rep.hasVerdict ? std::min(paged, std::max<Bytes>(0, rep.peak + paged - rep.usableBytes)) : 0;
        std::string w = "run.optimizer_impl: the paged optimizer states (" + formatBytes(paged)
            + ") live in CUDA unified memory, outside PyTorch's allocator: the peak and "
              "torch.cuda.max_memory_allocated "
              "leave them out, nvidia-smi counts them once a step has run";
        if (evicted > 0) {
            w += "; " + formatBytes(evicted) + " of them do not fit beside the peak, so the driver evicts them to host "
                + "memory and each update pages them back";
            if (r.gpu && r.gpu->hostLinkGBs > 0)
                w += " (about " + formatSeconds(2.0 * static_cast<double>(evicted) / (r.gpu->hostLinkGBs * 1e9))
                    + " a step over the host link, not in the step time)";
        }
        rep.warnings.push_back(std::move(w));
    }

    if (r.mode == Mode::Training && r.checkpointing.kind == Checkpointing::Kind::Selective
        && r.attention == AttentionImpl::Flash)
        rep.warnings.push_back("run.checkpointing: selective recomputation changes no memory with flash attention, "
                               "which already recomputes the attention core");
    if (m.position == PositionKind::Rope && m.maxPositionEmbeddings > 0
        && (training ? r.sequenceLength : r.inference.contextLength) > m.maxPositionEmbeddings)
        rep.warnings.push_back(
            "run: the sequence is longer than model.max_position_embeddings (" + n(m.maxPositionEmbeddings) + ")");
    if (par.sequenceParallel && par.tensorParallel == 1)
        rep.warnings.push_back("run.parallelism.sequence_parallel: has no effect without tensor parallelism");
    // FSDP2 inside PyTorch's pipelining: the states and the stage's buffers are the source's (RunSpec::
    // fsdpKeepsGathered, pipelineBuffers), but torchtitan's published 405B 1F1B runs measure 11-24 % above this
    // estimate.
    if (r.fsdp2InPipeline()) {
        addLowerBound(rep, "FSDP inside PyTorch pipelining: published runs up to 24 % above the model");
        rep.warnings.push_back("run.parallelism.pipeline_parallel: FSDP inside PyTorch pipelining is a lower bound: "
                               "torchtitan's published Llama 3.1 405B 1F1B runs (FSDP 8 x TP 8 x PP 8) measure "
                               "11-24 % more reserved memory than this estimate (the interleaved run +0.1 %), a gap "
                               "not found in the source "
                               "(fragmentation the allocator replay does not reproduce is one candidate)");
    }
    if (m.vision.enabled()) {
        if (training)
            addLowerBound(rep, "image tokens and the vision tower's activations are not modelled");
        rep.warnings.push_back("model.vision: the vision tower's weights are loaded (frozen in training); images are "
                               "not modelled: no image tokens, no tower activations");
    }
    // The engine's budget is the serving model's (serving_model.h); this report is one request's.
    if (r.serving)
        rep.warnings.push_back("run.serving: these bars are one request's weights, KV cache and prefill, not the "
                               "engine's budget; the engine's KV blocks, concurrency and startup lines are on the "
                               "Serving tab (vramlab-cli serve-estimate FILE)");
    if (training && reg.working == DType::Fp16 && !reg.master)
        rep.warnings.push_back(
            "run.precision: pure fp16 training without master weights usually diverges; mixed-fp16 keeps an fp32 copy");
    if (fsdp1(r) && r.framework == Framework::Litgpt && r.checkpointing.kind != Checkpointing::Kind::Full)
        rep.warnings.push_back("run.checkpointing: lit-gpt on more than one GPU checkpoints every Block "
                               "(FSDPStrategy(activation_checkpointing_policy={Block}), finetune/lora.py@8641822); "
                               "\"full\" is what it runs");
    if (frozenBaseFp32(r) && r.framework == Framework::Litgpt && !r.finetune.baseFp32) {
        addLowerBound(rep,
            "under LitGPT's bf16-mixed autocast's per-use 16-bit casts of the fp32 frozen weights are "
            "not modelled");
        rep.warnings.push_back("run.precision: LitGPT's mixed precision (Fabric's MixedPrecision, lit-gpt's default "
                               "for training) keeps the model in fp32: the frozen weights are counted at 4 B, but "
                               "what autocast keeps for backward is not modelled (a 16-bit cast of each frozen weight "
                               "at every use, the LM head's once per chunk, and an fp32 residual stream), so this "
                               "peak is a lower bound; precision \"bf16\" (bf16-true) is modelled");
    } else if (frozenBaseFp32(r)) {
        addLowerBound(rep, "autocast's 16-bit casts of the fp32 frozen weights are not modelled");
        rep.warnings.push_back(
            "run.finetune.base_fp32: the frozen base is counted at 4 B (fp32), but autocast's 16-bit cast of each "
            "frozen weight, made at every use and kept for backward in each layer that is not checkpointed, is not "
            "modelled, so this peak is a lower bound; load the model in bfloat16 for a modelled run");
    }
    // The 16-bit parameters TRL's SFTTrainer (its own prepare_model_for_kbit_training, trl/models/utils.py@v0.25.0:
    // the norms) or PEFT's (utils/other.py@77daa8d3: all of them) casts to fp32; activation_model.cpp makeDims
    // follows what that does to the tensors under autocast, for the dense decoder layers and losses below.
    if (const KbitPreparation prep = kbitPreparation(r); prep != KbitPreparation::None) {
        const LossKind loss = effectiveLoss(r);
        std::string unmodelled;
        if (!mixedPrecision(r.precision))
            unmodelled = "without autocast (precision " + std::string(toString(r.precision))
                + "), where every activation after the first norm becomes fp32";
        else if (m.moe.enabled() || m.attentionType == AttentionType::Mla)
            unmodelled = "for MoE or MLA layers";
        else if (r.finetune.dora)
            unmodelled = "with DoRA";
        else if (loss != LossKind::HfShift && loss != LossKind::Upcast && loss != LossKind::Native)
            unmodelled = "with run.loss \"" + std::string(toString(loss)) + "\"";
        else if (r.parallelism.tensorParallel > 1 || pp > 1)
            unmodelled = "with tensor or pipeline parallelism";
        const std::string what = prep == KbitPreparation::Trl
            ? "TRL's SFTTrainer casts the norms to fp32 (its prepare_model_for_kbit_training)"
            : "PEFT's prepare_model_for_kbit_training casts the embedding, the norms and the LM head to fp32";
        if (!unmodelled.empty()) {
            addLowerBound(rep, "the fp32 norms' effect on k-bit training is not modelled " + unmodelled);
            rep.warnings.push_back("run.finetune.kbit_preparation: " + what
                + "; what that does to the activations is modelled under autocast for dense layers, not " + unmodelled
                + ", so this peak is a lower bound (\"none\" for a script that casts nothing)");
        } else if (!r.finetune.kbitPreparation) {
            rep.warnings.push_back("run.finetune.kbit_preparation: assumed \"trl\": " + what
                + ", so the norms' outputs, the residual stream after the first layer and the MLP's projections are "
                  "fp32; \"peft\" for a script that calls PEFT's prepare_model_for_kbit_training, \"none\" for "
                  "one that casts nothing");
        }
    }
    // Megatron-LM's --use-distributed-optimizer (optimizer/distrib_optimizer.py@0d7e02b) shards the fp32 main
    // weights and Adam's states over the data-parallel ranks and keeps the whole fp32 gradient buffer: ZeRO-1 here.
    if (training && r.framework == Framework::Megatron && par.zeroStage >= 2)
        rep.warnings.push_back("run.parallelism.zero_stage: Megatron-LM's distributed optimizer is ZeRO-1 (sharded "
                               "fp32 master weights and Adam states, whole gradient buffer); stages 2 and 3 are "
                               "DeepSpeed's and are computed as DeepSpeed keeps them");
    if (pp > 1 && training && r.gradientAccumulationSteps < pp)
        rep.warnings.push_back("run.gradient_accumulation_steps: fewer micro-batches than pipeline stages leaves most "
                               "of the pipeline idle");
    return rep;
}

} // namespace vramlab
