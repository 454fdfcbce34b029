// SPDX-License-Identifier: MIT
#include "vramlab/overheads.h"

#include "vramlab/framework_profile.h"
#include "vramlab/precision_regime.h"

#include <algorithm>

namespace vramlab {

bool torchDdp(const RunSpec& run)
{
    const Parallelism& par = run.parallelism;
    return run.mode == Mode::Training && par.gpus > 1 && par.dataParallel() > 1 && par.zeroStage == 0 && !par.fsdp2()
        && run.framework != Framework::Deepspeed && run.framework != Framework::Megatron;
}

Bytes ddpBucketBytes(const RunSpec& run, Bytes gradientBytes)
{
    // torch/nn/parallel/distributed.py (DistributedDataParallel, gradient_as_bucket_view=False by default) and
    // csrc/distributed/c10d/reducer.cpp initialize_buckets: each bucket's flat `gradients` tensor is allocated at
    // construction and covers its parameters, so together they hold every gradient once more; with
    // gradient_as_bucket_view the gradients are views of them ("the saved memory size will be equal to the total
    // gradients size", the docstring; PyTorch PR #41954).
    if (torchDdp(run))
        return run.parallelism.gradientAsBucketView ? 0 : gradientBytes;
    const Parallelism& par = run.parallelism;
    const bool zeroBuckets = run.framework == Framework::Deepspeed && par.zeroStage >= 1;
    return par.gpus > 1 && par.dataParallel() > 1 && !zeroBuckets ? 2 * 25 * kMiB : 0;
}

Bytes deepSpeedBucketBytes(const RunSpec& run)
{
    const Parallelism& par = run.parallelism;
    if (run.framework != Framework::Deepspeed || run.mode != Mode::Training || par.zeroStage < 1)
        return 0;
    return checkedMul(
        par.reduceBucketSize.value_or(500'000'000), static_cast<Count>(bytesPerElement(precisionRegime(run).working)));
}

DeepSpeedZero3 deepSpeedZero3(const ModelSpec& m, const RunSpec& r, const ParameterCount& params)
{
    DeepSpeedZero3 z;
    const Parallelism& par = r.parallelism;
    if (r.framework != Framework::Deepspeed || r.mode != Mode::Training || par.zeroStage != 3)
        return z;
    const Count tp = par.tensorParallel, work = static_cast<Count>(bytesPerElement(precisionRegime(r).working));
    // fetch_sub_module gathers the current module's parameters (one tensor: no extra copy); the prefetch adds
    // parameters while it holds fewer than min(prefetch_bucket_size, max_live_parameters - live) elements, so one
    // tensor more at most, through one coalesced all-gather whose flat buffer and unpacked parameters (torch.cat,
    // AllGatherCoalescedHandle.wait) coexist: twice the prefetched bytes.
    const Count largest = ceilDiv(params.largestLayerTensor, tp); // the head is in keptAtLossBytes
    const Count prefetch = std::min(
        par.stage3PrefetchBucketSize.value_or(50'000'000), par.stage3MaxLiveParameters.value_or(1'000'000'000));
    const Count prefetched = prefetch > 0 ? std::min(checkedAdd(prefetch, largest), ceilDiv(params.total, tp)) : 0;
    z.gatherBytes = checkedMul(work, checkedAdd(largest, checkedMul(2, prefetched)));
    // __params_to_release keeps a parameter whose next use in the recorded trace is nearer than
    // max_reuse_distance elements: a layer's, from its forward to its backward, when the layers after it and the LM
    // head, traversed forward and back, hold fewer. The head itself (reused at once) stays through the loss.
    const Count layers = std::max<Count>(1, m.numLayers);
    const Count perLayer = ceilDiv((params.total - params.embedding - params.head - params.vision) / layers, tp);
    const Count tail
        = ceilDiv(checkedAdd(m.tiedEmbeddings ? checkedMul(m.vocabSize, m.hiddenSize) : params.head, m.hiddenSize), tp);
    const Count reach = par.stage3MaxReuseDistance.value_or(1'000'000'000) / 2 - tail;
    z.keptLayers = reach <= 0 || perLayer <= 0 ? 0 : std::min(layers, ceilDiv(reach, perLayer));
    if (par.stage3MaxReuseDistance.value_or(1'000'000'000) > 0)
        z.keptAtLossBytes = checkedMul(work, checkedAdd(checkedMul(z.keptLayers, perLayer), tail));
    return z;
}

std::vector<Component> overheadParts(const ModelSpec& m, const RunSpec& r, const ParameterCount& params,
    const ActivationSet& acts, Count inFlight, Bytes gradientBytes, bool explain)
{
    std::vector<Component> parts;
    parts.reserve(6);
    // Formula text only when it is shown.
    auto text = [explain](auto&&... pieces) {
        std::string s;
        if (explain)
            (s.append(std::string_view(pieces)), ...);
        return s;
    };
    const Overheads& o = r.overheads;
    const Parallelism& par = r.parallelism;
    parts.push_back({ "cuda_context", "CUDA context", o.cudaContextBytes,
        text(explain ? formatBytes(o.cudaContextBytes) : "", " (run.overheads.cuda_context_bytes)"),
        "The driver's context and the loaded kernels, before any tensor." });
    parts.push_back({ "workspace", "cuBLAS workspace", o.workspaceBytes,
        text(explain ? formatBytes(o.workspaceBytes) : "", " (run.overheads.workspace_bytes)"),
        "Scratch memory the matrix-multiply library keeps per stream." });

    if (o.allocatorRounding || o.fragmentation > 0) {
        const Bytes rounding = o.allocatorRounding ? checkedMul(acts.roundingBytes, inFlight) : 0;
        const Bytes frag = static_cast<Bytes>(o.fragmentation * static_cast<double>(checkedMul(acts.bytes, inFlight)));
        parts.push_back({ "allocator", "Allocator rounding", checkedAdd(rounding, frag),
            text("each saved tensor rounded up to 512 B: ", explain ? formatCount(rounding) : "", " B + fragmentation ",
                explain ? std::to_string(o.fragmentation) : "", " x activations"),
            "PyTorch's caching allocator hands out blocks in 512-byte steps." });
    }

    const Count dp = std::max<Count>(1, par.dataParallel());
    Bytes comm = 0;
    std::string commFormula;
    if (o.commBufferBytes) {
        comm = *o.commBufferBytes;
        commFormula = text(explain ? formatBytes(comm) : "", " (run.overheads.comm_buffer_bytes)");
    } else if (par.gpus > 1) {
        const Bytes buckets = ddpBucketBytes(r, gradientBytes);
        comm = checkedAdd(256 * kMiB, buckets);
        commFormula = text("NCCL buffers 256 MiB",
            buckets == 0      ? ""
                : torchDdp(r) ? " + DDP's gradient buckets (every gradient again; gradient_as_bucket_view false) "
                              : " + 2 gradient buckets x 25 MiB",
            torchDdp(r) && buckets > 0 && explain ? formatBytes(buckets) : "");
    }
    if (comm > 0)
        parts.push_back({ "comm_buffers", "Communication buffers", comm, commFormula,
            "NCCL's channels and the gradient buckets data parallelism reduces through." });

    const PrecisionRegime reg = precisionRegime(r);
    // DeepSpeed ZeRO-3 allocates its gradient bucket once at setup and keeps it (stage3.py@e2dc3eeb:537-540:
    // __ipg_bucket_flat_buffer = torch.empty(reduce_bucket_size, dtype=self.dtype)); ZeRO-1/2 allocate theirs
    // per backward (the step timeline's transients).
    if (r.framework == Framework::Deepspeed && par.zeroStage == 3 && deepSpeedBucketBytes(r) > 0)
        parts.push_back({ "ds_ipg_bucket", "DeepSpeed gradient bucket", deepSpeedBucketBytes(r),
            text(explain ? formatCount(par.reduceBucketSize.value_or(500'000'000)) : "",
                " elements (run.parallelism.reduce_bucket_size) x ", toString(reg.working)),
            "ZeRO-3 copies each gradient into this bucket and reduce-scatters it; allocated once at setup." });
    const DeepSpeedZero3 ds = deepSpeedZero3(m, r, params);
    if (ds.gatherBytes > 0 && dp > 1) {
        parts.push_back({ "zero3_gather", "ZeRO-3 gathered parameters", ds.gatherBytes,
            text("a layer's largest tensor ", explain ? formatCount(params.largestLayerTensor) : "",
                " + twice the prefetch (stage3_prefetch_bucket_size ",
                explain ? formatCount(std::min(par.stage3PrefetchBucketSize.value_or(50'000'000),
                    par.stage3MaxLiveParameters.value_or(1'000'000'000)))
                        : "",
                " elements and one tensor more, its coalesced all-gather buffer beside them) x ", toString(reg.working),
                "; at the loss the LM head and the last ", explain ? formatCount(ds.keptLayers) : "",
                " layers stay gathered (stage3_max_reuse_distance)"),
            "DeepSpeed ZeRO-3 gathers each module's weights as it runs and prefetches the next ones; weights it "
            "will reuse soon (the last layers' in backward) are not released." });
        // parameter_offload.py@e2dc3eeb: ds_persist for ds_numel <= param_persistence_threshold, never released.
        const Count threshold = par.stage3ParamPersistenceThreshold.value_or(100'000);
        Bytes persistent = 0;
        for (const ParamTensor& t : parameterTensors(m))
            if (t.elements() <= threshold)
                persistent
                    = checkedAdd(persistent, checkedMul(static_cast<Count>(bytesPerElement(reg.working)), t.total()));
        if (persistent > 0)
            parts.push_back({ "ds_persistent", "DeepSpeed persistent parameters", persistent,
                text("tensors of at most stage3_param_persistence_threshold (",
                    explain ? formatCount(par.stage3ParamPersistenceThreshold.value_or(100'000)) : "",
                    ") elements, whole, x ", toString(reg.working)),
                "ZeRO-3 never releases small parameters (norms, biases): each rank keeps them whole." });
    } else if (r.mode == Mode::Training && par.zeroStage == 3 && dp > 1 && !r.fsdpKeepsGathered()) { // else: weights
        // fp8_all_gather: torchao's fsdp_pre_all_gather casts the float8 linears' shards, so FSDP2 gathers
        // (and holds unsharded) 1 B per element of them (torchao/float8/fsdp_utils.py@0afa4c1).
        const Count fp8 = par.fp8AllGather ? ceilDiv(params.perLayerMaxLinear, par.tensorParallel) : 0;
        // FSDP1 gathers a flat parameter in its compute dtype: fp32 under Lightning's bf16-mixed (fsdp1ComputeBytes).
        const Count gatheredBytes
            = par.fsdp1() ? fsdp1ComputeBytes(r) : static_cast<Count>(bytesPerElement(reg.working));
        const Bytes layer
            = checkedAdd(fp8, checkedMul(ceilDiv(params.perLayerMax, par.tensorParallel) - fp8, gatheredBytes));
        parts.push_back({ "zero3_gather", "ZeRO-3 gathered layers", checkedMul(2, layer),
            text("2 (current + prefetched) x largest layer ", explain ? formatCount(params.perLayerMax) : "",
                " params x ", gatheredBytes == 4 && reg.working != DType::Fp32 ? "fp32" : toString(reg.working),
                par.fp8AllGather ? " (its linear weights in fp8)" : ""),
            "ZeRO-3 gathers each layer's full weights before using it, and the next one ahead of time." });
    }
    // Async TP (torch/distributed/_symmetric_memory get_symm_mem_workspace): one workspace per TP group, grown to
    // the largest request: a fused matmul + reduce-scatter asks 2 x its output chunk, [b, s / tp, h] in the
    // activations' type (an all-gather asks one input shard, no more). cuMemCreate'd symmetric memory, outside the
    // caching allocator: in the device figure, not in reserved. It removes transient copies around the
    // collectives (the gather buffer, dim-1 cat copies), which VRAM Lab does not count without it either.
    if (r.mode == Mode::Training && par.asyncTp && par.tensorParallel > 1) {
        const Bytes ws = checkedMul(checkedMul(2, r.microBatchSize, ceilDiv(r.localSequence(), par.tensorParallel)),
            m.hiddenSize, static_cast<Count>(bytesPerElement(reg.activations)));
        parts.push_back({ "symm_mem_workspace", "Async TP workspace", ws,
            text("2 x micro-batch x sequence / tensor_parallel x hidden x ", toString(reg.activations)),
            "Async TP's symmetric-memory buffer, which the fused matmul and collective kernels exchange through." });
    }
    if (r.mode == Mode::Training && r.finetune.method == FinetuneMethod::Qlora) {
        Count largest = 0;
        for (const ParamTensor& t : parameterTensors(m))
            if (t.linear && (t.group != ParamGroup::Head || r.finetune.quantizeLmHead))
                largest = std::max(largest, t.elements());
        // bitsandbytes' dequantize_4bit kernel writes the bf16 weight once. torchao's eager
        // NF4Tensor.get_original_weight (torchao/dtypes/nf4tensor.py@77ca57d16844) holds, as locals until
        // it returns: both nibble halves as int64 (2 x 4 B per pair of elements), their nf4[] lookups and
        // scaled copies in bf16 (4 x 1 B) and the stacked result (2 B): 14 B per element. Compiled
        // (torchtune compiles each layer), inductor fuses the chain into one kernel writing the bf16 weight.
        const bool eagerTorchao = effectiveNf4Format(r) == Nf4Format::Torchao && !r.compile;
        // Quantized from fp16 (Lightning's BitsandbytesPrecision): bitsandbytes 0.41 dequantizes into fp16 and
        // casts to the bf16 input, both copies alive at the cast (framework_profile.cpp).
        const bool fromFp16
            = !eagerTorchao && frameworkProfile(r.framework).nf4DequantFromFp16 && reg.activations != DType::Fp16;
        const Count perElement = eagerTorchao ? 14
            : fromFp16                        ? 2 + static_cast<Count>(bytesPerElement(reg.activations))
                                              : 2;
        const Bytes deq = checkedMul(ceilDiv(largest, par.tensorParallel), perElement);
        parts.push_back({ "dequant", "NF4 dequantization buffer", deq,
            text("largest linear weight ", explain ? formatCount(largest) : "",
                eagerTorchao   ? " params x 14 B (torchao's eager dequantization: int64 nibbles 8 B, bf16 lookups 2 B, "
                                 "scaled 2 B, stacked 2 B)"
                    : fromFp16 ? (perElement == 4 ? " params x 4 B (dequantized to fp16, the dtype it was quantized "
                                                    "from, then cast to bf16: both at once)"
                                                  : " params x 6 B (dequantized to fp16, the dtype it was quantized "
                                                    "from, then cast to fp32: both at once)")
                               : " params x 2 B (bf16)"),
            "QLoRA turns each 4-bit weight back into bf16 just before its matrix multiply." });
    }
    return parts;
}

} // namespace vramlab
