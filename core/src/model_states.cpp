// SPDX-License-Identifier: MIT
#include "vramlab/model_states.h"

#include "vramlab/framework_profile.h"
#include "vramlab/precision_regime.h"

#include <algorithm>

namespace vramlab {

namespace {

/// Tensor-parallel split of a tensor: column-parallel linears split their output,
/// row-parallel ones (o, down) their input, the embedding its vocabulary.
void splitForTensorParallel(LocalParam& p, const ParamTensor& t, Count tp)
{
    if (tp <= 1)
        return;
    const bool rowParallel = t.module == "o" || t.module == "down";
    if (t.group == ParamGroup::Embedding)
        p.rows = ceilDiv(p.rows, tp);
    else if (t.linear && t.group != ParamGroup::Router)
        (rowParallel ? p.rows : p.cols) = ceilDiv(rowParallel ? p.rows : p.cols, tp);
    else if (!t.linear
        && (t.module == "q" || t.module == "k" || t.module == "v" || t.module == "gate" || t.module == "up"))
        p.cols = ceilDiv(p.cols, tp); // biases of column-parallel layers
}

/// Copies of a tensor on a stage: layer tensors follow the stage's share of layers.
Count stageCopies(const ParamTensor& t, const ModelSpec& m, const StageSlice& s, Count ep)
{
    if (t.name.starts_with("moe_layers.")) {
        const Count perLayer = t.copies / std::max<Count>(1, m.moeLayers());
        const Count local = t.group == ParamGroup::Expert ? ceilDiv(perLayer, ep) : perLayer;
        return checkedMul(local, s.moeLayers);
    }
    if (t.name.starts_with("layers.mlp"))
        return s.denseLayers;
    if (t.name.starts_with("layers."))
        return s.layers();
    if (t.group == ParamGroup::Embedding || t.group == ParamGroup::Position)
        return s.first ? 1 : 0;
    if (t.group == ParamGroup::Vision) // the image encoder feeds the embeddings on the first stage
        return s.first ? t.copies : 0;
    return s.last ? 1 : 0; // final norm, LM head
}

std::string zeroNote(Count dp, int stage, int from)
{
    if (dp <= 1 || stage < from)
        return {};
    return " / " + std::to_string(dp) + " GPUs (ZeRO-" + std::to_string(stage) + ")";
}

/// FSDP2's root group: the tensors outside the blocks (torchtitan's Transformer owns tok_embeddings, norm and
/// output; the blocks, experts, state-space mixers and a vision tower are their own groups).
bool outsideBlocks(std::string_view name)
{
    return name == "embed.weight" || name == "position.weight" || name.starts_with("final_norm.")
        || name == "lm_head.weight";
}

std::string perParam(double bytes)
{
    return formatDouble(bytes, std::chars_format::general, 6) + " B"; // "%g B"
}

} // namespace

bool isTarget(const Finetune& f, std::string_view module)
{
    return std::any_of(f.targets.begin(), f.targets.end(),
        [&](const std::string& t) { return t == module || (t == "all-linear" && module != "lm_head"); });
}

Count loraParameters(const ModelSpec& m, const Finetune& f)
{
    Count n = 0;
    for (const ParamTensor& t : parameterTensors(m))
        if (t.linear && t.group != ParamGroup::Head && isTarget(f, t.module))
            // A (in x r) and B (r x out); DoRA adds a magnitude per output.
            n = checkedAdd(
                n, checkedMul(checkedAdd(checkedMul(f.rank, t.rows + t.cols), f.dora ? t.cols : 0), t.copies));
    return n;
}

std::vector<LocalParam> localParameters(const ModelSpec& m, const RunSpec& r, const StageSlice& s)
{
    return localParameters(parameterTensors(m), m, r, s);
}

std::vector<LocalParam> localParameters(
    const std::vector<ParamTensor>& tensors, const ModelSpec& m, const RunSpec& r, const StageSlice& s)
{
    std::vector<LocalParam> out;
    out.reserve(tensors.size() + 16);
    const bool peft = r.mode == Mode::Training && r.finetune.method != FinetuneMethod::Full;
    const bool inference = r.mode == Mode::Inference;
    const DType working = inference ? r.inference.weightDtype : precisionRegime(r).working;
    const Count tp = r.parallelism.tensorParallel, ep = r.parallelism.expertParallel;
    const KbitPreparation prep = kbitPreparation(r);
    for (const ParamTensor& t : tensors) {
        // A vision tower is frozen in fine-tuning (its parameters keep requires_grad False): no gradient, no state.
        LocalParam p { t.name, t.rows, t.cols, stageCopies(t, m, s, ep),
            !peft && !inference && t.group != ParamGroup::Vision, t.group == ParamGroup::Expert, t.linear, working };
        // Quantized formats apply to linear layers; embeddings, norms and the LM head stay 16-bit.
        const bool quantizable = t.linear && t.group != ParamGroup::Head && t.group != ParamGroup::Router;
        if (!quantizable
            && (working == DType::Int4 || working == DType::Nf4 || working == DType::Int8 || working == DType::Fp8))
            p.frozenStorage = DType::Bf16;
        // Lightning's BitsandbytesPrecision (lit-gpt finetune/lora.py@8641822) replaces the LM head too.
        const bool nf4 = quantizable || (t.group == ParamGroup::Head && t.linear && r.finetune.quantizeLmHead);
        // PEFT's prepare_model_for_kbit_training (utils/other.py@77daa8d3): param.data.to(float32) for every 16-bit
        // parameter that is not a Params4bit; TRL's (trl/models/utils.py@v0.25.0): those named "norm" only.
        const DType unquantized
            = prep == KbitPreparation::Peft || (prep == KbitPreparation::Trl && t.group == ParamGroup::Norm)
            ? DType::Fp32
            : working;
        if (!p.trainable && frozenBaseFp32(r))
            p.frozenStorage = DType::Fp32; // Lightning's bf16-mixed: the module stays fp32
        if (r.mode == Mode::Training && r.finetune.method == FinetuneMethod::Qlora)
            p.frozenStorage = !nf4                            ? unquantized
                : effectiveNf4Format(r) == Nf4Format::Torchao ? DType::Nf4Torchao
                : r.finetune.doubleQuant                      ? DType::Nf4
                                                              : DType::Nf4NoDq;
        splitForTensorParallel(p, t, tp);
        if (p.copies > 0)
            out.push_back(p);
        if (peft && t.linear && t.group != ParamGroup::Head && isTarget(r.finetune, t.module) && p.copies > 0) {
            // A: in x r, B: r x out, sharded along the base layer's split dimension.
            out.push_back({ t.name, p.rows, r.finetune.rank, p.copies, true, p.expert, true, working, 'A' });
            out.push_back({ t.name, r.finetune.rank, p.cols, p.copies, true, p.expert, true, working, 'B' });
            if (r.finetune.dora) // DoraLinearLayer.weight: the magnitude, one per output (dora.py@77daa8d3)
                out.push_back({ t.name, 1, p.cols, p.copies, true, p.expert, false, working, 'M' });
        }
    }
    return out;
}

ModelStateBytes modelStates(const std::vector<LocalParam>& params, const RunSpec& r, bool explain)
{
    ModelStateBytes out;
    const Parallelism& par = r.parallelism;
    const Count dp = std::max<Count>(1, par.shardGroup()); // HSDP: the replicas each hold a whole set of shards
    const Count expertDp = std::max<Count>(1, dp / std::max<Count>(1, par.expertParallel));
    const int zero = r.mode == Mode::Training ? par.zeroStage : 0; // serving replicas hold whole weights
    const bool training = r.mode == Mode::Training;
    const PrecisionRegime reg = precisionRegime(r);
    const Bytes work = static_cast<Bytes>(bytesPerElement(reg.working));
    // The trainable parameters' regime. PEFT's adapters are fp32 whatever the model's type (tuners/
    // tuners_utils.py@77daa8d3 cast_adapter_dtype, autocast_adapter_dtype=True), so are their gradients and
    // AdamW's states (zeros_like(param)), and no master copy exists (tests/validation/dora_linear.py).
    PrecisionRegime treg = reg;
    if (training && r.finetune.method != FinetuneMethod::Full && frameworkProfile(r.framework).loraAdaptersFp32
        && work < 4) {
        treg.working = treg.gradients = DType::Fp32;
        treg.master.reset();
        if (bytesPerElement(treg.optimizerStates) < 4)
            treg.optimizerStates = DType::Fp32;
    }
    const Bytes twork = static_cast<Bytes>(bytesPerElement(treg.working));
    // Megatron-LM's precision-aware optimizer with bf16 parameters (distrib_optimizer.py@0d7e02b: master_param
    // init_shard(torch.int16) when store_param_remainders and bf16; optimizer_config.py: store_param_remainders
    // defaults to True, Transformer Engine >= 2.1): the fp32 master is the bf16 parameter plus 16-bit remainders.
    const Bytes masterBytes = r.precisionAwareOptimizer && treg.working == DType::Bf16 ? 2 : 4;
    const Bytes grad = static_cast<Bytes>(bytesPerElement(treg.gradients));
    // bitsandbytes PagedAdamW (32-bit) keeps fp32 states whatever the precision (lit-gpt
    // finetune/lora.py@8641822 with quantization); they live in unified memory, which
    // torch.cuda.max_memory_allocated() does not see.
    const Bytes state
        = r.optimizerImpl == OptimizerImpl::Paged32 ? 4 : static_cast<Bytes>(bytesPerElement(treg.optimizerStates));
    const bool offloadOpt = training && par.offloadOptimizer;
    const bool offloadParams = par.offloadParams;
    const bool bf16OptimizerGrads = training && r.framework == Framework::Deepspeed && zero == 0
        && r.precision == Precision::MixedBf16 && reg.gradients == DType::Fp32 && !offloadOpt;

    Bytes hostMaster = 0, hostOptimizer = 0, hostGrads = 0, hostWeights = 0, fp8Copies = 0, pagedStates = 0;
    // bitsandbytes' paged optimizers (optim/optimizer.py@0.48.2 get_state_buffer): a state of a tensor of at least
    // 1e5 elements comes from get_paged, cudaMallocManaged(cudaMemAttachHost), which prefetch_state moves to the GPU
    // before each update; smaller ones are torch.zeros_like on the GPU.
    const bool paged = training && !offloadOpt
        && (r.optimizerImpl == OptimizerImpl::Paged32 || r.optimizerImpl == OptimizerImpl::Paged8);
    constexpr Count kPagedMinElements = 100'000;
    const bool fp8CastEachForward = frameworkProfile(r.framework).fp8Torchao;
    const bool keptGathered = r.fsdpKeepsGathered();
    // FSDP2 and FSDP1 alike: the fp32 shard is the parameter under mixed precision (FSDP1: _flat_param.py v2.6.0
    // _local_shard keeps the build dtype, `_mp_shard` exists only around the all-gather), and the root is never
    // resharded after forward (FSDP1: _runtime_utils.py _post_forward_reshard, "Do not free the root's parameters
    // in the post-forward for FULL_SHARD"). Unsharded gradients: FSDP2 inside pipelining (fp32, the reduce dtype)
    // or FSDP1 under no_sync (the compute dtype the flat parameter was gathered in).
    const bool fsdp = training && (par.fsdp2() || par.fsdp1()) && zero == 3;
    const bool unshardedGrads = r.fsdp2InPipeline() || fsdp1UnshardedGradients(r);
    // A flat parameter is gathered, and its unsharded gradient made, in MixedPrecision's param_dtype, else in its
    // own storage type (PEFT's fp32 adapters in fp32).
    const bool mixed = mixedPrecision(r.precision);
    const Bytes fsdp1Compute = fsdp1ComputeBytes(r);
    const Bytes fsdp1Trainable = mixed ? fsdp1Compute : twork; // a trainable unsharded gradient under no_sync
    const bool frozenGrads = fsdp1FrozenGradients(r);
    Count rootLocal = 0; // FSDP's root parameters, gathered all forward and backward
    Count quantizedLocal = 0; // frozen parameters stored below 16 bits (QLoRA NF4, int4/int8/fp8 serving)
    DType quantizedType = DType::Nf4;
    for (const LocalParam& p : params) {
        const Count n = p.elements();
        const Count group = p.expert ? expertDp : dp;
        auto shard = [&](Count x, int fromStage) { return zero >= fromStage ? ceilDiv(x, group) : x; };

        if (!p.trainable) {
            out.frozenLocal = checkedAdd(out.frozenLocal, n);
            if (bytesPerElement(p.frozenStorage) < bytesPerElement(DType::Bf16)) {
                quantizedLocal = checkedAdd(quantizedLocal, n);
                quantizedType = p.frozenStorage;
            }
            const Bytes w = checkedMul(storageBytes(p.frozenStorage, checkedMul(p.rows, p.cols)), p.copies);
            accumulate(offloadParams ? hostWeights : out.weights, shard(w, 3));
            // FSDP gathers a frozen tensor beside its shard too: the root's, and all of them when kept gathered.
            if (fsdp && (keptGathered || outsideBlocks(p.name))) {
                accumulate(out.weights, par.fsdp1() ? checkedMul(n, fsdp1Compute) : w);
                if (!keptGathered)
                    rootLocal = checkedAdd(rootLocal, n);
            }
            // FSDP1 with adapters inside a block's flat parameter (use_orig_params=True): the frozen weights are
            // views of a flat parameter that requires grad, so their gradients exist too, unsharded under no_sync
            // (in the gathered dtype), else reduce-scattered into the shard's dtype (_cast_grad_to_param_dtype).
            if (frozenGrads && !outsideBlocks(p.name)) {
                out.frozenWithGradients = checkedAdd(out.frozenWithGradients, n);
                const Count stored = static_cast<Count>(bytesPerElement(p.frozenStorage));
                accumulate(out.gradients,
                    unshardedGrads ? checkedMul(n, mixed ? fsdp1Compute : stored) : shard(checkedMul(n, stored), 3));
            }
            continue;
        }
        out.trainableLocal = checkedAdd(out.trainableLocal, n);
        // FSDP2 with MixedPrecisionPolicy(param_dtype=bf16) (torchtitan parallelize_llama.py@9dec370
        // apply_fsdp): the sharded parameter is the fp32 master itself; 16-bit copies exist only
        // when a block is gathered (the ZeRO-3 gathered layers in the overhead).
        const bool noWorkingShard = fsdp && treg.master.has_value();
        // Kept gathered (reshard_after_forward false, or pipelining): the unsharded 16-bit weight, or with
        // fp8_all_gather the float8 linears' 1 B per element (torchao fsdp_post_all_gather), all step long.
        // (torchtitan converts the blocks' linears to float8, not the LM head: float8.py module_filter_fn).
        const Bytes gathered = checkedMul(n,
            par.fp8AllGather && p.linear && p.name.starts_with("layers.") ? Bytes(1)
                : par.fsdp1()                                             ? fsdp1Compute
                                                                          : twork);
        // FSDP2's root group (the embedding, the final norm, the LM head: parameters outside the blocks) is never
        // resharded after forward (torch/distributed/_composable/fsdp/_fsdp_state.py _lazy_init: "For the root, do
        // not reshard after forward"): gathered from the step's first forward until its backward ends.
        // Without an fp32 master (pure 16-bit) the shard stays beside the gathered root.
        const bool rootGathered = fsdp && outsideBlocks(p.name);
        const Bytes resident = noWorkingShard ? 0 : shard(checkedMul(n, twork), 3);
        const Bytes w = keptGathered ? gathered : rootGathered ? checkedAdd(resident, gathered) : resident;
        if (rootGathered && !keptGathered)
            rootLocal = checkedAdd(rootLocal, n);
        accumulate(offloadParams ? hostWeights : out.weights, w);
        if (r.fp8 && p.linear && !fp8CastEachForward) // Transformer Engine's copies; torchao casts in forward
            accumulate(fp8Copies, shard(n, 3));
        if (!training)
            continue;

        const Count nOpt = shard(n, 1);
        const bool pagedTensor = paged && p.rows * p.cols >= kPagedMinElements; // get_paged, not zeros_like
        if (treg.master)
            accumulate(offloadOpt ? hostMaster : out.master, checkedMul(nOpt, masterBytes));
        if (offloadOpt && grad == 4) {
            // ZeRO-Offload: 16-bit gradients on the GPU, the fp32 copy on the host.
            accumulate(out.gradients, checkedMul(shard(n, 2), twork));
            accumulate(hostGrads, checkedMul(nOpt, 4));
        } else {
            accumulate(out.gradients,
                unshardedGrads ? checkedMul(n, par.fsdp1() ? fsdp1Trainable : grad) : checkedMul(shard(n, 2), grad));
        }
        // DeepSpeed's BF16_Optimizer (bf16 without ZeRO; runtime/bf16_optimizer.py@e2dc3eeb): beside its fp32
        // gradient buffer (the regime's fp32 gradients) the bf16 gradients stay in param.grad until the next
        // backward clears them (clear_lp_grads; the engine never zeroes them after the step).
        if (bf16OptimizerGrads)
            accumulate(out.gradients, checkedMul(n, work));

        Bytes opt = 0;
        switch (r.optimizer) {
        case Optimizer::AdamW:
        case Optimizer::Adam:
            opt = checkedMul(nOpt, 2 * state);
            if (pagedTensor)
                accumulate(pagedStates, opt);
            break;
        case Optimizer::Lion:
        case Optimizer::SgdMomentum:
            opt = checkedMul(nOpt, state);
            break;
        case Optimizer::Sgd:
            opt = 0;
            break;
        case Optimizer::AdamW8bit:
            // bitsandbytes (optim/optimizer.py@0.48.2 Optimizer2State.init_state): tensors under min_8bit_size
            // (4096) elements keep 32-bit states; others two 8-bit states plus one fp32 absmax per block of 256
            // (2048 before 0.44.0). Paged, the 8-bit states of the large ones are in unified memory, not the absmax.
            // transformers trainer.py create_optimizer: with a bitsandbytes 8-bit optimizer every nn.Embedding
            // weight is registered for 32-bit states (GlobalOptimManager.register_module_override, optim_bits 32).
            if (p.rows * p.cols < 4096
                || (r.framework == Framework::HfTransformers
                    && (p.name == "embed.weight" || p.name == "position.weight"))) {
                opt = checkedMul(nOpt, 8);
                if (pagedTensor)
                    accumulate(pagedStates, opt);
            } else {
                opt = checkedMul(2, checkedAdd(nOpt, 4 * ceilDiv(nOpt, 256)));
                if (pagedTensor)
                    accumulate(pagedStates, checkedMul(nOpt, 2));
            }
            break;
        case Optimizer::Adafactor:
            // Factored second moment (row + column fp32 vectors) for matrices, full for vectors; no momentum.
            opt = (p.rows > 1 && p.cols > 1) ? shard(checkedMul(p.rows + p.cols, p.copies, 4), 1) : checkedMul(nOpt, 4);
            break;
        }
        accumulate(offloadOpt ? hostOptimizer : out.optimizer, opt);
    }
    accumulate(out.weights, fp8Copies);
    out.pagedOptimizer = pagedStates;
    out.hostBytes = checkedAdd(checkedAdd(hostMaster, hostOptimizer), checkedAdd(hostGrads, hostWeights));
    if (!explain)
        return out;

    const std::string trainable = formatCount(out.trainableLocal) + " trainable params";
    out.weightsFormula = perParam(static_cast<double>(work)) + " (" + std::string(toString(reg.working)) + ") x "
        + formatCount(out.trainableLocal + out.frozenLocal) + " params" + zeroNote(dp, zero, 3);
    // Frozen weights: the quantized linear layers and the rest (embeddings, norms, LM head) in 16 bits.
    const KbitPreparation prep = kbitPreparation(r);
    const DType unquantized = quantizedLocal == 0 ? params.front().frozenStorage
        : prep == KbitPreparation::Peft           ? DType::Fp32
                                                  : DType::Bf16;
    std::string frozen = formatCount(out.frozenLocal - quantizedLocal) + " params in "
        + std::string(toString(unquantized))
        + (quantizedLocal == 0                  ? ""
                : prep == KbitPreparation::Peft ? " (prepare_model_for_kbit_training)"
                : prep == KbitPreparation::Trl  ? " (the norms in fp32: TRL's preparation)"
                                                : "");
    if (quantizedLocal > 0)
        frozen = formatCount(quantizedLocal) + " linear params in " + std::string(toString(quantizedType))
            + (quantizedType == DType::Nf4            ? " (4.127 bits with double quantization)"
                    : quantizedType == DType::Nf4NoDq ? " (4.5 bits: an fp32 scale per 64)"
                    : quantizedType == DType::Nf4Torchao
                    ? ": 4-bit codes, an int8 scale per 64, a bf16 factor per 256 scales (NF4Tensor)"
                    : "")
            + " + " + frozen;
    if (out.frozenLocal > 0 && out.trainableLocal > 0) {
        // Full training freezes only a vision tower (model.vision); PEFT freezes the base under its adapters.
        const bool full = r.finetune.method == FinetuneMethod::Full;
        out.weightsFormula = std::string(full ? "frozen vision tower: " : "frozen base: ") + frozen
            + (full ? "; " : "; adapters ") + perParam(static_cast<double>(twork))
            + (twork != work ? " (fp32: PEFT's adapters)" : "") + " x " + trainable + zeroNote(dp, zero, 3);
    }
    if (fp8Copies > 0)
        out.weightsFormula += " + 1 B fp8 copy x " + formatCount(fp8Copies) + " linear params";
    if (offloadParams)
        out.weightsFormula += "; offloaded to host (ZeRO-Infinity), gathered per layer";
    const std::string root = "the root's " + formatCount(rootLocal)
        + " params (embedding, final norm, LM head) gathered from the first forward to the end of backward";
    const std::string fsdpName = par.fsdp1() ? "FSDP1" : "FSDP2";
    if (fsdp && reg.master && out.frozenLocal == 0)
        out.weightsFormula = fsdpName + " mixed precision: no resident " + std::string(toString(reg.working))
            + " shard of the blocks (the fp32 shard is the parameter; 16-bit copies only while a block is gathered); "
            + root;
    else if (fsdp && rootLocal > 0)
        out.weightsFormula += "; " + fsdpName + ": " + root;
    if (keptGathered)
        out.weightsFormula = perParam(static_cast<double>(work)) + " (" + std::string(toString(reg.working)) + ") x "
            + formatCount(out.trainableLocal + out.frozenLocal) + " params, every block kept gathered ("
            + (par.pipelineParallel > 1 ? "PyTorch pipelining: no reshard after backward"
                                        : "reshard_after_forward false")
            + (par.fp8AllGather ? "; the float8 linears' weights in fp8" : "") + ")";
    if (training && zero == 3 && par.fsdpShardGroup > 0)
        out.weightsFormula += "; HSDP: sharded over groups of " + std::to_string(dp) + " GPUs, replicated "
            + std::to_string(par.dataParallel() / dp) + " times";
    if (!training) {
        out.weightsFormula = (params.empty() ? std::string("no weights") : frozen) + zeroNote(dp, zero, 3);
        return out;
    }
    out.masterFormula = !treg.master ? "no master copy"
        : masterBytes == 2 ? "2 B (int16 remainders of the bf16 parameters: Megatron's precision-aware optimizer) x "
            + trainable + zeroNote(dp, zero, 1)
                           : "4 B (fp32) x " + trainable + zeroNote(dp, zero, 1);
    if (treg.master && offloadOpt)
        out.masterFormula += " -> host";
    out.gradientsFormula = perParam(static_cast<double>(offloadOpt && grad == 4 ? twork : grad)) + " ("
        + std::string(toString(offloadOpt && grad == 4 ? treg.working : treg.gradients)) + ") x " + trainable
        + zeroNote(dp, zero, 2);
    if (unshardedGrads && par.fsdp1())
        out.gradientsFormula = perParam(static_cast<double>(fsdp1Trainable)) + " x " + trainable
            + " unsharded: FSDP1's no_sync() keeps every gradient whole until the last micro-batch's backward";
    else if (unshardedGrads)
        out.gradientsFormula = perParam(static_cast<double>(grad)) + " (" + std::string(toString(treg.gradients))
            + ") x " + trainable
            + " unsharded: PyTorch pipelining turns FSDP's gradient sync off until the last micro-batch, so they "
              "accumulate whole in the reduce dtype";
    if (out.frozenWithGradients > 0)
        out.gradientsFormula += " + the frozen block weights' gradients (" + formatCount(out.frozenWithGradients)
            + " params" + (unshardedGrads ? ", unsharded" : zeroNote(dp, zero, 2))
            + "): FSDP1 with use_orig_params computes them for every flat parameter that holds an adapter";
    if (bf16OptimizerGrads)
        out.gradientsFormula += " + the bf16 gradients BF16_Optimizer leaves in param.grad: 2 B x " + trainable;
    else if (r.framework == Framework::Deepspeed && zero >= 1 && reg.master && !r.gradientDtype)
        out.gradientsFormula += " (DeepSpeed accumulates in the model's type; the fp32 gradient of the partition "
                                "exists only during the step)";
    std::string optName;
    switch (r.optimizer) {
    case Optimizer::AdamW:
    case Optimizer::Adam:
        optName = "2 states (m, v) x " + perParam(static_cast<double>(state));
        break;
    case Optimizer::Lion:
        optName = "1 state (momentum) x " + perParam(static_cast<double>(state));
        break;
    case Optimizer::SgdMomentum:
        optName = "1 state (momentum buffer) x " + perParam(static_cast<double>(state));
        break;
    case Optimizer::Sgd:
        optName = "no state";
        break;
    case Optimizer::AdamW8bit:
        optName = "2 states x (1 B + 4 B absmax / 256); tensors < 4096 elements at 4 B";
        break;
    case Optimizer::Adafactor:
        optName = "factored second moment: (rows + cols) x 4 B per matrix, 4 B per vector element";
        break;
    }
    out.optimizerFormula = optName + " x " + trainable + zeroNote(dp, zero, 1) + (offloadOpt ? " -> host" : "");
    if (out.pagedOptimizer > 0)
        out.optimizerFormula += "; " + formatBytes(out.pagedOptimizer)
            + " of it paged (CUDA unified memory: outside PyTorch's allocator, evicted to the host under pressure)";
    out.hostFormula = out.hostBytes == 0
        ? "nothing offloaded"
        : "master " + formatBytes(hostMaster) + " + optimizer " + formatBytes(hostOptimizer) + " + fp32 gradients "
            + formatBytes(hostGrads) + " + weights " + formatBytes(hostWeights) + " per GPU process";
    return out;
}

} // namespace vramlab
