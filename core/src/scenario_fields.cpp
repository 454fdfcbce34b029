// SPDX-License-Identifier: MIT
#include "vramlab/scenario_fields.h"

#include "json_reader.h"
#include "vramlab/errors.h"
#include "vramlab/presets.h"
#include "vramlab/scenario_io.h"
#include "vramlab/serving_io.h"

#include <type_traits>

namespace vramlab {

using detail::JsonObjectReader;
using nlohmann::json;

namespace {

// Sane limits: far beyond any real model, small enough that nothing overflows.
constexpr double kMaxVocab = 100'000'000, kMaxHidden = 1'000'000, kMaxLayers = 100'000, kMaxHeads = 100'000;
constexpr double kMaxFfn = 10'000'000, kMaxTokens = 100'000'000, kMaxBatch = 1'000'000, kMaxGpus = 10'000'000;
constexpr double kMaxBytes = double(Count(1) << 40);

using Predicate = bool (*)(const Scenario&);

constexpr ScenarioField field(std::string_view key, FieldKind kind, std::string_view text)
{
    ScenarioField f;
    f.key = key;
    f.kind = kind;
    f.description = text;
    return f;
}

double asReal(const FieldValue& v)
{
    return std::holds_alternative<Count>(v) ? double(std::get<Count>(v)) : std::get<double>(v);
}

// Each maker takes the field's accessor as a template argument, a lambda `[](auto& s) -> auto& {...}`
// that works on a const and a non-const Scenario, so get and set are plain function pointers.

template <auto Ref>
constexpr ScenarioField integer(
    std::string_view key, double lo, double hi, std::string_view unit, std::string_view text)
{
    ScenarioField f = field(key, FieldKind::Integer, text);
    f.min = lo;
    f.max = hi;
    f.unit = unit;
    f.get = [](const Scenario& s) -> FieldValue { return static_cast<Count>(Ref(s)); };
    f.set = [](Scenario& s, const FieldValue& v) {
        Ref(s) = static_cast<std::remove_reference_t<decltype(Ref(s))>>(std::get<Count>(v));
    };
    return f;
}

template <auto Ref>
constexpr ScenarioField optionalInteger(
    std::string_view key, double lo, double hi, std::string_view unit, std::string_view text)
{
    ScenarioField f = field(key, FieldKind::Integer, text);
    f.min = lo;
    f.max = hi;
    f.unit = unit;
    f.get = [](const Scenario& s) -> FieldValue { return Ref(s) ? FieldValue(Count(*Ref(s))) : FieldValue(); };
    f.set = [](Scenario& s, const FieldValue& v) {
        if (std::holds_alternative<Count>(v))
            Ref(s) = std::get<Count>(v);
        else
            Ref(s).reset();
    };
    return f;
}

template <auto Ref>
constexpr ScenarioField real(
    std::string_view key, double lo, double hi, bool hiOpen, std::string_view unit, std::string_view text)
{
    ScenarioField f = field(key, FieldKind::Real, text);
    f.min = lo;
    f.max = hi;
    f.maxOpen = hiOpen;
    f.unit = unit;
    f.get = [](const Scenario& s) -> FieldValue { return double(Ref(s)); };
    f.set = [](Scenario& s, const FieldValue& v) { Ref(s) = asReal(v); };
    return f;
}

template <auto Ref> constexpr ScenarioField boolean(std::string_view key, std::string_view text)
{
    ScenarioField f = field(key, FieldKind::Boolean, text);
    f.get = [](const Scenario& s) -> FieldValue { return bool(Ref(s)); };
    f.set = [](Scenario& s, const FieldValue& v) { Ref(s) = std::get<bool>(v); };
    return f;
}

/// A switch that is off unless set: written to a file only when on, so files that never
/// named it stay as they were.
template <auto Ref> constexpr ScenarioField flag(std::string_view key, std::string_view text)
{
    ScenarioField f = boolean<Ref>(key, text);
    f.written = [](const Scenario& s) { return bool(Ref(s)); };
    return f;
}

template <auto Ref> constexpr ScenarioField optionalBoolean(std::string_view key, std::string_view text)
{
    ScenarioField f = field(key, FieldKind::Boolean, text);
    f.get = [](const Scenario& s) -> FieldValue { return Ref(s) ? FieldValue(bool(*Ref(s))) : FieldValue(); };
    f.set = [](Scenario& s, const FieldValue& v) {
        if (std::holds_alternative<bool>(v))
            Ref(s) = std::get<bool>(v);
        else
            Ref(s).reset();
    };
    return f;
}

/// The value a choice names; the reader has checked the name, a window or a sweep may not have.
template <typename E> E named(std::span<const ChoiceName> names, const FieldValue& v)
{
    const std::string& name = std::get<std::string>(v);
    if (auto e = valueNamed<E>(names, name))
        return *e;
    throw InputError("", "not one of the choices: \"" + name + "\"");
}

template <auto Ref, const auto& Names> constexpr ScenarioField choice(std::string_view key, std::string_view text)
{
    ScenarioField f = field(key, FieldKind::Choice, text);
    f.choices = Names;
    f.get = [](const Scenario& s) -> FieldValue { return std::string(nameOf(Names, Ref(s))); };
    f.set
        = [](Scenario& s, const FieldValue& v) { Ref(s) = named<std::remove_reference_t<decltype(Ref(s))>>(Names, v); };
    return f;
}

template <auto Ref, const auto& Names>
constexpr ScenarioField optionalChoice(std::string_view key, std::string_view text)
{
    ScenarioField f = field(key, FieldKind::Choice, text);
    f.choices = Names;
    f.get = [](const Scenario& s) -> FieldValue {
        return Ref(s) ? FieldValue(std::string(nameOf(Names, *Ref(s)))) : FieldValue();
    };
    f.set = [](Scenario& s, const FieldValue& v) {
        if (std::holds_alternative<std::string>(v))
            Ref(s) = named<typename std::remove_reference_t<decltype(Ref(s))>::value_type>(Names, v);
        else
            Ref(s).reset();
    };
    return f;
}

constexpr ScenarioField text(std::string_view key, std::string_view description, FieldValue (*get)(const Scenario&),
    void (*set)(Scenario&, const FieldValue&))
{
    ScenarioField f = field(key, FieldKind::Text, description);
    f.get = get;
    f.set = set;
    return f;
}

constexpr ScenarioField custom(std::string_view key, std::string_view description,
    void (*read)(Scenario&, const json&, const std::string&, std::vector<std::string>&), json (*write)(const Scenario&))
{
    ScenarioField f = field(key, FieldKind::Custom, description);
    f.read = read;
    f.write = write;
    return f;
}

constexpr ScenarioField unmodelled(std::string_view key, std::string_view modelledJson, std::string_view why)
{
    ScenarioField f = field(key, FieldKind::Unmodelled, why);
    f.modelledJson = modelledJson;
    return f;
}

constexpr ScenarioField when(ScenarioField f, Predicate written)
{
    f.written = written;
    return f;
}

// --- the custom keys -------------------------------------------------------------------

void readPreset(Scenario& s, const json& v, const std::string& path, std::vector<std::string>&)
{
    if (!v.is_string())
        throw InputError(path, "expected a string, got " + JsonObjectReader::describe(v));
    const std::optional<Preset> p = findPreset(v.get<std::string>());
    if (!p) {
        std::string names;
        for (const Preset& q : presets())
            names += (names.empty() ? "" : ", ") + q.key;
        throw InputError(path, "expected one of " + names + ", got \"" + v.get<std::string>() + "\"");
    }
    s.model = p->model;
}

json writePreset(const Scenario& s)
{
    return s.model.preset.empty() ? json() : json(s.model.preset);
}

constexpr std::string_view kCheckpointingExpected
    = "expected \"none\", \"full\", \"selective\", \"selective-op\", {\"every\": k} or {\"layers\": n}";

void readCheckpointing(Scenario& s, const json& v, const std::string& path, std::vector<std::string>& warnings)
{
    Checkpointing& c = s.run.checkpointing;
    if (v.is_string()) {
        const std::string name = v.get<std::string>();
        if (const auto kind = valueNamed<Checkpointing::Kind>(kCheckpointingNames, name)) {
            c = { *kind, 0 };
            return;
        }
        throw InputError(path, std::string(kCheckpointingExpected) + ", got \"" + name + "\"");
    }
    if (!v.is_object())
        throw InputError(path, std::string(kCheckpointingExpected) + ", got " + JsonObjectReader::describe(v));
    JsonObjectReader r(v, path);
    const std::optional<Count> every = r.integer("every", 1, Count(kMaxLayers));
    const std::optional<Count> layers = r.integer("layers", 1, Count(kMaxLayers));
    if (every && layers)
        throw InputError(path, "expected {\"every\": k} or {\"layers\": n}, not both");
    if (!every && !layers)
        throw InputError(path + ".every",
            "required: checkpoint segments of this many layers (or \"layers\": the first n layers of each stage)");
    r.collectUnknown(warnings);
    c = every ? Checkpointing { Checkpointing::Kind::Every, *every }
              : Checkpointing { Checkpointing::Kind::Layers, *layers };
}

json writeCheckpointing(const Scenario& s)
{
    const Checkpointing& c = s.run.checkpointing;
    if (c.kind == Checkpointing::Kind::Layers)
        return json { { "layers", c.every } };
    return c.kind == Checkpointing::Kind::Every ? json { { "every", c.every } } : json(toString(c));
}

void readTargets(Scenario& s, const json& t, const std::string& path, std::vector<std::string>&)
{
    if (!t.is_array() || t.empty())
        throw InputError(path, "expected a non-empty array of module names, got " + JsonObjectReader::describe(t));
    s.run.finetune.targets.clear();
    for (size_t i = 0; i < t.size(); ++i) {
        if (!t[i].is_string())
            throw InputError(path + "[" + std::to_string(i) + "]",
                "expected a module name string, got " + JsonObjectReader::describe(t[i]));
        s.run.finetune.targets.push_back(t[i].get<std::string>());
    }
}

json writeTargets(const Scenario& s)
{
    return s.run.finetune.targets;
}

// torchtitan's default without pipelining: every block but the last is resharded.
constexpr const char* kAllButLast = "all but last block";

void readReshard(Scenario& s, const json& v, const std::string& path, std::vector<std::string>&)
{
    if (v != true && v != false && v != kAllButLast)
        throw InputError(path, "expected true, false or \"all but last block\", got " + JsonObjectReader::describe(v));
    s.run.keepLastBlockGathered = v == kAllButLast; // true: every block, also over an earlier setting
    s.run.keepAllGathered = v == false;
}

json writeReshard(const Scenario& s)
{
    return s.run.keepAllGathered ? json(false) : s.run.keepLastBlockGathered ? json(kAllButLast) : json();
}

// torchtitan shards with FSDP over dp_shard x cp (parallelize_llama.py@9dec370ad26b5f8e9a7333a0e36165018262644b:
// world_mesh[("dp_shard_cp",)]), which is every GPU of a tensor x pipeline replica unless dp_replicate > 1
// (HSDP: fully_shard over a 2-D mesh, torch/distributed/_composable/fsdp/fully_shard.py: sharded over the
// shard dimension, replicated over the other; FSDP1 HYBRID_SHARD likewise). The key is read after gpus,
// tensor_parallel, pipeline_parallel and zero_stage (table order); restating the whole group is stored as
// no key, so that a later change of gpus keeps sharding over every rank. The rest is checked in validateRun.
void readFsdpShardGroup(Scenario& s, const json& v, const std::string& path, std::vector<std::string>&)
{
    if (v.is_null())
        return;
    Parallelism& p = s.run.parallelism;
    if (!v.is_number_integer() || v.get<Count>() < 1 || p.zeroStage != 3)
        throw InputError(path,
            "expected the number of GPUs FSDP shards over (an integer >= 1, with zero_stage 3), got "
                + JsonObjectReader::describe(v)
                + (p.zeroStage != 3 ? " with zero_stage " + std::to_string(p.zeroStage) : ""));
    const Count group = v.get<Count>();
    p.fsdpShardGroup = group == p.dataParallel() ? 0 : group;
}

json writeFsdpShardGroup(const Scenario& s)
{
    return s.run.parallelism.fsdpShardGroup > 0 ? json(s.run.parallelism.fsdpShardGroup) : json();
}

GpuSpec readGpuObject(const json& v, const std::string& path, std::vector<std::string>& warnings)
{
    auto unknownGpu = [&](const std::string& name) {
        std::string names;
        for (const GpuSpec& g : gpuCatalog())
            names += (names.empty() ? "" : ", ") + g.name;
        return InputError(
            path, "expected a catalog name (" + names + ") or an object with memory_gib, got \"" + name + "\"");
    };
    if (v.is_string()) {
        if (auto g = findGpu(v.get<std::string>()))
            return *g;
        throw unknownGpu(v.get<std::string>());
    }
    JsonObjectReader r(v, path);
    GpuSpec g;
    if (auto base = r.string("base")) {
        auto found = findGpu(*base);
        if (!found)
            throw unknownGpu(*base);
        g = *found;
    }
    g.name = r.string("name").value_or(g.name.empty() ? "custom" : g.name);
    if (g.displayName.empty() || r.has("name"))
        g.displayName = g.name;
    if (auto gib = r.number("memory_gib", 0.001, 1e6))
        g.memoryBytes = static_cast<Bytes>(*gib * static_cast<double>(kGiB));
    auto set = [](auto& field, const auto& value) {
        if (value)
            field = *value;
    };
    set(g.memoryBytes, r.integer("memory_bytes", 1, Count(1) << 50));
    set(g.fp32Tflops, r.number("fp32_tflops", 0, 1e6));
    set(g.tf32Tflops, r.number("tf32_tflops", 0, 1e6));
    set(g.bf16Tflops, r.number("bf16_tflops", 0, 1e6));
    set(g.fp16Tflops, r.number("fp16_tflops", 0, 1e6));
    set(g.fp8Tflops, r.number("fp8_tflops", 0, 1e6));
    set(g.int8Tops, r.number("int8_tops", 0, 1e6));
    set(g.memoryBandwidthGBs, r.number("memory_bandwidth_gbs", 0, 1e6));
    set(g.interconnectGBs, r.number("interconnect_gbs", 0, 1e6));
    set(g.hostLinkGBs, r.number("host_link_gbs", 0, 1e6));
    r.collectUnknown(warnings);
    if (g.memoryBytes <= 0)
        throw InputError(path + ".memory_gib", "required for a custom GPU (or \"base\": a catalog name)");
    return g;
}

void readGpu(Scenario& s, const json& v, const std::string& path, std::vector<std::string>& warnings)
{
    s.run.gpu = readGpuObject(v, path, warnings);
}

json writeGpu(const Scenario& s)
{
    if (!s.run.gpu)
        return json();
    const GpuSpec& g = *s.run.gpu;
    // The name only where every figure is the catalog's: an edited one must survive the file.
    const auto same = [](const GpuSpec& a, const GpuSpec& b) {
        return a.memoryBytes == b.memoryBytes && a.fp32Tflops == b.fp32Tflops && a.tf32Tflops == b.tf32Tflops
            && a.bf16Tflops == b.bf16Tflops && a.fp16Tflops == b.fp16Tflops && a.fp8Tflops == b.fp8Tflops
            && a.int8Tops == b.int8Tops && a.memoryBandwidthGBs == b.memoryBandwidthGBs
            && a.interconnectGBs == b.interconnectGBs && a.hostLinkGBs == b.hostLinkGBs;
    };
    if (auto cat = findGpu(g.name); cat && same(*cat, g))
        return g.name;
    return gpuSpecJson(g);
}

// --- when a key is written ---------------------------------------------------------------

bool moeEnabled(const Scenario& s)
{
    return s.model.moe.enabled();
}
bool mla(const Scenario& s)
{
    return s.model.attentionType == AttentionType::Mla;
}
bool vision(const Scenario& s)
{
    return s.model.vision.enabled();
}
bool fixedImage(const Scenario& s)
{
    return s.model.vision.enabled() && s.model.vision.fixedImage();
}
bool qwenVision(const Scenario& s)
{
    return s.model.vision.enabled() && s.model.vision.qwen();
}
/// Qwen3.5's or Qwen2.5-VL's tower: a Conv3d over frames and a merger of patches.
bool qwenFamilyVision(const Scenario& s)
{
    return s.model.vision.enabled() && (s.model.vision.qwen() || s.model.vision.qwen25());
}
bool llama4Vision(const Scenario& s)
{
    return s.model.vision.enabled() && s.model.vision.kind == VisionKind::Llama4;
}
bool ssm(const Scenario& s)
{
    return s.model.ssm.enabled();
}
bool hybrid(const Scenario& s)
{
    return s.model.hybrid();
}
bool parallelBlock(const Scenario& s)
{
    return s.model.parallelResidual || s.model.sharedAttentionNorm;
}
bool qlora(const Scenario& s)
{
    return s.run.finetune.method == FinetuneMethod::Qlora;
}

/// A count of blocks of a hybrid model, written as the count and kept as the blocks without (`FreeRef`), so that
/// a dense model's num_layers edit keeps every block whole.
template <auto FreeRef> ScenarioField blockCount(std::string_view key, std::string_view text)
{
    ScenarioField f = when(integer<FreeRef>(key, 0, kMaxLayers, "layers", text), hybrid);
    f.get = [](const Scenario& s) -> FieldValue { return s.model.numLayers - FreeRef(s); };
    f.set = [](Scenario& s, const FieldValue& v) { FreeRef(s) = s.model.numLayers - std::get<Count>(v); };
    return f;
}

inline constexpr ChoiceName kGradDtypeNames[] = { kDTypeNames[0], kDTypeNames[1], kDTypeNames[2] }; // fp32, bf16, fp16
inline constexpr ChoiceName kWeightDtypeNames[] = { kDTypeNames[0], kDTypeNames[1], kDTypeNames[2], kDTypeNames[3],
    kDTypeNames[4], kDTypeNames[5], kDTypeNames[6] }; // all but nf4 without DQ
inline constexpr ChoiceName kKvDtypeNames[] = { kDTypeNames[0], kDTypeNames[1], kDTypeNames[2], kDTypeNames[3],
    kDTypeNames[4], kDTypeNames[5] }; // fp32 ... int4

#define REF(expr)                                                                                                      \
    [](auto& s) -> auto&                                                                                               \
    {                                                                                                                  \
        return expr;                                                                                                   \
    }

/// run.parallelism.zero_stage; below 3 FSDP1's own keys apply to nothing and are dropped (read before them from a
/// file, so this only clears what a panel edit leaves behind its hidden controls).
ScenarioField zeroStageField()
{
    ScenarioField f = integer<REF(s.run.parallelism.zeroStage)>(
        "run.parallelism.zero_stage", 0, 3, "", "ZeRO stage over the data-parallel group.");
    f.set = [](Scenario& s, const FieldValue& v) {
        Parallelism& p = s.run.parallelism;
        p.zeroStage = static_cast<int>(std::get<Count>(v));
        if (p.zeroStage != 3) {
            p.noSync.reset();
            p.fsdpWrap.reset();
        }
    };
    return f;
}

/// run.parallelism.sharding; leaving FSDP1 drops its own keys (no_sync, fsdp_wrap), which apply to nothing else
/// (a panel change would otherwise leave a value its hidden control cannot clear). A file states them after it.
ScenarioField shardingField()
{
    ScenarioField f = when(choice<REF(s.run.parallelism.sharding), kShardingNames>("run.parallelism.sharding",
                               "ZeRO-3 as DeepSpeed does it, or as PyTorch FSDP2 (per-parameter shards) or FSDP1 "
                               "(flat parameters)."),
        [](const Scenario& s) { return s.run.parallelism.sharding != Sharding::Zero; });
    f.set = [](Scenario& s, const FieldValue& v) {
        Parallelism& p = s.run.parallelism;
        p.sharding = named<Sharding>(kShardingNames, v);
        if (p.sharding != Sharding::Fsdp1) {
            p.noSync.reset();
            p.fsdpWrap.reset();
        }
    };
    return f;
}

const ScenarioField kFields[] = {
    // --- model (spec: model) -------------------------------------------------------------
    custom(
        "model.preset", "A published model whose shapes are the defaults of the keys below.", readPreset, writePreset),
    text(
        "model.name", "The model's display name.", [](const Scenario& s) -> FieldValue { return s.model.name; },
        [](Scenario& s, const FieldValue& v) { s.model.name = std::get<std::string>(v); }),
    integer<REF(s.model.vocabSize)>(
        "model.vocab_size", 1, kMaxVocab, "tokens", "Tokens in the vocabulary: the embedding and the logits."),
    integer<REF(s.model.hiddenSize)>("model.hidden_size", 1, kMaxHidden, "", "Width of the residual stream."),
    integer<REF(s.model.numLayers)>("model.num_layers", 1, kMaxLayers, "layers", "Transformer blocks."),
    integer<REF(s.model.numHeads)>("model.num_heads", 1, kMaxHeads, "heads", "Query heads."),
    integer<REF(s.model.numKvHeads)>(
        "model.num_kv_heads", 1, kMaxHeads, "heads", "Key/value heads: 1 = MQA, fewer than the heads = GQA."),
    integer<REF(s.model.headDim)>(
        "model.head_dim", 1, 100'000, "", "Width of one head (hidden / heads unless set apart)."),
    integer<REF(s.model.ffnHiddenSize)>("model.ffn_hidden_size", 1, kMaxFfn, "", "Width of the MLP."),
    choice<REF(s.model.mlp), kMlpNames>(
        "model.mlp", "Gated (SwiGLU, GeGLU: gate, up, down) or plain GELU (up, down) MLP."),
    choice<REF(s.model.norm), kNormNames>("model.norm", "RMSNorm (weight) or LayerNorm (weight and bias)."),
    choice<REF(s.model.position), kPositionNames>(
        "model.position", "Rotary (no parameters), learned position embeddings, or none (NoPE)."),
    when(integer<REF(s.model.maxPositionEmbeddings)>("model.max_position_embeddings", 1, kMaxTokens, "tokens",
             "Longest sequence the position embedding covers."),
        [](const Scenario& s) { return s.model.maxPositionEmbeddings > 0; }),
    boolean<REF(s.model.bias)>("model.bias", "Biases on every attention and MLP linear layer."),
    boolean<REF(s.model.qkvBias)>("model.qkv_bias", "Biases on the q, k and v projections only (Qwen2)."),
    when(boolean<REF(s.model.attentionBias)>("model.attention_bias",
             "Biases on the q, k, v and o projections but not the MLP (Phi-3.5-MoE; attention_bias without mlp_bias)."),
        [](const Scenario& s) { return s.model.attentionBias; }),
    when(boolean<REF(s.model.lmHeadBias)>("model.lm_head_bias", "A bias on the LM head (Phi-3.5-MoE)."),
        [](const Scenario& s) { return s.model.lmHeadBias; }),
    boolean<REF(s.model.qkNorm)>("model.qk_norm", "RMSNorm over head_dim on q and k (Gemma 3, Qwen3)."),
    when(integer<REF(s.model.rotaryDim)>("model.rotary_dim", 0, 100'000, "",
             "Channels of each head that RoPE rotates (partial_rotary_factor x head_dim; Qwen3-Next 64 of 256): the "
             "engines' cos/sin cache; 0 = the whole head."),
        [](const Scenario& s) { return s.model.rotaryDim > 0; }),
    when(boolean<REF(s.model.attentionOutputGate)>("model.attention_output_gate",
             "q_proj also yields a sigmoid gate that scales the attention output (Qwen3-Next, Qwen3.5): q_proj is "
             "twice as wide. Serving with vLLM or SGLang is modelled."),
        [](const Scenario& s) { return s.model.attentionOutputGate; }),
    boolean<REF(s.model.qkNormFullWidth)>("model.qk_norm_full_width",
        "With qk_norm: one RMSNorm over all query heads and one over all key heads (OLMo-2), not one per head."),
    boolean<REF(s.model.postNorms)>("model.post_norms", "Extra norms after the attention and MLP outputs (Gemma 2/3)."),
    boolean<REF(s.model.normAfterSublayers)>("model.norm_after_sublayers",
        "No norm before attention or the MLP; their outputs are normalized before the residual add (OLMo-2)."),
    when(boolean<REF(s.model.normBias)>(
             "model.norm_bias", "LayerNorm's bias; false: a weight only, computed in fp32 (Cohere's CohereLayerNorm)."),
        [](const Scenario& s) { return !s.model.normBias; }),
    boolean<REF(s.model.normScaleFp32)>("model.norm_scale_fp32",
        "RMSNorm multiplies its weight in fp32 before casting back (OLMo-2): it keeps the fp32 normalized tensor."),
    when(boolean<REF(s.model.attentionSinks)>("model.attention_sinks",
             "A learnable logit per query head and layer joins each softmax (gpt-oss): heads values per layer."),
        [](const Scenario& s) { return s.model.attentionSinks; }),
    when(boolean<REF(s.model.clampedSwiGlu)>("model.clamped_swiglu",
             "gpt-oss's clamped GLU experts: inference and serving are modelled, training is refused."),
        [](const Scenario& s) { return s.model.clampedSwiGlu; }),
    boolean<REF(s.model.tiedEmbeddings)>("model.tied_embeddings", "The LM head shares the embedding's weights."),
    real<REF(s.model.dropout)>(
        "model.dropout", 0.0, 1.0, true, "", "Dropout probability: each dropout keeps a mask for backward."),
    integer<REF(s.model.slidingWindow)>(
        "model.sliding_window", 0, kMaxTokens, "tokens", "Local attention window; 0 = full attention."),
    integer<REF(s.model.globalLayerInterval)>("model.global_layer_interval", 0, kMaxLayers, "layers",
        "With a window: every Nth layer is global (Gemma 3: 6); 0 = all local."),
    when(boolean<REF(s.model.chunkedLocalAttention)>("model.chunked_local_attention",
             "The local layers attend within fixed chunks of sliding_window tokens, not a sliding window (Llama 4's "
             "attention_chunk_size)."),
        [](const Scenario& s) { return s.model.chunkedLocalAttention; }),
    when(boolean<REF(s.model.mrope)>("model.mrope",
             "Multimodal RoPE (Qwen2.5-VL, Qwen3.5): vLLM sizes its rotary cos/sin cache for 4 x "
             "max_position_embeddings positions."),
        [](const Scenario& s) { return s.model.mrope; }),
    choice<REF(s.model.attentionType), kAttentionTypeNames>(
        "model.attention_type", "MHA/GQA/MQA, or DeepSeek's multi-head latent attention."),
    when(integer<REF(s.model.moe.numExperts)>(
             "model.moe.num_experts", 0, 100'000, "experts", "Routed experts per MoE layer; 0 = dense."),
        moeEnabled),
    when(integer<REF(s.model.moe.topK)>("model.moe.top_k", 0, 100'000, "experts", "Routed experts per token."),
        moeEnabled),
    when(integer<REF(s.model.moe.sharedExperts)>(
             "model.moe.shared_experts", 0, 1'000, "experts", "Experts every token passes through."),
        moeEnabled),
    [] {
        // Written as the effective width (ffn_hidden_size when 0), as files always were.
        ScenarioField f = when(integer<REF(s.model.moe.expertFfnHiddenSize)>("model.moe.expert_ffn_hidden_size", 0,
                                   kMaxFfn, "", "Width of one expert's MLP; 0 = ffn_hidden_size."),
            moeEnabled);
        f.get = [](const Scenario& s) -> FieldValue { return s.model.expertWidth(); };
        return f;
    }(),
    when(integer<REF(s.model.moe.firstDenseLayers)>("model.moe.first_dense_layers", 0, kMaxLayers, "layers",
             "Leading layers with a dense MLP of ffn_hidden_size."),
        moeEnabled),
    when(integer<REF(s.model.moe.layerInterval)>("model.moe.layer_interval", 1, kMaxLayers, "layers",
             "After the leading dense layers, layer i (from 0) has experts when (i + 1) is a multiple of this and a "
             "dense MLP of ffn_hidden_size otherwise (Llama 4 Maverick: 2)."),
        [](const Scenario& s) { return s.model.moe.enabled() && s.model.moe.layerInterval != 1; }),
    when(
        boolean<REF(s.model.moe.routerBias)>("model.moe.router_bias", "Per-expert router bias (DeepSeek-V3, gpt-oss)."),
        moeEnabled),
    when(boolean<REF(s.model.moe.expertBias)>(
             "model.moe.expert_bias", "Biases on each routed expert's gate, up and down projections (gpt-oss)."),
        [](const Scenario& s) { return s.model.moe.enabled() && s.model.moe.expertBias; }),
    when(integer<REF(s.model.moe.sharedExpertFfnHiddenSize)>("model.moe.shared_expert_ffn_hidden_size", 0, kMaxFfn, "",
             "Width of one shared expert's MLP; 0 = the routed expert width."),
        [](const Scenario& s) {
            return s.model.moe.enabled() && s.model.moe.sharedExperts > 0 && s.model.moe.sharedExpertFfnHiddenSize > 0;
        }),
    when(boolean<REF(s.model.moe.sharedExpertGate)>(
             "model.moe.shared_expert_gate", "A sigmoid gate scales the shared expert (Qwen2-MoE)."),
        [](const Scenario& s) { return s.model.moe.enabled() && s.model.moe.sharedExpertGate; }),
    when(boolean<REF(s.model.moe.everyExpertEveryToken)>("model.moe.every_expert_every_token",
             "Every expert runs on every token, the unrouted ones weighted by zero (transformers' Llama 4): serving "
             "engines are modelled, training and hf-generate inference are refused."),
        [](const Scenario& s) { return s.model.moe.enabled() && s.model.moe.everyExpertEveryToken; }),
    when(boolean<REF(s.model.moe.sparseMixer)>("model.moe.sparse_mixer",
             "SparseMixer routing and input jitter in training (Phi-3.5-MoE): inference and serving are modelled, "
             "training is refused."),
        [](const Scenario& s) { return s.model.moe.enabled() && s.model.moe.sparseMixer; }),
    when(integer<REF(s.model.vision.hiddenSize)>("model.vision.hidden_size", 0, kMaxHidden, "",
             "Width of the vision tower (SigLIP); 0 = a text-only model."),
        vision),
    when(integer<REF(s.model.vision.intermediateSize)>(
             "model.vision.intermediate_size", 1, kMaxFfn, "", "MLP width of the vision tower."),
        vision),
    when(integer<REF(s.model.vision.numLayers)>(
             "model.vision.num_layers", 1, kMaxLayers, "layers", "Encoder layers of the vision tower."),
        vision),
    when(integer<REF(s.model.vision.numHeads)>(
             "model.vision.num_heads", 1, 100'000, "heads", "Attention heads of the vision tower."),
        vision),
    when(integer<REF(s.model.vision.imageSize)>(
             "model.vision.image_size", 1, 100'000, "pixels", "Side of the image the tower encodes."),
        fixedImage),
    when(integer<REF(s.model.vision.patchSize)>(
             "model.vision.patch_size", 1, 100'000, "pixels", "Side of one patch (one position)."),
        vision),
    when(integer<REF(s.model.vision.channels)>("model.vision.channels", 1, 16, "", "Image channels (3: RGB)."), vision),
    when(choice<REF(s.model.vision.kind), kVisionKindNames>("model.vision.kind",
             "The image encoder: SigLIP with Gemma 3's projector (default), Qwen3.5's vision transformer, "
             "Llama 4's tower with its pixel-shuffle adapter, or Qwen2.5-VL's vision transformer."),
        [](const Scenario& s) { return s.model.vision.enabled() && s.model.vision.kind != VisionKind::Siglip; }),
    when(integer<REF(s.model.vision.temporalPatchSize)>("model.vision.temporal_patch_size", 1, 1'000, "frames",
             "Frames one patch spans (Qwen: the Conv3d's depth)."),
        qwenFamilyVision),
    when(integer<REF(s.model.vision.spatialMergeSize)>("model.vision.spatial_merge_size", 1, 1'000, "patches",
             "Patches per side the merger joins into one language-model token (Qwen)."),
        qwenFamilyVision),
    when(integer<REF(s.model.vision.outHiddenSize)>("model.vision.out_hidden_size", 1, kMaxHidden, "",
             "The tower's output width: Qwen's merger (the language model's hidden size), Llama 4's "
             "vision_output_dim (the adapter's output, the projector's input)."),
        [](const Scenario& s) { return qwenFamilyVision(s) || llama4Vision(s); }),
    when(integer<REF(s.model.vision.projectorInputDim)>("model.vision.projector_input_dim", 1, kMaxHidden, "",
             "Llama 4: the pixel-shuffle adapter's inner width (fc1's output)."),
        llama4Vision),
    when(integer<REF(s.model.vision.numPositionEmbeddings)>("model.vision.num_position_embeddings", 1, 10'000'000,
             "positions", "Learned positions of the tower, interpolated to each image (Qwen)."),
        qwenVision),
    when(integer<REF(s.model.ssm.layers)>("model.ssm.layers", 0, kMaxLayers, "layers",
             "Blocks with a Mamba-2 mixer (Nemotron-H, Granite-4.0-H, Falcon-H1); 0 = none."),
        ssm),
    when(
        choice<REF(s.model.ssm.kind), kSsmKindNames>("model.ssm.kind",
            "The recurrent mixer: Mamba-2 (default), or Gated DeltaNet (Qwen3-Next, Qwen3.5: value heads are num_heads "
            "x head_dim, key heads are groups x state_size)."),
        [](const Scenario& s) { return s.model.ssm.enabled() && s.model.ssm.deltaNet(); }),
    when(integer<REF(s.model.ssm.numHeads)>("model.ssm.num_heads", 1, 100'000, "heads",
             "Mamba-2 heads (mamba_num_heads); Gated DeltaNet value heads."),
        ssm),
    when(integer<REF(s.model.ssm.headDim)>(
             "model.ssm.head_dim", 1, 100'000, "", "Width of one Mamba-2 head: heads x head_dim is the inner width."),
        ssm),
    when(integer<REF(s.model.ssm.stateSize)>(
             "model.ssm.state_size", 1, 100'000, "", "The scan's state per head channel (ssm_state_size, d_state)."),
        ssm),
    when(integer<REF(s.model.ssm.groups)>(
             "model.ssm.groups", 1, 100'000, "groups", "Groups of heads sharing B and C (n_groups)."),
        ssm),
    when(integer<REF(s.model.ssm.convKernel)>("model.ssm.conv_kernel", 2, 1'000, "tokens",
             "Width of the causal convolution (conv_kernel): each sequence keeps kernel - 1 inputs."),
        ssm),
    when(boolean<REF(s.model.ssm.bias)>("model.ssm.bias", "Biases on in_proj and out_proj (use_bias)."), ssm),
    when(boolean<REF(s.model.ssm.convBias)>("model.ssm.conv_bias", "A bias on the convolution (use_conv_bias)."), ssm),
    when(boolean<REF(s.model.ssm.gatedNorm)>(
             "model.ssm.gated_norm", "A gated RMSNorm over the inner width before out_proj."),
        ssm),
    when(optionalChoice<REF(s.model.ssm.stateDtype), kGradDtypeNames>("model.ssm.state_dtype",
             "The scan state's dtype the checkpoint's config names (Qwen3.5's mamba_ssm_dtype), which vLLM and "
             "SGLang take when their own flag is auto; unset = the engine's default."),
        [](const Scenario& s) { return s.model.ssm.enabled() && s.model.ssm.stateDtype.has_value(); }),
    when(boolean<REF(s.model.ssm.parallel)>("model.ssm.parallel",
             "The Mamba-2 mixer runs beside attention in the same block and reads its norm (Falcon-H1)."),
        ssm),
    blockCount<REF(s.model.attentionFreeLayers)>(
        "model.attention_layers", "Blocks with attention (hybrid models; the rest hold no KV cache)."),
    blockCount<REF(s.model.mlpFreeLayers)>(
        "model.mlp_layers", "Blocks with an MLP, dense or MoE (Nemotron-H holds one mixer or MLP per block)."),
    when(integer<REF(s.model.mla.qLoraRank)>(
             "model.mla.q_lora_rank", 0, kMaxHidden, "", "Rank of the query compression; 0 = plain q."),
        mla),
    when(integer<REF(s.model.mla.kvLoraRank)>(
             "model.mla.kv_lora_rank", 1, kMaxHidden, "", "Rank of the compressed key/value latent."),
        mla),
    when(integer<REF(s.model.mla.qkNopeHeadDim)>(
             "model.mla.qk_nope_head_dim", 0, 100'000, "", "Per-head q/k width without rotary."),
        mla),
    when(integer<REF(s.model.mla.qkRopeHeadDim)>(
             "model.mla.qk_rope_head_dim", 0, 100'000, "", "Per-head q/k width with rotary."),
        mla),
    when(integer<REF(s.model.mla.vHeadDim)>("model.mla.v_head_dim", 1, 100'000, "", "Per-head value width."), mla),
    when(boolean<REF(s.model.parallelResidual)>(
             "model.parallel_residual", "x + attn(norm_1(x)) + mlp(norm_2(x)) (GPT-NeoX, Phi)."),
        parallelBlock),
    when(boolean<REF(s.model.sharedAttentionNorm)>(
             "model.shared_attention_norm", "With a parallel block: the MLP reads norm_1's output."),
        parallelBlock),

    // --- run (spec: run) ---------------------------------------------------------------
    [] {
        ScenarioField f = choice<REF(s.run.mode), kModeNames>("run.mode",
            "Training keeps gradients, optimizer states and activations; inference a KV cache; serving an engine's "
            "budget.");
        f.get = [](const Scenario& s) -> FieldValue {
            return std::string(s.run.serving ? "serving" : nameOf(kModeNames, s.run.mode));
        };
        return f;
    }(),
    integer<REF(s.run.sequenceLength)>("run.sequence_length", 1, kMaxTokens, "tokens", "Tokens per training sample."),
    integer<REF(s.run.microBatchSize)>(
        "run.micro_batch_size", 1, kMaxBatch, "samples", "Samples per GPU per forward pass."),
    integer<REF(s.run.gradientAccumulationSteps)>(
        "run.gradient_accumulation_steps", 1, kMaxBatch, "steps", "Micro-batches summed before each optimizer step."),
    choice<REF(s.run.precision), kPrecisionNames>(
        "run.precision", "Training precision: fp32, pure 16-bit, or mixed (fp32 master copy)."),
    optionalChoice<REF(s.run.gradientDtype), kGradDtypeNames>(
        "run.gradient_dtype", "Gradient type under mixed precision (default fp32)."),
    optionalBoolean<REF(s.run.masterWeights)>(
        "run.master_weights", "Whether mixed precision keeps an fp32 master copy (default yes)."),
    when(boolean<REF(s.run.precisionAwareOptimizer)>("run.precision_aware_optimizer",
             "Megatron-LM's --use-precision-aware-optimizer: Transformer Engine's FusedAdam keeps the master weights "
             "(as 16-bit remainders of the bf16 parameters) and the states (in optimizer_state_dtype)."),
        [](const Scenario& s) { return s.run.precisionAwareOptimizer; }),
    optionalChoice<REF(s.run.optimizerStateDtype), kGradDtypeNames>("run.optimizer_state_dtype",
        "Adam's two moments in this type (Megatron's --exp-avg-dtype/--exp-avg-sq-dtype, with "
        "precision_aware_optimizer); default: the precision's."),
    boolean<REF(s.run.fp8)>("run.fp8",
        "FP8 GEMMs: Transformer Engine's (fp8 inputs saved, fp8 weight copies), or torchao's Float8Linear under "
        "torchtitan (fp8 weights cast in each forward)."),
    choice<REF(s.run.optimizer), kOptimizerNames>("run.optimizer", "The optimizer: its states per trainable weight."),
    custom("run.checkpointing",
        "Activation checkpointing: none, full, selective, selective-op, {\"every\": k} or {\"layers\": n} (the first n "
        "layers of each stage).",
        readCheckpointing, writeCheckpointing),
    choice<REF(s.run.attention), kAttentionNames>(
        "run.attention", "Eager (keeps the softmax) or flash (keeps a log-sum-exp)."),
    real<REF(s.run.mfu)>("run.mfu", 0.001, 1.0, false, "of peak",
        "Compute efficiency: the share of the GPU's peak FLOP/s the step's hardware FLOPs (recomputation "
        "included) run at; communication, the pipeline bubble and offload add time on top, and the report "
        "states the model FLOPs utilization that results."),
    real<REF(s.run.safetyMargin)>("run.safety_margin", 0.0, 0.5, false, "of GPU memory",
        "Share of each GPU's memory kept free (default 0.05): the verdict, fits and the planner use the rest."),
    choice<REF(s.run.framework), kFrameworkNames>(
        "run.framework", "Whose training code runs; sets the defaults of the keys below."),
    optionalChoice<REF(s.run.loss), kLossNames>(
        "run.loss", "How the cross-entropy holds the logits (default: the framework's)."),
    optionalInteger<REF(s.run.lossChunks)>(
        "run.loss_chunks", 1, kMaxTokens, "chunks", "Chunked loss: chunks along the sequence."),
    optionalInteger<REF(s.run.lossChunkTokens)>(
        "run.loss_chunks_tokens", 1, kMaxTokens, "tokens", "Chunked loss: tokens per chunk."),
    optionalChoice<REF(s.run.lossDtype), kGradDtypeNames>("run.loss_dtype",
        "Chunked loss: fp32 (torchtune: each chunk upcast; litgpt: Fabric's fp32 copy of every chunk) or the "
        "logits' 16-bit type."),
    optionalChoice<REF(s.run.optimizerImpl), kOptimizerImplNames>(
        "run.optimizer_impl", "torch.optim foreach, fused, or bitsandbytes' paged 32-bit or 8-bit (unified memory)."),
    flag<REF(s.run.optimizerInBackward)>(
        "run.optimizer_in_backward", "Each parameter stepped and its gradient freed in backward."),
    flag<REF(s.run.compile)>("run.compile",
        "torch.compile as the framework applies it: the partitioner saves fewer tensors (torchtitan, torchtune)."),
    optionalBoolean<REF(s.run.compileLoss)>("run.compile_loss",
        "With run.compile: the loss compiled too (default: the framework's; torchtitan since 2025 compiles it)."),
    flag<REF(s.run.activationOffloading)>("run.activation_offloading",
        "Saved activations moved to pinned host memory in forward and back in backward (torchtune)."),
    flag<REF(s.run.sftTokenAccuracy)>("run.sft_token_accuracy",
        "TRL's SFTTrainer under autocast: an fp32 copy of the logits after each forward for its token accuracy."),

    integer<REF(s.run.parallelism.gpus)>(
        "run.parallelism.gpus", 1, kMaxGpus, "GPUs", "All GPUs: data x tensor x pipeline."),
    zeroStageField(),
    integer<REF(s.run.parallelism.tensorParallel)>(
        "run.parallelism.tensor_parallel", 1, 1024, "GPUs", "Tensor-parallel degree."),
    integer<REF(s.run.parallelism.pipelineParallel)>(
        "run.parallelism.pipeline_parallel", 1, kMaxLayers, "stages", "Pipeline stages."),
    integer<REF(s.run.parallelism.expertParallel)>("run.parallelism.expert_parallel", 1, 100'000, "GPUs",
        "MoE experts spread over this many data-parallel ranks."),
    boolean<REF(s.run.parallelism.sequenceParallel)>(
        "run.parallelism.sequence_parallel", "With TP: norms and residuals split too."),
    boolean<REF(s.run.parallelism.offloadOptimizer)>(
        "run.parallelism.offload_optimizer", "Optimizer states and master weights in host memory."),
    boolean<REF(s.run.parallelism.offloadParams)>(
        "run.parallelism.offload_params", "ZeRO-3 parameters in host memory."),
    shardingField(),
    when(boolean<REF(s.run.parallelism.fp8AllGather)>("run.parallelism.fp8_all_gather",
             "FSDP2 gathers the float8 linears' weights in fp8 (torchao enable_fsdp_float8_all_gather; torchtitan)."),
        [](const Scenario& s) { return s.run.parallelism.fp8AllGather; }),
    custom("run.parallelism.reshard_after_forward",
        "true, \"all but last block\" (torchtitan without pipelining), or false (every block kept gathered).",
        readReshard, writeReshard),
    when(integer<REF(s.run.parallelism.contextParallel)>("run.parallelism.context_parallel", 1, 1024, "GPUs",
             "Context parallelism (torchtitan): each GPU holds sequence_length / N tokens; ring attention all-gathers "
             "K and V."),
        [](const Scenario& s) { return s.run.parallelism.contextParallel != 1; }),
    custom("run.parallelism.fsdp_shard_group",
        "GPUs FSDP shards over (HSDP): a divisor of gpus / (tensor x pipeline) and a multiple of context_parallel; "
        "the states are replicated across the groups. Default: all of them.",
        readFsdpShardGroup, writeFsdpShardGroup),
    optionalInteger<REF(s.run.parallelism.reduceBucketSize)>("run.parallelism.reduce_bucket_size", 0, kMaxBytes,
        "elements",
        "DeepSpeed's reduce_bucket_size: the 16-bit gradient bucket ZeRO reduces through (default 500,000,000; "
        "Hugging Face's \"auto\" writes hidden x hidden)."),
    optionalBoolean<REF(s.run.parallelism.overlapComm)>("run.parallelism.overlap_comm",
        "DeepSpeed's overlap_comm: ZeRO-1/2 keep a second gradient bucket (default: on for ZeRO-3 only)."),
    optionalInteger<REF(s.run.parallelism.stage3PrefetchBucketSize)>("run.parallelism.stage3_prefetch_bucket_size", 0,
        kMaxBytes, "elements",
        "DeepSpeed ZeRO-3: parameters fetched ahead of the running module (default 50,000,000; Hugging Face's "
        "\"auto\" writes 0.9 x hidden x hidden)."),
    optionalInteger<REF(s.run.parallelism.stage3MaxLiveParameters)>("run.parallelism.stage3_max_live_parameters", 0,
        kMaxBytes, "elements",
        "DeepSpeed ZeRO-3: gathered parameters beyond which it stops prefetching (default 1e9)."),
    optionalInteger<REF(s.run.parallelism.stage3MaxReuseDistance)>("run.parallelism.stage3_max_reuse_distance", 0,
        kMaxBytes, "elements",
        "DeepSpeed ZeRO-3: a parameter used again within this many traced elements is not released (default 1e9)."),
    optionalInteger<REF(s.run.parallelism.stage3ParamPersistenceThreshold)>(
        "run.parallelism.stage3_param_persistence_threshold", 0, kMaxBytes, "elements",
        "DeepSpeed ZeRO-3: parameters of at most this many elements are never partitioned away (default 100,000; "
        "Hugging Face's \"auto\" writes 10 x hidden)."),
    when(choice<REF(s.run.parallelism.pipelineSchedule), kPipelineScheduleNames>("run.parallelism.pipeline_schedule",
             "1F1B, or interleaved 1F1B with virtual_stages model chunks per rank (Megatron-LM virtual pipeline, "
             "PyTorch's ScheduleInterleaved1F1B)."),
        [](const Scenario& s) { return s.run.parallelism.pipelineSchedule != PipelineSchedule::OneFOneB; }),
    when(integer<REF(s.run.parallelism.virtualStages)>("run.parallelism.virtual_stages", 1, kMaxLayers, "chunks",
             "Interleaved 1F1B: model chunks per pipeline rank (Megatron --num-virtual-stages-per-pipeline-rank: "
             "num_layers / (pipeline_parallel x virtual_stages) layers each; torchtitan: 2, split unevenly as its "
             "generate_split_points does)."),
        [](const Scenario& s) { return s.run.parallelism.virtualStages != 1; }),
    optionalBoolean<REF(s.run.parallelism.noSync)>("run.parallelism.no_sync",
        "FSDP1: gradient accumulation under no_sync(), every unsharded gradient kept until the last micro-batch "
        "(default: the framework's; Lightning and the Hugging Face Trainer do)."),
    optionalChoice<REF(s.run.parallelism.fsdpWrap), kFsdpWrapNames>("run.parallelism.fsdp_wrap",
        "FSDP1 with adapters: \"blocks\" (each block one flat parameter with its adapters: the frozen weights' "
        "gradients are computed too; LitGPT) or \"peft\" (PEFT's fsdp_auto_wrap_policy: adapters apart; the Hugging "
        "Face Trainer)."),
    when(boolean<REF(s.run.parallelism.gradientAsBucketView)>("run.parallelism.gradient_as_bucket_view",
             "torch DDP's gradient_as_bucket_view: the gradients are views of its buckets instead of a second copy."),
        [](const Scenario& s) { return s.run.parallelism.gradientAsBucketView; }),
    when(boolean<REF(s.run.parallelism.asyncTp)>("run.parallelism.async_tp",
             "torchtitan's async TP: collectives fused with the matmuls through a symmetric-memory workspace "
             "(outside PyTorch's allocator)."),
        [](const Scenario& s) { return s.run.parallelism.asyncTp; }),

    choice<REF(s.run.finetune.method), kFinetuneNames>(
        "run.finetune.method", "Full training, LoRA, or QLoRA (NF4 base)."),
    integer<REF(s.run.finetune.rank)>("run.finetune.rank", 1, 100'000, "", "LoRA rank r."),
    real<REF(s.run.finetune.alpha)>("run.finetune.alpha", 0, 1e6, false, "", "LoRA alpha (scaling, no memory)."),
    real<REF(s.run.finetune.dropout)>(
        "run.finetune.dropout", 0.0, 1.0, true, "", "LoRA dropout: a dropped copy of each target's input."),
    custom("run.finetune.targets", "Module names that get adapters (q, k, v, o, gate, up, down, ...).", readTargets,
        writeTargets),
    optionalChoice<REF(s.run.finetune.quant), kNf4FormatNames>("run.finetune.quant",
        "QLoRA's 4-bit base: bitsandbytes (PEFT, LitGPT) or torchao's NF4Tensor (torchtune); default: the "
        "framework's."),
    unmodelled("run.finetune.quant_block_size", "64", "NF4 block sizes other than 64"),
    when(boolean<REF(s.run.finetune.doubleQuant)>("run.finetune.double_quant", "QLoRA: block scales quantized again."),
        qlora),
    when(boolean<REF(s.run.finetune.quantizeLmHead)>("run.finetune.quantize_lm_head", "QLoRA: the LM head in NF4 too."),
        qlora),
    when(boolean<REF(s.run.finetune.dora)>("run.finetune.dora",
             "DoRA (PEFT use_dora, LoRA or QLoRA under hf-transformers): a magnitude per output of each adapted "
             "linear; every forward rebuilds the adapted weight for its norm and keeps two outputs per linear."),
        [](const Scenario& s) { return s.run.finetune.dora; }),
    optionalBoolean<REF(s.run.finetune.baseFp32)>("run.finetune.base_fp32",
        "LoRA under mixed precision: the frozen base stays fp32 (a model loaded in fp32; default the framework's)."),
    optionalChoice<REF(s.run.finetune.kbitPreparation), kKbitPreparationNames>("run.finetune.kbit_preparation",
        "QLoRA under hf-transformers: the upcast before training: trl (SFTTrainer: the norms to fp32, the default), "
        "peft (prepare_model_for_kbit_training: the embedding, norms and LM head to fp32) or none."),

    integer<REF(s.run.inference.batchSize)>(
        "run.batch_size", 1, kMaxBatch, "sequences", "Inference: sequences served at once."),
    integer<REF(s.run.inference.contextLength)>(
        "run.context_length", 1, kMaxTokens, "tokens", "Inference: tokens held in the KV cache."),
    choice<REF(s.run.inference.weightDtype), kWeightDtypeNames>(
        "run.weight_dtype", "Inference: storage type of the weights."),
    choice<REF(s.run.inference.kvCacheDtype), kKvDtypeNames>(
        "run.kv_cache_dtype", "Inference: storage type of the KV cache."),

    integer<REF(s.run.overheads.cudaContextBytes)>(
        "run.overheads.cuda_context_bytes", 0, kMaxBytes, "bytes", "CUDA context and kernels."),
    integer<REF(s.run.overheads.workspaceBytes)>(
        "run.overheads.workspace_bytes", 0, kMaxBytes, "bytes", "cuBLAS workspace."),
    boolean<REF(s.run.overheads.allocatorRounding)>(
        "run.overheads.allocator_rounding", "Blocks rounded up to 512 B as PyTorch does."),
    real<REF(s.run.overheads.fragmentation)>(
        "run.overheads.fragmentation", 0.0, 1.0, false, "of activations", "Extra fraction lost to fragmentation."),
    when(boolean<REF(s.run.allocator.expandableSegments)>("run.allocator.expandable_segments",
             "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: segments grow page by page (the allocator replay's "
             "reserved and device peaks; not the live peak)."),
        [](const Scenario& s) { return s.run.allocator.expandableSegments; }),
    optionalInteger<REF(s.run.overheads.commBufferBytes)>("run.overheads.comm_buffer_bytes", 0, kMaxBytes, "bytes",
        "NCCL and bucket buffers (default: 2 x 25 MiB + 256 MiB with more than one GPU)."),
    custom(
        "run.serving",
        "With run.mode \"serving\": the engine and its own flags (vllm, sglang, llama.cpp, hf-generate).",
        [](Scenario& s, const json& v, const std::string&, std::vector<std::string>&) { readServing(v, s.run); },
        [](const Scenario& s) { return servingJson(s.run); }),
    custom("run.gpu", "A catalog name or an object with memory_gib (and optionally base, TFLOP/s, bandwidths).",
        readGpu, writeGpu),
};

#undef REF

} // namespace

std::span<const ScenarioField> scenarioFields()
{
    return kFields;
}

const ScenarioField* findField(std::string_view key)
{
    for (const ScenarioField& f : kFields)
        if (f.key == key)
            return &f;
    return nullptr;
}

std::string_view fieldParent(std::string_view key)
{
    const auto dot = key.rfind('.');
    return dot == std::string_view::npos ? std::string_view() : key.substr(0, dot);
}

std::string_view fieldName(std::string_view key)
{
    const auto dot = key.rfind('.');
    return dot == std::string_view::npos ? key : key.substr(dot + 1);
}

json fieldJson(const ScenarioField& f, const Scenario& sc)
{
    if (f.kind == FieldKind::Unmodelled)
        return json();
    if (f.written && !f.written(sc))
        return json();
    if (f.write)
        return f.write(sc);
    const FieldValue v = f.get(sc);
    return std::visit(
        [](const auto& x) -> json {
            if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::monostate>)
                return json();
            else
                return json(x);
        },
        v);
}

std::string fieldExpectation(const ScenarioField& f)
{
    switch (f.kind) {
    case FieldKind::Choice: {
        std::string names;
        for (const ChoiceName& c : f.choices)
            names += (names.empty() ? "" : ", ") + std::string(c.name);
        return "expected one of " + names;
    }
    case FieldKind::Integer:
        return "expected an integer from " + formatCount(Count(f.min)) + " to " + formatCount(Count(f.max));
    case FieldKind::Boolean:
        return "expected true or false";
    case FieldKind::Text:
        return "expected a string";
    default:
        return "expected " + std::string(f.description);
    }
}

} // namespace vramlab
