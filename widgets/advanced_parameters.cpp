// SPDX-License-Identifier: MIT
// The rarely used run keys, in groups the panel collapses by default: every key a scenario
// file may set has a control, read and written through the core's field table.
#include "advanced_parameters.h"

#include "descriptor_builders.h"

#include "vramlab/errors.h"
#include "vramlab/framework_profile.h"
#include "vramlab/scenario_fields.h"

#include <cmath>

namespace vramlab {

namespace {

using K = ParamDescriptor::Kind;
using nlohmann::json;

bool lora(const Scenario& s)
{
    return training(s) && s.run.finetune.method != FinetuneMethod::Full;
}
bool qlora(const Scenario& s)
{
    return training(s) && s.run.finetune.method == FinetuneMethod::Qlora;
}
bool chunkedLoss(const Scenario& s)
{
    return training(s) && effectiveLoss(s.run) == LossKind::Chunked;
}
bool zero3(const Scenario& s)
{
    return training(s) && s.run.parallelism.zeroStage == 3;
}

/// An optional numeric key whose unset value (the framework's or the run's default) is the
/// spin box's lowest step, min - 1, shown as `shown`.
ParamDescriptor withUnset(ParamDescriptor d, QString shown)
{
    d.unsetText = std::move(shown);
    const QVariant none
        = d.kind == K::Real ? QVariant(d.min - 1) : QVariant::fromValue<qlonglong>(qlonglong(d.min) - 1);
    d.get = [get = d.get, none](const Scenario& s) {
        const QVariant v = get(s);
        return v.isValid() ? v : none;
    };
    // Anything below min is unset: the field's setter trusts its caller with the range.
    d.set = [set = d.set, lo = d.min](
                Scenario& s, const QVariant& v) { set(s, v.isValid() && v.toDouble() < lo ? QVariant() : v); };
    return d;
}

/// A byte count shown in MiB. Exact both ways: a double holds every byte count up to 2^53, and
/// the spin box's rounding is only what it shows (only an edit writes).
ParamDescriptor inMiB(QString key, QString label, QString tip, double hiMiB)
{
    ParamDescriptor d = fieldControl(std::move(key), QStringLiteral("Overheads"), std::move(label),
        QStringLiteral("MiB"), std::move(tip), K::Real, 0, hiMiB, always, 2);
    d.get = [get = d.get](const Scenario& s) {
        const QVariant v = get(s);
        return v.isValid() ? QVariant(double(v.toLongLong()) / double(kMiB)) : v;
    };
    d.set = [set = d.set](Scenario& s, const QVariant& v) {
        set(s, v.isValid() ? QVariant::fromValue<qlonglong>(std::llround(v.toDouble() * double(kMiB))) : v);
    };
    return d;
}

/// An optional switch as a choice: unset (`shown`), yes or no.
ParamDescriptor optionalToggle(QString key, QString group, QString label, QString tip, Applies applies, QString shown)
{
    ParamDescriptor d = fieldControl(std::move(key), std::move(group), std::move(label), QString(), std::move(tip),
        K::Choice, 0, 0, std::move(applies));
    d.choices = { QStringLiteral("true"), QStringLiteral("false") };
    d.choiceLabels = { QStringLiteral("Yes"), QStringLiteral("No") };
    d.get = [get = d.get](const Scenario& s) {
        const QVariant v = get(s);
        return v.isValid() ? QVariant(v.toBool() ? QStringLiteral("true") : QStringLiteral("false")) : v;
    };
    return withDefault(std::move(d), shown);
}

/// A control over a key the core reads and writes as JSON (FieldKind::Custom): the value goes
/// through the field's own reader and writer. `unset`: the JSON that reads as the default.
ParamDescriptor jsonControl(QString key, QString group, QString label, QString unit, QString tip, K kind, double lo,
    double hi, Applies applies, json (*unset)(const Scenario&))
{
    const ScenarioField* f = findField(key.toStdString());
    Q_ASSERT_X(f && f->read && f->write, "jsonControl", "a control without a custom field");
    ParamDescriptor d
        = describe(key, std::move(group), std::move(label), std::move(unit), std::move(tip), kind, lo, hi);
    d.get = [f](const Scenario& s) { return jsonToVariant(fieldJson(*f, s)); };
    d.set = [f, unset, path = key.toStdString()](Scenario& s, const QVariant& v) {
        const json j = !v.isValid()            ? unset(s)
            : v.typeId() == QMetaType::QString ? json(v.toString().toStdString())
            : v.typeId() == QMetaType::Bool    ? json(v.toBool())
                                               : json(v.toLongLong());
        std::vector<std::string> warnings;
        try {
            f->read(s, j, path, warnings);
        } catch (const InputError&) {
            // refused by the reader (say, a shard group without ZeRO-3): the scenario stays as it was
        }
    };
    d.applies = std::move(applies);
    return d;
}

/// run.finetune.targets as "q, k, v, o": the names go through the field's reader; an unknown
/// name is the estimator's error (marked red), an empty list too.
ParamDescriptor targetsControl()
{
    const ScenarioField* f = findField("run.finetune.targets");
    ParamDescriptor d = describe(QStringLiteral("run.finetune.targets"), QStringLiteral("Fine-tuning details"),
        QStringLiteral("Adapter targets"), QString(),
        QStringLiteral("Comma-separated modules that get adapters (q, k, v, o, gate, up, down, q_a, q_b, kv_a, kv_b, "
                       "all-linear): each adds r x (in + out) weights with their gradients and optimizer states, and "
                       "keeps its input for backward."),
        K::Text);
    d.get = [f](const Scenario& s) {
        QStringList names;
        for (const json& n : f->write(s))
            names << QString::fromStdString(n.get<std::string>());
        return QVariant(names.join(QStringLiteral(", ")));
    };
    d.set = [f](Scenario& s, const QVariant& v) {
        json names = json::array();
        for (const QString& n : v.toString().split(QLatin1Char(','), Qt::SkipEmptyParts))
            if (!n.trimmed().isEmpty())
                names.push_back(n.trimmed().toStdString());
        if (names.empty()) { // the reader refuses an empty list; kept as typed, the estimator says why
            s.run.finetune.targets.clear();
            return;
        }
        std::vector<std::string> warnings;
        f->read(s, names, "run.finetune.targets", warnings);
    };
    d.applies = lora;
    return d;
}

/// One figure of the GPU; changing it makes the GPU custom (written as an object).
ParamDescriptor gpuFigure(const char* name, QString label, QString unit, QString tip, double GpuSpec::*figure)
{
    ParamDescriptor d = describe(QStringLiteral("run.gpu.") + QLatin1String(name), QStringLiteral("GPU details"),
        std::move(label), std::move(unit), std::move(tip), K::Real, 0, 100000, 1);
    d.get = [figure](const Scenario& s) { return QVariant(customGpu(s).*figure); };
    d.set = [figure](Scenario& s, const QVariant& v) {
        GpuSpec g = customGpu(s);
        if (g.*figure == v.toDouble())
            return;
        g.*figure = v.toDouble();
        s.run.gpu = g;
    };
    d.applies = always;
    return d;
}

void addFrameworkDetails(QVector<ParamDescriptor>& all)
{
    const QString g = QStringLiteral("Framework details");
    all << toggle(QStringLiteral("run.fp8"), g, QStringLiteral("FP8 GEMMs"),
        QStringLiteral("FP8 GEMMs: the inputs saved for backward are 1-byte fp8. Transformer Engine keeps an fp8 copy "
                       "of each weight beside its 16-bit one; under torchtitan (torchao's Float8Linear) each forward "
                       "casts the weight instead and eager code keeps that fp8 weight for backward."),
        training);
    all << optionalToggle(
        QStringLiteral("run.compile_loss"), g, QStringLiteral("Compile the loss"),
        QStringLiteral("With torch.compile: the loss compiled too. The compiled cross-entropy keeps the 16-bit "
                       "logits and two numbers per token instead of an fp32 copy and log-softmax (torchtitan since "
                       "2025; torchtune always)."),
        [](const Scenario& s) { return training(s) && s.run.compile; }, QStringLiteral("Framework default"));
    all << withDefault(choice<DType>(QStringLiteral("run.gradient_dtype"), g, QStringLiteral("Gradient type"),
                           QStringLiteral("The gradients' type instead of the precision's (mixed: fp32, 4 bytes a "
                                          "weight); 16-bit halves the gradient buffer."),
                           { { QStringLiteral("FP32"), DType::Fp32 }, { QStringLiteral("BF16"), DType::Bf16 },
                               { QStringLiteral("FP16"), DType::Fp16 } },
                           training),
        QStringLiteral("Default (by precision)"));
    all << toggle(QStringLiteral("run.sft_token_accuracy"), g, QStringLiteral("SFTTrainer token accuracy"),
        QStringLiteral(
            "TRL's SFTTrainer under autocast (bf16 or fp16 true) copies the logits, which accelerate returns "
            "in fp32, after each forward for its token accuracy: beside the saved log-softmax."),
        [](const Scenario& s) {
            return training(s) && (s.run.sftTokenAccuracy || effectiveLoss(s.run) == LossKind::HfShift);
        });
    all << optionalToggle(QStringLiteral("run.master_weights"), g, QStringLiteral("FP32 master weights"),
        QStringLiteral("Whether an fp32 copy of each trainable weight (4 bytes a weight) is kept beside the "
                       "16-bit one the model runs; by default with mixed precision only."),
        training, QStringLiteral("Default (by precision)"));
    const auto megatron = [](const Scenario& s) { return training(s) && s.run.framework == Framework::Megatron; };
    all << toggle(QStringLiteral("run.precision_aware_optimizer"), g, QStringLiteral("Precision-aware optimizer"),
        QStringLiteral("Megatron-LM's --use-precision-aware-optimizer: Transformer Engine's FusedAdam keeps the "
                       "master weights as 16-bit remainders of the bf16 parameters (2 bytes a weight instead of 4) "
                       "and the Adam moments in the type below."),
        megatron);
    all << withDefault(choice<DType>(QStringLiteral("run.optimizer_state_dtype"), g, QStringLiteral("Adam moments"),
                           QStringLiteral("Megatron's --exp-avg-dtype and --exp-avg-sq-dtype with the precision-aware "
                                          "optimizer: both moments in this type (bf16 halves them)."),
                           { { QStringLiteral("FP32"), DType::Fp32 }, { QStringLiteral("BF16"), DType::Bf16 },
                               { QStringLiteral("FP16"), DType::Fp16 } },
                           [](const Scenario& s) { return training(s) && s.run.precisionAwareOptimizer; }),
        QStringLiteral("Default (by precision)"));
    all << withDefault(
        choice<DType>(QStringLiteral("run.loss_dtype"), g, QStringLiteral("Chunked loss type"),
            QStringLiteral("Each chunk of logits upcast to fp32 (twice the chunk's bytes; LitGPT: Fabric "
                           "returns every chunk in fp32) or kept in the logits' 16-bit type."),
            { { QStringLiteral("FP32"), DType::Fp32 }, { QStringLiteral("BF16"), DType::Bf16 },
                { QStringLiteral("FP16"), DType::Fp16 } },
            chunkedLoss),
        QStringLiteral("Framework default"));
    all << withUnset(
        integer(QStringLiteral("run.loss_chunks"), g, QStringLiteral("Loss chunks"), QStringLiteral("chunks"),
            QStringLiteral("Chunked loss: the sequence's logits in this many pieces (torchtune: 8); "
                           "more chunks, smaller logits held at once."),
            K::Integer, 1, 1024, chunkedLoss),
        QStringLiteral("auto"));
    all << withUnset(integer(QStringLiteral("run.loss_chunks_tokens"), g, QStringLiteral("Tokens per loss chunk"),
                         QStringLiteral("tokens"),
                         QStringLiteral("Chunked loss: tokens per piece instead of a chunk count (LitGPT: 128); "
                                        "fewer tokens, smaller logits held at once."),
                         K::Integer, 1, 1048576, chunkedLoss),
        QStringLiteral("auto"));
    all << withFrameworkDefault(
        choice<OptimizerImpl>(QStringLiteral("run.optimizer_impl"), g, QStringLiteral("Optimizer implementation"),
            QStringLiteral("torch.optim foreach (temporary copies of a group's states during the step), fused (none), "
                           "or bitsandbytes' paged AdamW, 32-bit or 8-bit (the states of tensors of 100,000 "
                           "elements or more in CUDA unified memory: outside the peak, evicted to host memory when "
                           "the GPU runs out)."),
            { { QStringLiteral("foreach"), OptimizerImpl::Foreach }, { QStringLiteral("fused"), OptimizerImpl::Fused },
                { QStringLiteral("Paged 32-bit"), OptimizerImpl::Paged32 },
                { QStringLiteral("Paged 8-bit"), OptimizerImpl::Paged8 } },
            training));
    all << toggle(QStringLiteral("run.optimizer_in_backward"), g, QStringLiteral("Optimizer in backward"),
        QStringLiteral("Each weight is stepped and its gradient freed as soon as backward produces it, so the whole "
                       "gradient buffer never exists (needs accumulation 1)."),
        training);
}

void addShardingDetails(QVector<ParamDescriptor>& all)
{
    const QString g = QStringLiteral("Sharding details");
    ParamDescriptor sharding
        = fieldControl(QStringLiteral("run.parallelism.sharding"), g, QStringLiteral("Sharding"), QString(),
            QStringLiteral("ZeRO-3 as DeepSpeed does it, or as PyTorch FSDP2 (per-parameter shards) or FSDP1 (one flat "
                           "parameter per wrapped block; Hugging Face Trainer, Lightning) does it: 16-bit all-gathered "
                           "weights, fp32 reduce-scattered gradients, different gather buffers."),
            K::Choice, 0, 0, zero3);
    sharding.choices = { QStringLiteral("zero"), QStringLiteral("fsdp2"), QStringLiteral("fsdp1") };
    sharding.choiceLabels = { QStringLiteral("ZeRO-3 (DeepSpeed)"), QStringLiteral("FSDP2"), QStringLiteral("FSDP1") };
    all << sharding;
    const auto fsdp1On = [](const Scenario& s) { return zero3(s) && s.run.parallelism.fsdp1(); };
    all << optionalToggle(QStringLiteral("run.parallelism.no_sync"), g, QStringLiteral("Accumulate under no_sync"),
        QStringLiteral("FSDP1's no_sync() during gradient accumulation: every micro-batch but the last keeps the "
                       "whole unsharded gradients instead of shards (Lightning and the Hugging Face Trainer do)."),
        fsdp1On, QStringLiteral("Framework default"));
    all << withFrameworkDefault(choice<FsdpWrap>(QStringLiteral("run.parallelism.fsdp_wrap"), g,
        QStringLiteral("Adapter wrapping"),
        QStringLiteral("FSDP1 with LoRA: adapters inside each block's flat parameter "
                       "(LitGPT; use_orig_params then computes the frozen weights' "
                       "gradients and keeps their inputs) or wrapped apart (PEFT's "
                       "fsdp_auto_wrap_policy, the Hugging Face Trainer)."),
        { { QStringLiteral("In their blocks"), FsdpWrap::Blocks }, { QStringLiteral("Apart (PEFT)"), FsdpWrap::Peft } },
        [](const Scenario& s) {
            return zero3(s) && s.run.parallelism.fsdp1() && s.run.finetune.method != FinetuneMethod::Full;
        }));
    all << toggle(QStringLiteral("run.parallelism.fp8_all_gather"), g, QStringLiteral("FP8 all-gather"),
        QStringLiteral("torchao's enable_fsdp_float8_all_gather: FSDP2 gathers the float8 linears' weights in fp8, "
                       "1 byte a weight instead of 2 in the gathered layers (torchtitan with FP8 GEMMs)."),
        [](const Scenario& s) {
            return zero3(s) && s.run.parallelism.fsdp2() && s.run.fp8 && s.run.framework == Framework::Torchtitan;
        });
    all << withDefault(
        jsonControl(QStringLiteral("run.parallelism.reshard_after_forward"), g, QStringLiteral("Reshard after forward"),
            QString(),
            QStringLiteral("Every block's gathered weights are freed after forward, or all but the last block's "
                           "(torchtitan without pipelining): one block's full weights stay through backward."),
            K::Choice, 0, 0, zero3, [](const Scenario&) { return json(true); }),
        QStringLiteral("Every block (default)"));
    all.back().choices << QStringLiteral("all but last block");
    all.back().choiceLabels << QStringLiteral("All but the last block");
    all << withUnset(
        jsonControl(QStringLiteral("run.parallelism.fsdp_shard_group"), g, QStringLiteral("Shard group"),
            QStringLiteral("GPUs"),
            QStringLiteral("HSDP: FSDP shards weights, gradients and states over this many GPUs and "
                           "replicates them across the groups; smaller groups hold more per GPU."),
            K::LogInteger, 1, 16384, zero3, [](const Scenario& s) { return json(s.run.parallelism.dataParallel()); }),
        QStringLiteral("all (default)"));
    // DeepSpeed's ZeRO options (runtime/zero/config.py@e2dc3eeb), under run.framework "deepspeed" only.
    const auto deepSpeedZero = [](const Scenario& s) {
        return training(s) && s.run.framework == Framework::Deepspeed && s.run.parallelism.zeroStage >= 1;
    };
    all << withUnset(integer(QStringLiteral("run.parallelism.reduce_bucket_size"), g, QStringLiteral("ZeRO bucket"),
                         QStringLiteral("elements"),
                         QStringLiteral("DeepSpeed's reduce_bucket_size: the 16-bit buffer every rank copies its "
                                        "gradients into to reduce them (1 GB at the default 5e8; Hugging Face's "
                                        "\"auto\" writes hidden x hidden)."),
                         K::LogInteger, 0, 4'000'000'000.0, deepSpeedZero),
        QStringLiteral("5e8 (default)"));
    all << optionalToggle(QStringLiteral("run.parallelism.overlap_comm"), g, QStringLiteral("Overlap comm"),
        QStringLiteral("DeepSpeed's overlap_comm: ZeRO-1/2 reduce during backward through two buckets instead of "
                       "one (on by default for ZeRO-3 only)."),
        deepSpeedZero, QStringLiteral("DeepSpeed default"));
    const auto deepSpeedZero3 = [](const Scenario& s) {
        return training(s) && s.run.framework == Framework::Deepspeed && s.run.parallelism.zeroStage == 3;
    };
    const auto stage3 = [&](const char* key, const char* label, const char* tip, const char* unset) {
        all << withUnset(integer(QString::fromLatin1(key), g, QString::fromLatin1(label), QStringLiteral("elements"),
                             QString::fromUtf8(tip), K::LogInteger, 0, 4'000'000'000.0, deepSpeedZero3),
            QString::fromLatin1(unset));
    };
    stage3("run.parallelism.stage3_prefetch_bucket_size", "ZeRO-3 prefetch",
        "DeepSpeed's stage3_prefetch_bucket_size: weights gathered ahead of the running module, twice while their "
        "coalesced all-gather unpacks (Hugging Face's \"auto\": 0.9 x hidden x hidden).",
        "5e7 (default)");
    stage3("run.parallelism.stage3_max_live_parameters", "ZeRO-3 max live",
        "DeepSpeed's stage3_max_live_parameters: prefetching stops above this many gathered elements (the running "
        "module is gathered anyway).",
        "1e9 (default)");
    stage3("run.parallelism.stage3_max_reuse_distance", "ZeRO-3 reuse distance",
        "DeepSpeed's stage3_max_reuse_distance: weights used again within this many elements stay gathered; the last "
        "layers stay from forward through the loss (all of a model under about 0.5B).",
        "1e9 (default)");
    stage3("run.parallelism.stage3_param_persistence_threshold", "ZeRO-3 persistence",
        "DeepSpeed's stage3_param_persistence_threshold: smaller tensors (norms, biases) stay whole on every GPU "
        "(Hugging Face's \"auto\": 10 x hidden).",
        "1e5 (default)");
    all << integer(QStringLiteral("run.parallelism.expert_parallel"), g, QStringLiteral("Expert parallel"),
        QStringLiteral("GPUs"),
        QStringLiteral("MoE experts spread over this many data-parallel GPUs: each holds num_experts / N experts' "
                       "weights, gradients and states."),
        K::LogInteger, 1, 1024, [](const Scenario& s) { return training(s) && s.model.moe.enabled(); });
}

void addFinetuneDetails(QVector<ParamDescriptor>& all)
{
    const QString g = QStringLiteral("Fine-tuning details");
    all << fieldControl(QStringLiteral("run.finetune.alpha"), g, QStringLiteral("LoRA alpha"), QString(),
        QStringLiteral("Scales the adapters' output (alpha / r): changes the training, not the memory."), K::Real, 0,
        4096, lora, 1);
    all << fieldControl(QStringLiteral("run.finetune.dropout"), g, QStringLiteral("LoRA dropout"),
        QStringLiteral("probability"),
        QStringLiteral("Above 0, each target keeps a dropped copy of its input for backward (and its mask)."), K::Real,
        0, 0.99, lora, 2);
    all << targetsControl();
    all << toggle(QStringLiteral("run.finetune.double_quant"), g, QStringLiteral("Double quantization"),
        QStringLiteral("QLoRA: the NF4 block scales are quantized again (4.127 bits a weight), else an fp32 scale per "
                       "64 weights (4.5 bits)."),
        qlora);
    all << toggle(QStringLiteral("run.finetune.quantize_lm_head"), g, QStringLiteral("Quantize LM head"),
        QStringLiteral("QLoRA: the output layer in NF4 too, instead of 16-bit."), qlora);
    // PEFT's use_dora: the core models it under hf-transformers only and says so for the others.
    all << toggle(QStringLiteral("run.finetune.dora"), g, QStringLiteral("DoRA"),
        QStringLiteral("PEFT's use_dora: a magnitude per output of each adapted linear. Every forward rebuilds the "
                       "adapted weight for its norm (transients of a few weight-sized tensors) and keeps the base "
                       "and B outputs; with dropout the base linear runs again and keeps its weight. Set LoRA "
                       "dropout to 0 to save that."),
        [](const Scenario& s) { return lora(s) && s.run.framework == Framework::HfTransformers; });
    all << optionalToggle(
        QStringLiteral("run.finetune.base_fp32"), g, QStringLiteral("Frozen base in fp32"),
        QStringLiteral("A model loaded in fp32 and run under autocast (transformers without a dtype, Lightning's "
                       "bf16-mixed): the frozen weights cost 4 bytes each. Autocast's 16-bit casts of them are not "
                       "modelled, so the peak is a lower bound."),
        [](const Scenario& s) {
            return training(s) && s.run.finetune.method == FinetuneMethod::Lora && mixedPrecision(s.run.precision);
        },
        QStringLiteral("Framework default"));
    all << withFrameworkDefault(choice<KbitPreparation>(QStringLiteral("run.finetune.kbit_preparation"), g,
        QStringLiteral("4-bit preparation"),
        QStringLiteral("What upcasts the 4-bit model's 16-bit parameters before training. TRL's SFTTrainer (the "
                       "default): the norms to fp32, so under autocast their outputs, the 4-bit layers' outputs and "
                       "the residual stream after the first layer are fp32. PEFT's prepare_model_for_kbit_training "
                       "called directly: the embedding and LM head too (4 bytes a weight). None: a script that "
                       "casts nothing."),
        { { QStringLiteral("TRL (norms fp32)"), KbitPreparation::Trl },
            { QStringLiteral("PEFT (embedding, norms, head fp32)"), KbitPreparation::Peft },
            { QStringLiteral("None"), KbitPreparation::None } },
        [](const Scenario& s) {
            return qlora(s) && s.run.framework == Framework::HfTransformers
                && effectiveNf4Format(s.run) == Nf4Format::Bitsandbytes;
        }));
}

void addOverheads(QVector<ParamDescriptor>& all)
{
    all << inMiB(QStringLiteral("run.overheads.cuda_context_bytes"), QStringLiteral("CUDA context"),
        QStringLiteral("The CUDA context and loaded kernels on each GPU (300-600 MiB measured), outside PyTorch's "
                       "allocator."),
        65536);
    all << inMiB(QStringLiteral("run.overheads.workspace_bytes"), QStringLiteral("cuBLAS workspace"),
        QStringLiteral("cuBLAS / cuBLASLt workspace kept by each GPU (32 MiB on Hopper)."), 65536);
    all << withUnset(inMiB(QStringLiteral("run.overheads.comm_buffer_bytes"), QStringLiteral("Comm buffers"),
                         QStringLiteral("NCCL and gradient bucket buffers (auto: 2 x 25 MiB buckets + 256 MiB NCCL "
                                        "with more than one GPU)."),
                         65536),
        QStringLiteral("auto"));
    all << toggle(QStringLiteral("run.overheads.allocator_rounding"), QStringLiteral("Overheads"),
        QStringLiteral("Allocator rounding"),
        QStringLiteral("Every saved tensor rounded up to 512 bytes, as PyTorch's caching allocator does."), always);
    all << fieldControl(QStringLiteral("run.overheads.fragmentation"), QStringLiteral("Overheads"),
        QStringLiteral("Fragmentation"), QStringLiteral("of activations"),
        QStringLiteral("Extra share of the activations counted as lost to fragmentation of the allocator's "
                       "segments."),
        K::Real, 0, 1, always, 2);
}

void addGpuDetails(QVector<ParamDescriptor>& all)
{
    const QString peak = QStringLiteral("Dense peak of one GPU; changing it makes the GPU custom. Step time and "
                                        "tokens/s follow it, memory does not.");
    all << gpuFigure("bf16_tflops", QStringLiteral("BF16 peak"), QStringLiteral("TFLOP/s"), peak, &GpuSpec::bf16Tflops);
    all << gpuFigure("fp16_tflops", QStringLiteral("FP16 peak"), QStringLiteral("TFLOP/s"), peak, &GpuSpec::fp16Tflops);
    all << gpuFigure("fp8_tflops", QStringLiteral("FP8 peak"), QStringLiteral("TFLOP/s"), peak, &GpuSpec::fp8Tflops);
    all << gpuFigure("tf32_tflops", QStringLiteral("TF32 peak"), QStringLiteral("TFLOP/s"), peak, &GpuSpec::tf32Tflops);
    all << gpuFigure("fp32_tflops", QStringLiteral("FP32 peak"), QStringLiteral("TFLOP/s"), peak, &GpuSpec::fp32Tflops);
    all << gpuFigure("int8_tops", QStringLiteral("INT8 peak"), QStringLiteral("TOP/s"), peak, &GpuSpec::int8Tops);
    const QString link = QStringLiteral("Changing it makes the GPU custom; time follows it, memory does not.");
    all << gpuFigure("memory_bandwidth_gbs", QStringLiteral("Memory bandwidth"), QStringLiteral("GB/s"),
        QStringLiteral("HBM / GDDR bandwidth: decode and the optimizer step are bound by it. ") + link,
        &GpuSpec::memoryBandwidthGBs);
    all << gpuFigure("interconnect_gbs", QStringLiteral("GPU interconnect"), QStringLiteral("GB/s"),
        QStringLiteral("GPU-to-GPU bandwidth per direction (NVLink, else PCIe): the collectives' time. ") + link,
        &GpuSpec::interconnectGBs);
    all << gpuFigure("host_link_gbs", QStringLiteral("Host link"), QStringLiteral("GB/s"),
        QStringLiteral("Host link per direction (PCIe): offloaded states' and activations' transfers. ") + link,
        &GpuSpec::hostLinkGBs);
}

} // namespace

void addAdvancedControls(QVector<ParamDescriptor>& all)
{
    const qsizetype first = all.size();
    addFrameworkDetails(all);
    addShardingDetails(all);
    addFinetuneDetails(all);
    addOverheads(all);
    addGpuDetails(all);
    for (qsizetype i = first; i < all.size(); ++i)
        all[i].advanced = true;
}

} // namespace vramlab
