// SPDX-License-Identifier: MIT
#include "parameter_descriptors.h"

#include "advanced_parameters.h"
#include "descriptor_builders.h"

#include "vramlab/framework_profile.h"

#include "vramlab/gpu_catalog.h"
#include "vramlab/model_scaling.h"
#include "vramlab/overheads.h"
#include "vramlab/parameter_tensors.h"
#include "vramlab/presets.h"
#include "vramlab/run_adaptation.h"
#include "vramlab/scenario_fields.h"
#include "vramlab/serving_io.h"
#include "vramlab/serving_model.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <type_traits>
#include <variant>

namespace vramlab {

namespace {

using K = ParamDescriptor::Kind;

/// Whether the scenario serves with one of `engines`.
std::function<bool(const Scenario&)> servingWith(std::initializer_list<ServingEngine> engines)
{
    return [list = std::vector<ServingEngine>(engines)](const Scenario& s) {
        return s.run.serving && std::find(list.begin(), list.end(), s.run.serving->engine) != list.end();
    };
}

/// The engine's estimate, for flags whose unset value is a default of the engine (max_model_len
/// from the model, max_num_seqs by GPU and version): the control shows what the engine uses.
std::optional<ServingEstimate> servingDefaults(const Scenario& s)
{
    try {
        return servingEstimate(s.model, s.run);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

/// A control over one flag of run.serving, which has no field of its own: the value goes through
/// the serving object's writer and reader (serving_io.h), so the panel accepts what a file does.
/// `get` shows the value (nullopt: the one the file holds).
ParamDescriptor servingControl(const char* name, QString label, QString unit, QString tip, K kind, double lo, double hi,
    std::function<bool(const Scenario&)> applies, std::function<QVariant(const Scenario&)> get = {}, int decimals = 0)
{
    ParamDescriptor d = describe(QStringLiteral("run.serving.") + QLatin1String(name), QStringLiteral("Serving engine"),
        std::move(label), std::move(unit), std::move(tip), kind, lo, hi, decimals);
    const std::string key(name);
    if (!get)
        get = [key](const Scenario& s) {
            const nlohmann::json j = servingJson(s.run);
            return j.is_object() && j.contains(key) ? jsonToVariant(j.at(key)) : QVariant();
        };
    // The panel reads every control on every scenario: a training one has no run.serving.
    d.get = [get = std::move(get)](const Scenario& s) { return s.run.serving ? get(s) : QVariant(); };
    d.set = [key, kind](Scenario& s, const QVariant& v) {
        if (!s.run.serving)
            return;
        nlohmann::json j = servingJson(s.run);
        if (kind == K::Choice)
            j[key] = v.toString().toStdString();
        else if (kind == K::Toggle)
            j[key] = v.toBool();
        else if (kind == K::Real)
            j[key] = v.toDouble();
        else
            j[key] = v.toLongLong();
        if (key == "engine") // another engine's flags are refused: start from its defaults
            j = { { "engine", j[key] } };
        try {
            readServing(j, s.run);
        } catch (const std::exception&) {
            // outside what the engine accepts: the scenario stays as it was
        }
    };
    d.applies = std::move(applies);
    return d;
}

void addServingControls(QVector<ParamDescriptor>& all)
{
    using E = ServingEngine;
    const auto any = servingWith({ E::Vllm, E::Sglang, E::LlamaCpp, E::HfGenerate });
    ParamDescriptor engine = servingControl("engine", QStringLiteral("Engine"), QString(),
        QStringLiteral("Whose memory accounting is reproduced: vLLM's budget of gpu_memory_utilization, SGLang's "
                       "mem_fraction_static, llama.cpp's buffers, or plain HF generate(). Switching starts from the "
                       "engine's defaults."),
        K::Choice, 0, 0, any);
    for (const auto& [label, e] :
        { std::pair { QStringLiteral("vLLM"), E::Vllm }, { QStringLiteral("SGLang"), E::Sglang },
            { QStringLiteral("llama.cpp (GGUF)"), E::LlamaCpp }, { QStringLiteral("HF generate()"), E::HfGenerate } }) {
        engine.choices << valueName(e);
        engine.choiceLabels << label;
    }
    all << engine;
    all << servingControl(
        "gpu_memory_utilization", QStringLiteral("GPU memory use"), QStringLiteral("of memory"),
        QStringLiteral("--gpu-memory-utilization: the share of the GPU's memory vLLM may take; the KV cache gets what "
                       "weights, the profiling peak and non-torch memory leave of it (default 0.9, 0.92 from vLLM "
                       "0.20.0)."),
        K::Real, 0.05, 1.0, servingWith({ E::Vllm }),
        [](const Scenario& s) { return QVariant(gpuMemoryUtilizationOrDefault(*s.run.serving)); }, 2);
    all << servingControl(
        "mem_fraction_static", QStringLiteral("Static memory"), QStringLiteral("of free memory"),
        QStringLiteral("--mem-fraction-static: weights and the KV pool share this part of the memory free at start "
                       "(default: by SGLang's version, GPU and tensor parallelism, lowered for multimodal models)."),
        K::Real, 0.05, 0.99, servingWith({ E::Sglang }),
        [](const Scenario& s) {
            const auto e = servingDefaults(s);
            if (!e || e->ranks.empty())
                return QVariant(s.run.serving->memFractionStatic.value_or(0.88));
            const ServingRank& k = e->ranks.front(); // the default depends on the version, GPU and TP
            return QVariant(
                std::round(double(k.budgetBytes) * 1000 / double(e->totalGpuBytes - k.nonTorchBytes)) / 1000);
        },
        3);
    all << servingControl("max_model_len", QStringLiteral("Max model length"), QStringLiteral("tokens"),
        QStringLiteral("--max-model-len: the longest request; vLLM refuses to start when the KV cache holds fewer "
                       "tokens (default: the model's max_position_embeddings)."),
        K::LogInteger, 128, 1048576, servingWith({ E::Vllm, E::HfGenerate }), [](const Scenario& s) {
            const auto e = servingDefaults(s);
            return QVariant::fromValue<qlonglong>(e ? e->maxModelLen : s.run.serving->maxModelLen.value_or(4096));
        });
    all << servingControl("context_length", QStringLiteral("Context length"), QStringLiteral("tokens"),
        QStringLiteral("--context-length: the longest request (default: the model's max_position_embeddings)."),
        K::LogInteger, 128, 1048576, servingWith({ E::Sglang }), [](const Scenario& s) {
            const auto e = servingDefaults(s);
            return QVariant::fromValue<qlonglong>(e ? e->maxModelLen : s.run.serving->contextLength.value_or(4096));
        });
    all << servingControl("max_num_seqs", QStringLiteral("Max sequences"), QStringLiteral("sequences"),
        QStringLiteral("--max-num-seqs: sequences scheduled at once; vLLM's profiling forward and speed use it "
                       "(default by version and GPU)."),
        K::LogInteger, 1, 4096, servingWith({ E::Vllm, E::Sglang, E::HfGenerate }), [](const Scenario& s) {
            const auto e = servingDefaults(s);
            return QVariant::fromValue<qlonglong>(e ? e->maxNumSeqs : s.run.serving->maxNumSeqs.value_or(256));
        });
    ParamDescriptor kv = servingControl("kv_cache_dtype", QStringLiteral("KV cache type"), QString(),
        QStringLiteral("--kv-cache-dtype: auto keeps the model's dtype; fp8 halves the cache of a 16-bit model."),
        K::Choice, 0, 0, servingWith({ E::Vllm, E::Sglang, E::HfGenerate }));
    kv.choices
        = { QStringLiteral("auto"), QStringLiteral("fp8"), QStringLiteral("bfloat16"), QStringLiteral("float16") };
    kv.choiceLabels = { QStringLiteral("auto (model dtype)"), QStringLiteral("FP8"), QStringLiteral("BF16"),
        QStringLiteral("FP16") };
    all << kv;
    all << servingControl("n_ctx", QStringLiteral("Context (n_ctx)"), QStringLiteral("tokens"),
        QStringLiteral("-c / --ctx-size: KV cells shared by all slots of the context."), K::LogInteger, 256, 1048576,
        servingWith({ E::LlamaCpp }));
    all << servingControl("n_gpu_layers", QStringLiteral("GPU layers"), QStringLiteral("layers"),
        QStringLiteral("-ngl: layers (the output layer counting as one) whose weights and KV cache sit on the GPU."),
        K::Integer, 0, 1000, servingWith({ E::LlamaCpp }), [](const Scenario& s) {
            return QVariant::fromValue<qlonglong>(std::min(s.run.serving->nGpuLayers, s.model.numLayers + 1));
        });
}

QVector<ParamDescriptor> build()
{
    QVector<ParamDescriptor> all;
    const QString model = QStringLiteral("Model"), seq = QStringLiteral("Sequence and batch"),
                  prec = QStringLiteral("Precision and memory savers"), ft = QStringLiteral("Mode and fine-tuning"),
                  inf = QStringLiteral("Inference"), par = QStringLiteral("Parallelism"),
                  hw = QStringLiteral("Hardware");

    // Model: a preset, a scaled family member, or shapes of one's own.
    ParamDescriptor preset = describe(QStringLiteral("model.preset"), model, QStringLiteral("Preset"), QString(),
        QStringLiteral("A published model with its exact shapes. Editing a shape below makes it a custom model."),
        K::Choice);
    for (const Preset& p : presets()) {
        preset.choices << QString::fromStdString(p.key);
        preset.choiceLabels << QString::fromStdString(p.model.name);
    }
    preset.choices << QString();
    preset.choiceLabels << QStringLiteral("Custom shapes");
    preset.get = [](const Scenario& s) { return QVariant(QString::fromStdString(s.model.preset)); };
    preset.set = [](Scenario& s, const QVariant& v) {
        if (auto p = findPreset(v.toString().toStdString())) {
            s.model = p->model;
            // The run follows what the new model rules out, as a config.json import does (a hybrid model's
            // training becomes vLLM serving; a tensor-parallel size its heads do not divide becomes 1).
            try {
                adaptRunToModel(s.model, s.run);
            } catch (const std::exception&) { // the document says why the combination is not valid
            }
        } else {
            s.model.preset.clear();
        }
    };
    preset.applies = always;
    all << preset;

    ParamDescriptor size
        = describe(QStringLiteral("model.parameters_b"), model, QStringLiteral("Parameters"), QStringLiteral("B"),
            QStringLiteral("Scales this model family to another size: width by the cube root, then the layer count "
                           "to land on the target. For quick what-ifs; the shapes below show the result."),
            K::Real, 0.01, 2000, 2);
    size.get = [](const Scenario& s) { return QVariant(double(countParameters(s.model).total) / 1e9); };
    size.set
        = [](Scenario& s, const QVariant& v) { s.model = scaleModel(s.model, static_cast<Count>(v.toDouble() * 1e9)); };
    size.applies = always;
    all << size;

    auto shape
        = [&](const char* key, const char* label, const char* tip, double lo, double hi, Count ModelSpec::*field) {
              ParamDescriptor d = integer(QString::fromLatin1(key), model, QString::fromLatin1(label), QString(),
                  QString::fromLatin1(tip), K::Integer, lo, hi);
              // An explicit override of the table's setter: the shapes derived from this one follow it.
              d.set = [field](Scenario& s, const QVariant& v) {
                  ModelSpec& m = s.model;
                  // Keep what was derived derived: head_dim = hidden / heads, MHA stays MHA.
                  const bool derivedHeadDim = m.headDim * m.numHeads == m.hiddenSize;
                  const bool mha = m.numKvHeads == m.numHeads;
                  m.*field = v.toLongLong();
                  if (derivedHeadDim && m.numHeads > 0 && m.hiddenSize % m.numHeads == 0)
                      m.headDim = m.hiddenSize / m.numHeads;
                  if (mha && field == &ModelSpec::numHeads)
                      m.numKvHeads = m.numHeads;
                  s.model.preset.clear(); // edited shapes are no longer the preset
                  s.model.name = "custom model";
              };
              all << d;
          };
    shape("model.num_layers", "Layers", "Transformer blocks.", 1, 1000, &ModelSpec::numLayers);
    shape("model.hidden_size", "Hidden size", "Width of the residual stream.", 64, 65536, &ModelSpec::hiddenSize);
    shape("model.num_heads", "Attention heads", "Query heads (hidden = heads x head_dim unless head_dim is set apart).",
        1, 1024, &ModelSpec::numHeads);
    shape("model.num_kv_heads", "KV heads", "1 = multi-query, fewer than the heads = grouped-query attention.", 1, 1024,
        &ModelSpec::numKvHeads);
    shape("model.ffn_hidden_size", "FFN size", "Width of the MLP (of one expert for MoE).", 64, 1000000,
        &ModelSpec::ffnHiddenSize);
    shape("model.vocab_size", "Vocabulary", "Tokens in the vocabulary: sets the embedding and the logits.", 256,
        1000000, &ModelSpec::vocabSize);

    all << choice<Mode>(QStringLiteral("run.mode"), ft, QStringLiteral("Mode"),
        QStringLiteral("Training keeps gradients, optimizer states and activations; inference keeps a KV cache."),
        { { QStringLiteral("Training / fine-tuning"), Mode::Training },
            { QStringLiteral("Inference (one process)"), Mode::Inference } });
    // "serving" is inference with an engine's object: vLLM at its default version unless one is
    // there; another mode drops the object, as a file without it reads.
    all.back().set = [set = all.back().set](Scenario& s, const QVariant& v) {
        set(s, v);
        if (v.toString() == QLatin1String("serving") && !s.run.serving) {
            s.run.serving = Serving {};
            s.run.serving->engineVersion = defaultEngineVersion(ServingEngine::Vllm);
        } else if (v.toString() != QLatin1String("serving")) {
            s.run.serving.reset();
        }
    };
    all.back().choices << QStringLiteral("serving");
    all.back().choiceLabels << QStringLiteral("Serving engine (vLLM, SGLang, llama.cpp)");
    all.back().tooltip = QStringLiteral("Training keeps gradients, optimizer states and activations; inference keeps "
                                        "a KV cache; a serving engine budgets the GPU's memory (the Serving tab).");
    all << choice<FinetuneMethod>(QStringLiteral("run.finetune.method"), ft, QStringLiteral("Method"),
        QStringLiteral("Full: every weight trains. LoRA: a frozen base plus small adapters. "
                       "QLoRA: the frozen base in 4-bit NF4."),
        { { QStringLiteral("Full training"), FinetuneMethod::Full }, { QStringLiteral("LoRA"), FinetuneMethod::Lora },
            { QStringLiteral("QLoRA (NF4 base)"), FinetuneMethod::Qlora } },
        training);
    all << integer(QStringLiteral("run.finetune.rank"), ft, QStringLiteral("LoRA rank"), QString(),
        QStringLiteral("Rank r of each adapter: r x (in + out) parameters per targeted layer."), K::LogInteger, 1, 1024,
        [](const Scenario& s) { return training(s) && s.run.finetune.method != FinetuneMethod::Full; });
    {
        // QLoRA's 4-bit format: the framework's unless one is chosen ("default" leaves the key unset).
        ParamDescriptor quant
            = choice<Nf4Format>(QStringLiteral("run.finetune.quant"), ft, QStringLiteral("NF4 format"),
                QStringLiteral("bitsandbytes' Linear4bit (PEFT, LitGPT) or torchao's NF4Tensor (torchtune): "
                               "the same 4 bits a weight, different scales and dequantization buffers."),
                { { QStringLiteral("bitsandbytes"), Nf4Format::Bitsandbytes },
                    { QStringLiteral("torchao NF4Tensor"), Nf4Format::Torchao } },
                [](const Scenario& s) { return training(s) && s.run.finetune.method == FinetuneMethod::Qlora; });
        all << withFrameworkDefault(std::move(quant));
    }

    all << integer(QStringLiteral("run.sequence_length"), seq, QStringLiteral("Sequence length"),
        QStringLiteral("tokens"),
        QStringLiteral("Tokens per training sample. Activations grow with it (quadratically with eager attention)."),
        K::LogInteger, 128, 1048576, training);
    all << integer(QStringLiteral("run.micro_batch_size"), seq, QStringLiteral("Micro-batch"),
        QStringLiteral("samples"),
        QStringLiteral("Samples per GPU per forward pass. Activations grow linearly with it."), K::LogInteger, 1, 1024,
        training);
    all << integer(QStringLiteral("run.gradient_accumulation_steps"), seq, QStringLiteral("Accumulation"),
        QStringLiteral("steps"),
        QStringLiteral("Micro-batches summed before each optimizer step: a larger global batch at no memory cost "
                       "(except in-flight pipeline micro-batches)."),
        K::LogInteger, 1, 1024, training);

    all << choice<Precision>(QStringLiteral("run.precision"), prec, QStringLiteral("Precision"),
        QStringLiteral("Mixed keeps an fp32 master copy, fp32 gradients and fp32 optimizer states beside "
                       "16-bit weights and activations: faster, not smaller."),
        { { QStringLiteral("Mixed BF16"), Precision::MixedBf16 },
            { QStringLiteral("Mixed FP16"), Precision::MixedFp16 }, { QStringLiteral("Pure BF16"), Precision::Bf16 },
            { QStringLiteral("Pure FP16"), Precision::Fp16 }, { QStringLiteral("FP32"), Precision::Fp32 } },
        training);
    all << choice<Optimizer>(QStringLiteral("run.optimizer"), prec, QStringLiteral("Optimizer"),
        QStringLiteral("AdamW keeps two states per trainable weight; SGD none; Lion one; 8-bit Adam two "
                       "bytes; Adafactor a factored second moment."),
        { { QStringLiteral("AdamW"), Optimizer::AdamW }, { QStringLiteral("AdamW 8-bit"), Optimizer::AdamW8bit },
            { QStringLiteral("Adafactor"), Optimizer::Adafactor }, { QStringLiteral("Lion"), Optimizer::Lion },
            { QStringLiteral("SGD + momentum"), Optimizer::SgdMomentum }, { QStringLiteral("SGD"), Optimizer::Sgd } },
        training);

    ParamDescriptor ckpt
        = describe(QStringLiteral("run.checkpointing"), prec, QStringLiteral("Checkpointing"), QString(),
            QStringLiteral("Full: each layer keeps only its input and is recomputed in backward (~33% more compute). "
                           "Selective: only the attention core is recomputed. Every k: one input per k layers. First "
                           "half: only the first half of the layers is checkpointed, the rest keep everything "
                           "(Megatron's block recomputation; torchtitan's and torchtune's every-second-layer option)."),
            K::Choice);
    ckpt.choices = { QStringLiteral("none"), QStringLiteral("selective"), QStringLiteral("selective-op"),
        QStringLiteral("full"), QStringLiteral("first half"), QStringLiteral("every 2"), QStringLiteral("every 4"),
        QStringLiteral("every 8") };
    ckpt.choiceLabels = { QStringLiteral("None"), QStringLiteral("Selective (attention)"),
        QStringLiteral("Selective op (torchtitan save list)"), QStringLiteral("Full (every layer)"),
        QStringLiteral("First half of the layers"), QStringLiteral("Every 2 layers"), QStringLiteral("Every 4 layers"),
        QStringLiteral("Every 8 layers") };
    // {"layers": n}: "first half" where n is half the layers, else "first n" (a file's value, shown as it is).
    ckpt.get = [](const Scenario& s) {
        const Checkpointing& c = s.run.checkpointing;
        if (c.kind == Checkpointing::Kind::Layers && c.every == ceilDiv(s.model.numLayers, Count(2)))
            return QVariant(QStringLiteral("first half"));
        return QVariant(QString::fromStdString(toString(c)).remove(QStringLiteral(" layers")));
    };
    ckpt.set = [](Scenario& s, const QVariant& v) {
        const QString t = v.toString();
        if (t.startsWith(QLatin1String("every ")))
            s.run.checkpointing = { Checkpointing::Kind::Every, t.mid(6).toLongLong() };
        else if (t == QLatin1String("first half"))
            s.run.checkpointing = { Checkpointing::Kind::Layers, std::max<Count>(1, ceilDiv(s.model.numLayers, 2)) };
        else if (t.startsWith(QLatin1String("first ")))
            s.run.checkpointing = { Checkpointing::Kind::Layers, t.mid(6).toLongLong() };
        else
            s.run.checkpointing = { t == QLatin1String("full") ? Checkpointing::Kind::Full
                    : t == QLatin1String("selective")          ? Checkpointing::Kind::Selective
                    : t == QLatin1String("selective-op")       ? Checkpointing::Kind::SelectiveOp
                                                               : Checkpointing::Kind::None,
                0 };
    };
    ckpt.applies = training;
    all << ckpt;
    all << choice<AttentionImpl>(QStringLiteral("run.attention"), prec, QStringLiteral("Attention"),
        QStringLiteral("Eager keeps the s x s softmax for backward; flash (FlashAttention / SDPA) "
                       "keeps only its output and a log-sum-exp."),
        { { QStringLiteral("Flash / SDPA"), AttentionImpl::Flash },
            { QStringLiteral("Eager (softmax kept)"), AttentionImpl::Eager } },
        training);
    all << choice<Framework>(QStringLiteral("run.framework"), prec, QStringLiteral("Framework"),
        QStringLiteral("Whose training code runs: it sets the loss and optimizer implementation "
                       "(unless set below) and the model code's own copies (fp32 norms, repeated K/V)."),
        { { QStringLiteral("Plain PyTorch"), Framework::Plain },
            { QStringLiteral("torchtitan"), Framework::Torchtitan },
            { QStringLiteral("HF Transformers"), Framework::HfTransformers },
            { QStringLiteral("torchtune"), Framework::Torchtune }, { QStringLiteral("LitGPT"), Framework::Litgpt },
            { QStringLiteral("DeepSpeed"), Framework::Deepspeed },
            { QStringLiteral("Megatron-LM"), Framework::Megatron } },
        training);
    {
        // The framework's loss unless one is chosen: "default" leaves run.loss unset.
        const std::vector<std::pair<QString, LossKind>> losses = { { QStringLiteral("fp32 upcast"), LossKind::Upcast },
            { QStringLiteral("16-bit, no upcast"), LossKind::Native },
            { QStringLiteral("HF ForCausalLMLoss"), LossKind::HfShift },
            { QStringLiteral("Chunked"), LossKind::Chunked }, { QStringLiteral("Fused (Liger)"), LossKind::Fused },
            { QStringLiteral("Vocab-parallel"), LossKind::LossParallel } };
        ParamDescriptor loss = choice<LossKind>(QStringLiteral("run.loss"), prec, QStringLiteral("Loss"),
            QStringLiteral("How the cross-entropy holds the logits: an fp32 copy, 16-bit, in "
                           "chunks, fused with the LM head (no full logits), or split by vocabulary."),
            losses, training);
        all << withFrameworkDefault(std::move(loss));
    }
    // Shown where the framework's compile is modelled (torchtitan, torchtune), and while it is on,
    // so that a switch to another framework (which the core refuses with the reason) can be undone here.
    all << toggle(QStringLiteral("run.activation_offloading"), prec, QStringLiteral("Offload activations"),
        QStringLiteral("torchtune's OffloadActivations with whole-layer checkpointing: saved layer inputs go to pinned "
                       "host memory in forward and come back one layer at a time in backward."),
        [](const Scenario& s) {
            return s.run.mode == Mode::Training && !s.run.serving
                && (s.run.activationOffloading || s.run.framework == Framework::Torchtune);
        });
    all << toggle(QStringLiteral("run.compile"), prec, QStringLiteral("torch.compile"),
        QStringLiteral("Each transformer block compiled as the framework does it: the partitioner recomputes "
                       "pointwise tensors (fp32 norm copies, the SiLU output) in backward instead of saving them."),
        [](const Scenario& s) {
            return s.run.mode == Mode::Training && !s.run.serving
                && (s.run.compile || !frameworkProfile(s.run.framework).compileScope.empty());
        });

    all << integer(QStringLiteral("run.batch_size"), inf, QStringLiteral("Batch"), QStringLiteral("sequences"),
        QStringLiteral("Sequences served at once; each has its own KV cache."), K::LogInteger, 1, 4096, inference);
    all << integer(QStringLiteral("run.context_length"), inf, QStringLiteral("Context"), QStringLiteral("tokens"),
        QStringLiteral("Prompt plus generated tokens held in the KV cache."), K::LogInteger, 128, 1048576, inference);
    const std::vector<std::pair<QString, DType>> weightTypes
        = { { QStringLiteral("BF16"), DType::Bf16 }, { QStringLiteral("FP16"), DType::Fp16 },
              { QStringLiteral("FP8"), DType::Fp8 }, { QStringLiteral("INT8"), DType::Int8 },
              { QStringLiteral("INT4 (group 128)"), DType::Int4 }, { QStringLiteral("NF4"), DType::Nf4 } };
    all << choice<DType>(QStringLiteral("run.weight_dtype"), inf, QStringLiteral("Weights"),
        QStringLiteral("Storage type of the served weights (linear layers; embeddings stay 16-bit)."), weightTypes,
        inference);
    all << choice<DType>(QStringLiteral("run.kv_cache_dtype"), inf, QStringLiteral("KV cache"),
        QStringLiteral("Storage type of the cached keys and values."),
        { { QStringLiteral("BF16"), DType::Bf16 }, { QStringLiteral("FP8"), DType::Fp8 },
            { QStringLiteral("INT8"), DType::Int8 }, { QStringLiteral("INT4"), DType::Int4 } },
        inference);
    addServingControls(all);

    all << integer(QStringLiteral("run.parallelism.gpus"), par, QStringLiteral("GPUs"), QStringLiteral("GPUs"),
        QStringLiteral("All GPUs: data-parallel x tensor-parallel x pipeline-parallel."), K::LogInteger, 1, 16384);
    ParamDescriptor zero
        = integer(QStringLiteral("run.parallelism.zero_stage"), par, QStringLiteral("ZeRO stage"), QString(),
            QStringLiteral("Shards over the data-parallel GPUs: 1 optimizer states, 2 + gradients, "
                           "3 + weights (FSDP)."),
            K::Integer, 0, 3, training);
    all << zero;
    all << integer(QStringLiteral("run.parallelism.tensor_parallel"), par, QStringLiteral("Tensor parallel"),
        QStringLiteral("GPUs"), QStringLiteral("Splits every layer's heads and MLP over this many GPUs."),
        K::LogInteger, 1, 64);
    all << integer(QStringLiteral("run.parallelism.pipeline_parallel"), par, QStringLiteral("Pipeline parallel"),
        QStringLiteral("stages"),
        QStringLiteral("Splits the layers into stages; the first stage holds several micro-batches in flight."),
        K::LogInteger, 1, 128);
    // Shown with pipeline stages, and while interleaved, so that going back to one stage can be undone here.
    auto pipelined = [](const Scenario& s) {
        return s.run.mode == Mode::Training && !s.run.serving
            && (s.run.parallelism.pipelineParallel > 1
                || s.run.parallelism.pipelineSchedule != PipelineSchedule::OneFOneB
                || s.run.parallelism.virtualStages != 1);
    };
    all << choice<PipelineSchedule>(QStringLiteral("run.parallelism.pipeline_schedule"), par,
        QStringLiteral("Pipeline schedule"),
        QStringLiteral("1F1B: the first stage holds pipeline_parallel micro-batches. Interleaved 1F1B (Megatron-LM "
                       "virtual pipeline, PyTorch ScheduleInterleaved1F1B): each GPU holds several chunks of layers; "
                       "a smaller bubble, more chunk passes in flight."),
        { { QStringLiteral("1F1B"), PipelineSchedule::OneFOneB },
            { QStringLiteral("Interleaved 1F1B"), PipelineSchedule::Interleaved } },
        pipelined);
    all << integer(QStringLiteral("run.parallelism.virtual_stages"), par, QStringLiteral("Virtual stages"),
        QStringLiteral("chunks"),
        QStringLiteral("Interleaved 1F1B: chunks of layers per pipeline GPU (Megatron-LM "
                       "--num-virtual-stages-per-pipeline-rank); the layers must split evenly."),
        K::Integer, 1, 64, pipelined);
    // Shown where context parallelism is modelled (torchtitan), and while it is on, so that a switch to another
    // framework (which the core refuses with the reason) can be undone here.
    all << integer(QStringLiteral("run.parallelism.context_parallel"), par, QStringLiteral("Context parallel"),
        QStringLiteral("GPUs"),
        QStringLiteral("torchtitan's context parallelism: each GPU holds sequence / N tokens; ring attention gathers "
                       "the whole sequence's K and V for one layer at a time."),
        K::LogInteger, 1, 64, [](const Scenario& s) {
            return s.run.mode == Mode::Training && !s.run.serving
                && (s.run.parallelism.contextParallel != 1 || frameworkProfile(s.run.framework).contextParallel);
        });
    all << toggle(QStringLiteral("run.parallelism.sequence_parallel"), par, QStringLiteral("Sequence parallel"),
        QStringLiteral("With tensor parallelism, also splits the norms' and residuals' activations."), training);
    // Shown where it is modelled (torchtitan), and while on, so that a switch away can be undone here.
    all << toggle(QStringLiteral("run.parallelism.async_tp"), par, QStringLiteral("Async TP"),
        QStringLiteral("torchtitan's asynchronous tensor parallelism (needs compile and sequence parallel): the "
                       "collectives run inside the matmuls through a symmetric-memory workspace outside PyTorch's "
                       "allocator."),
        [](const Scenario& s) {
            return s.run.mode == Mode::Training && !s.run.serving
                && (s.run.parallelism.asyncTp || s.run.framework == Framework::Torchtitan);
        });
    // torch DDP (no ZeRO, no FSDP; not Megatron's or DeepSpeed's own data parallelism).
    all << toggle(QStringLiteral("run.parallelism.gradient_as_bucket_view"), par,
        QStringLiteral("DDP gradient as bucket view"),
        QStringLiteral("torch DDP's gradient_as_bucket_view: the gradients live in DDP's buckets. Off (DDP's "
                       "default), the buckets are a second copy of every gradient, allocated for the whole run."),
        [](const Scenario& s) { return s.run.parallelism.gradientAsBucketView || torchDdp(s.run); });
    all << toggle(QStringLiteral("run.parallelism.offload_optimizer"), par, QStringLiteral("Offload optimizer"),
        QStringLiteral("Keeps optimizer states and master weights in host memory (ZeRO-Offload)."), training);
    all << toggle(QStringLiteral("run.parallelism.offload_params"), par, QStringLiteral("Offload weights"),
        QStringLiteral("Keeps the weights in host memory and gathers one layer at a time (ZeRO-3 only)."), training);

    ParamDescriptor gpu = describe(QStringLiteral("run.gpu"), hw, QStringLiteral("GPU"), QString(),
        QStringLiteral("Memory, peak TFLOP/s and bandwidth from the catalog."), K::Choice);
    for (const GpuSpec& g : gpuCatalog()) {
        gpu.choices << QString::fromStdString(g.name);
        gpu.choiceLabels << QString::fromStdString(g.displayName);
    }
    gpu.choices << QStringLiteral("custom");
    gpu.choiceLabels << QStringLiteral("Custom GPU");
    gpu.get = [](const Scenario& s) {
        if (!s.run.gpu)
            return QVariant(QString());
        // A catalog GPU where the file names one: any figure changed makes it custom.
        static const ScenarioField* field = findField("run.gpu");
        return QVariant(
            fieldJson(*field, s).is_string() ? QString::fromStdString(s.run.gpu->name) : QStringLiteral("custom"));
    };
    gpu.set = [](Scenario& s, const QVariant& v) {
        const auto g = findGpu(v.toString().toStdString());
        s.run.gpu = g ? *g : customGpu(s);
    };
    gpu.applies = always;
    all << gpu;

    ParamDescriptor mem
        = describe(QStringLiteral("run.gpu.memory_gib"), hw, QStringLiteral("Capacity"), QStringLiteral("GiB"),
            QStringLiteral("Device memory of one GPU; changing it makes the GPU custom."), K::Real, 1, 1024, 1);
    mem.get
        = [](const Scenario& s) { return QVariant(s.run.gpu ? double(s.run.gpu->memoryBytes) / double(kGiB) : 80.0); };
    mem.set = [](Scenario& s, const QVariant& v) {
        const Bytes bytes = static_cast<Bytes>(v.toDouble() * double(kGiB));
        if (!s.run.gpu || bytes != s.run.gpu->memoryBytes) {
            GpuSpec g = customGpu(s);
            g.memoryBytes = bytes;
            s.run.gpu = g;
        }
    };
    mem.applies = always;
    all << mem;

    all << fieldControl(QStringLiteral("run.mfu"), hw, QStringLiteral("Compute efficiency"), QStringLiteral("of peak"),
        QStringLiteral("Share of the GPU's peak FLOP/s the matmuls reach, recomputation included (0.4-0.6 is "
                       "typical for large runs); communication and the pipeline bubble add time on top, and the "
                       "header states the MFU that results."),
        K::Real, 0.05, 1.0, always, 2);
    all << fieldControl(QStringLiteral("run.safety_margin"), hw, QStringLiteral("Safety margin"),
        QStringLiteral("of memory"),
        QStringLiteral("Share of each GPU's memory kept free (allocator cache, fragmentation, other "
                       "processes; 5% by default): the verdict, the fit solvers and the planner count only the rest."),
        K::Real, 0.0, 0.5, always, 2);
    all << toggle(QStringLiteral("run.allocator.expandable_segments"), hw, QStringLiteral("Expandable segments"),
        QStringLiteral("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: the caching allocator grows one segment "
                       "page by page, so less memory stays reserved beyond the live tensors (the allocator counters "
                       "on the Explain page; the live peak and the verdict do not change)."),
        [](const Scenario& s) { return s.run.mode == Mode::Training && !s.run.serving; });
    addAdvancedControls(all);
    return all;
}

} // namespace

const QVector<ParamDescriptor>& parameterDescriptors()
{
    static const QVector<ParamDescriptor> all = build();
    return all;
}

const ParamDescriptor* findDescriptor(const QString& key)
{
    for (const ParamDescriptor& d : parameterDescriptors())
        if (d.key == key)
            return &d;
    return nullptr;
}

} // namespace vramlab
