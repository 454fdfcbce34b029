// SPDX-License-Identifier: MIT
#include "vramlab/scenario_io.h"

#include "json_reader.h"
#include "vramlab/errors.h"
#include "vramlab/presets.h"
#include "vramlab/serving_io.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <vector>

namespace vramlab {

using detail::JsonObjectReader;
using nlohmann::json;

namespace {

// Sane limits: far beyond any real model, small enough that nothing overflows.
constexpr Count kMaxVocab = 100'000'000, kMaxHidden = 1'000'000, kMaxLayers = 100'000, kMaxHeads = 100'000;
constexpr Count kMaxFfn = 10'000'000, kMaxTokens = 100'000'000, kMaxBatch = 1'000'000, kMaxGpus = 10'000'000;

template <typename T> void set(T& field, const std::optional<T>& v)
{
    if (v)
        field = *v;
}

const std::vector<std::pair<std::string, MlpKind>> kMlp
    = { { "swiglu", MlpKind::SwiGlu }, { "geglu", MlpKind::GeGlu }, { "gelu", MlpKind::Gelu } };
const std::vector<std::pair<std::string, NormKind>> kNorm
    = { { "rmsnorm", NormKind::RmsNorm }, { "layernorm", NormKind::LayerNorm } };
const std::vector<std::pair<std::string, PositionKind>> kPosition
    = { { "rope", PositionKind::Rope }, { "learned", PositionKind::Learned } };
const std::vector<std::pair<std::string, AttentionType>> kAttnType
    = { { "mha", AttentionType::Mha }, { "mla", AttentionType::Mla } };
const std::vector<std::pair<std::string, Mode>> kMode
    = { { "training", Mode::Training }, { "inference", Mode::Inference }, { "serving", Mode::Inference } };
const std::vector<std::pair<std::string, Precision>> kPrecision
    = { { "fp32", Precision::Fp32 }, { "bf16", Precision::Bf16 }, { "fp16", Precision::Fp16 },
          { "mixed-bf16", Precision::MixedBf16 }, { "mixed-fp16", Precision::MixedFp16 } };
const std::vector<std::pair<std::string, Optimizer>> kOptimizer = { { "adamw", Optimizer::AdamW },
    { "adam", Optimizer::Adam }, { "adamw-8bit", Optimizer::AdamW8bit }, { "sgd", Optimizer::Sgd },
    { "sgd-momentum", Optimizer::SgdMomentum }, { "lion", Optimizer::Lion }, { "adafactor", Optimizer::Adafactor } };
const std::vector<std::pair<std::string, AttentionImpl>> kAttention
    = { { "eager", AttentionImpl::Eager }, { "flash", AttentionImpl::Flash } };
const std::vector<std::pair<std::string, FinetuneMethod>> kFinetune
    = { { "full", FinetuneMethod::Full }, { "lora", FinetuneMethod::Lora }, { "qlora", FinetuneMethod::Qlora } };
const std::vector<std::pair<std::string, DType>> kGradDtype
    = { { "fp32", DType::Fp32 }, { "bf16", DType::Bf16 }, { "fp16", DType::Fp16 } };
const std::vector<std::pair<std::string, DType>> kWeightDtype
    = { { "fp32", DType::Fp32 }, { "bf16", DType::Bf16 }, { "fp16", DType::Fp16 }, { "fp8", DType::Fp8 },
          { "int8", DType::Int8 }, { "int4", DType::Int4 }, { "nf4", DType::Nf4 } };
const std::vector<std::pair<std::string, DType>> kKvDtype = { { "fp32", DType::Fp32 }, { "bf16", DType::Bf16 },
    { "fp16", DType::Fp16 }, { "fp8", DType::Fp8 }, { "int8", DType::Int8 }, { "int4", DType::Int4 } };

const std::vector<std::pair<std::string, Framework>> kFramework
    = { { "plain", Framework::Plain }, { "torchtitan", Framework::Torchtitan },
          { "hf-transformers", Framework::HfTransformers }, { "torchtune", Framework::Torchtune },
          { "litgpt", Framework::Litgpt }, { "deepspeed", Framework::Deepspeed }, { "megatron", Framework::Megatron } };
const std::vector<std::pair<std::string, LossKind>> kLoss
    = { { "upcast", LossKind::Upcast }, { "native", LossKind::Native }, { "hf-shift", LossKind::HfShift },
          { "chunked", LossKind::Chunked }, { "fused", LossKind::Fused }, { "loss-parallel", LossKind::LossParallel } };
const std::vector<std::pair<std::string, OptimizerImpl>> kOptimizerImpl = { { "foreach", OptimizerImpl::Foreach },
    { "fused", OptimizerImpl::Fused }, { "paged-32bit", OptimizerImpl::Paged32 } };

/// Keys that change memory but are not modelled yet: the value that matches what the
/// model does is accepted, any other is refused naming the key (never silently ignored).
void refuseUnmodelled(
    JsonObjectReader& r, const std::string& key, const nlohmann::json& modelled, const std::string& why)
{
    if (!r.has(key) || r.at(key) == modelled)
        return;
    throw InputError(r.keyPath(key),
        "not modelled yet (" + why + "); expected "
            + (modelled.is_null() ? std::string("no key") : modelled.dump() + " or no key") + ", got "
            + JsonObjectReader::describe(r.at(key)));
}

template <typename T> std::string nameOf(const std::vector<std::pair<std::string, T>>& table, T value)
{
    for (const auto& [name, v] : table)
        if (v == value)
            return name;
    return "?";
}

void readMoe(JsonObjectReader& parent, ModelSpec& m, std::vector<std::string>& warnings)
{
    if (!parent.has("moe"))
        return;
    JsonObjectReader r(parent.at("moe"), parent.keyPath("moe"));
    set(m.moe.numExperts, r.integer("num_experts", 0, 100'000));
    set(m.moe.topK, r.integer("top_k", 0, 100'000));
    set(m.moe.sharedExperts, r.integer("shared_experts", 0, 1'000));
    set(m.moe.expertFfnHiddenSize, r.integer("expert_ffn_hidden_size", 0, kMaxFfn));
    set(m.moe.firstDenseLayers, r.integer("first_dense_layers", 0, kMaxLayers));
    set(m.moe.routerBias, r.boolean("router_bias"));
    set(m.moe.sharedExpertFfnHiddenSize, r.integer("shared_expert_ffn_hidden_size", 0, kMaxFfn));
    set(m.moe.sharedExpertGate, r.boolean("shared_expert_gate"));
    r.collectUnknown(warnings);
}

void readMla(JsonObjectReader& parent, ModelSpec& m, std::vector<std::string>& warnings)
{
    if (!parent.has("mla"))
        return;
    JsonObjectReader r(parent.at("mla"), parent.keyPath("mla"));
    set(m.mla.qLoraRank, r.integer("q_lora_rank", 0, kMaxHidden));
    set(m.mla.kvLoraRank, r.integer("kv_lora_rank", 1, kMaxHidden));
    set(m.mla.qkNopeHeadDim, r.integer("qk_nope_head_dim", 0, 100'000));
    set(m.mla.qkRopeHeadDim, r.integer("qk_rope_head_dim", 0, 100'000));
    set(m.mla.vHeadDim, r.integer("v_head_dim", 1, 100'000));
    r.collectUnknown(warnings);
}

ModelSpec readModel(const json& doc, std::vector<std::string>& warnings)
{
    JsonObjectReader r(doc, "model");
    ModelSpec m;
    if (auto preset = r.string("preset")) {
        const std::optional<Preset> p = findPreset(*preset);
        if (!p) {
            std::string names;
            for (const Preset& q : presets())
                names += (names.empty() ? "" : ", ") + q.key;
            throw InputError("model.preset", "expected one of " + names + ", got \"" + *preset + "\"");
        }
        m = p->model;
    }
    set(m.name, r.string("name"));
    // head_dim follows hidden / heads unless it was set apart from them (Gemma, MLA).
    const bool derivedHeadDim = m.headDim == 0 || m.headDim * m.numHeads == m.hiddenSize;
    const bool explicitHeadDim = r.has("head_dim");
    const bool explicitKv = r.has("num_kv_heads");
    set(m.vocabSize, r.integer("vocab_size", 1, kMaxVocab));
    set(m.hiddenSize, r.integer("hidden_size", 1, kMaxHidden));
    set(m.numLayers, r.integer("num_layers", 1, kMaxLayers));
    const std::optional<Count> heads = r.integer("num_heads", 1, kMaxHeads);
    set(m.numHeads, heads);
    set(m.numKvHeads, r.integer("num_kv_heads", 1, kMaxHeads));
    set(m.headDim, r.integer("head_dim", 1, 100'000));
    set(m.ffnHiddenSize, r.integer("ffn_hidden_size", 1, kMaxFfn));
    set(m.mlp, r.choice("mlp", kMlp));
    set(m.norm, r.choice("norm", kNorm));
    set(m.position, r.choice("position", kPosition));
    set(m.maxPositionEmbeddings, r.integer("max_position_embeddings", 1, kMaxTokens));
    set(m.bias, r.boolean("bias"));
    set(m.qkvBias, r.boolean("qkv_bias"));
    set(m.qkNorm, r.boolean("qk_norm"));
    set(m.postNorms, r.boolean("post_norms"));
    set(m.tiedEmbeddings, r.boolean("tied_embeddings"));
    set(m.dropout, r.number("dropout", 0.0, 1.0, true));
    set(m.slidingWindow, r.integer("sliding_window", 0, kMaxTokens));
    set(m.globalLayerInterval, r.integer("global_layer_interval", 0, kMaxLayers));
    set(m.attentionType, r.choice("attention_type", kAttnType));
    readMoe(r, m, warnings);
    readMla(r, m, warnings);
    set(m.parallelResidual, r.boolean("parallel_residual"));
    set(m.sharedAttentionNorm, r.boolean("shared_attention_norm"));
    if (m.sharedAttentionNorm && !m.parallelResidual) // lit_gpt/model.py@8641822 raises NotImplementedError
        throw InputError(
            "model.shared_attention_norm", "expected parallel_residual true (a shared norm needs a parallel block)");
    r.collectUnknown(warnings);

    for (const char* key : { "vocab_size", "hidden_size", "num_layers", "num_heads" }) {
        const bool missing = (std::string(key) == "vocab_size" && m.vocabSize == 0)
            || (std::string(key) == "hidden_size" && m.hiddenSize == 0)
            || (std::string(key) == "num_layers" && m.numLayers == 0)
            || (std::string(key) == "num_heads" && m.numHeads == 0);
        if (missing)
            throw InputError(std::string("model.") + key, "required (directly or from model.preset)");
    }
    if (m.ffnHiddenSize == 0 && !(m.moe.enabled() && m.moe.expertFfnHiddenSize > 0 && m.moe.firstDenseLayers == 0))
        throw InputError("model.ffn_hidden_size", "required (directly or from model.preset)");
    // Heads given without kv heads (or head_dim) re-derive the defaults from the new head count.
    if (heads && !explicitKv)
        m.numKvHeads = m.numHeads;
    if (m.numKvHeads == 0)
        m.numKvHeads = m.numHeads;
    if (!explicitHeadDim && derivedHeadDim) {
        if (m.hiddenSize % m.numHeads != 0)
            throw InputError("model.num_heads",
                "expected a divisor of model.hidden_size (" + std::to_string(m.hiddenSize)
                    + ") or an explicit model.head_dim, got " + std::to_string(m.numHeads));
        m.headDim = m.hiddenSize / m.numHeads;
    }
    if (m.position == PositionKind::Learned && m.maxPositionEmbeddings == 0)
        throw InputError("model.max_position_embeddings", "required with position \"learned\"");
    if (m.name.empty())
        m.name = m.preset.empty() ? "custom model" : m.preset;
    return m;
}

Checkpointing readCheckpointing(JsonObjectReader& run, std::vector<std::string>& warnings)
{
    Checkpointing c;
    if (!run.has("checkpointing"))
        return c;
    const json& v = run.at("checkpointing");
    const std::string path = run.keyPath("checkpointing");
    if (v.is_string()) {
        const std::string s = v.get<std::string>();
        if (s == "none")
            c.kind = Checkpointing::Kind::None;
        else if (s == "full")
            c.kind = Checkpointing::Kind::Full;
        else if (s == "selective")
            c.kind = Checkpointing::Kind::Selective;
        else if (s == "selective-op")
            c.kind = Checkpointing::Kind::SelectiveOp;
        else
            throw InputError(path,
                "expected \"none\", \"full\", \"selective\", \"selective-op\" or {\"every\": k}, got \"" + s + "\"");
        return c;
    }
    if (!v.is_object())
        throw InputError(path,
            "expected \"none\", \"full\", \"selective\", \"selective-op\" or {\"every\": k}, got "
                + JsonObjectReader::describe(v));
    JsonObjectReader r(v, path);
    const std::optional<Count> every = r.integer("every", 1, kMaxLayers);
    if (!every)
        throw InputError(path + ".every", "required: checkpoint segments of this many layers");
    r.collectUnknown(warnings);
    c.kind = Checkpointing::Kind::Every;
    c.every = *every;
    return c;
}

GpuSpec readGpu(JsonObjectReader& run, std::vector<std::string>& warnings)
{
    const json& v = run.at("gpu");
    const std::string path = run.keyPath("gpu");
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

RunSpec readRun(const json& doc, std::vector<std::string>& warnings)
{
    JsonObjectReader r(doc, "run");
    RunSpec run;
    set(run.mode, r.choice("mode", kMode));
    set(run.sequenceLength, r.integer("sequence_length", 1, kMaxTokens));
    set(run.microBatchSize, r.integer("micro_batch_size", 1, kMaxBatch));
    set(run.gradientAccumulationSteps, r.integer("gradient_accumulation_steps", 1, kMaxBatch));
    set(run.precision, r.choice("precision", kPrecision));
    if (auto g = r.choice("gradient_dtype", kGradDtype))
        run.gradientDtype = *g;
    if (auto mw = r.boolean("master_weights"))
        run.masterWeights = *mw;
    set(run.fp8, r.boolean("fp8"));
    set(run.optimizer, r.choice("optimizer", kOptimizer));
    run.checkpointing = readCheckpointing(r, warnings);
    set(run.attention, r.choice("attention", kAttention));
    set(run.mfu, r.number("mfu", 0.001, 1.0));
    set(run.framework, r.choice("framework", kFramework));
    if (auto l = r.choice("loss", kLoss))
        run.loss = *l;
    if (auto c = r.integer("loss_chunks", 1, kMaxTokens))
        run.lossChunks = *c;
    if (auto c = r.integer("loss_chunks_tokens", 1, kMaxTokens))
        run.lossChunkTokens = *c;
    if (auto d = r.choice("loss_dtype", kGradDtype))
        run.lossDtype = *d;
    if (auto o = r.choice("optimizer_impl", kOptimizerImpl))
        run.optimizerImpl = *o;
    set(run.optimizerInBackward, r.boolean("optimizer_in_backward"));
    refuseUnmodelled(r, "compile", false, "torch.compile fuses kernels and changes which tensors are saved");
    refuseUnmodelled(r, "activation_offloading", false, "saved tensors moved to host memory while backward waits");

    if (r.has("parallelism")) {
        JsonObjectReader p(r.at("parallelism"), "run.parallelism");
        Parallelism& par = run.parallelism;
        set(par.gpus, p.integer("gpus", 1, kMaxGpus));
        if (auto z = p.integer("zero_stage", 0, 3))
            par.zeroStage = static_cast<int>(*z);
        set(par.tensorParallel, p.integer("tensor_parallel", 1, 1024));
        set(par.pipelineParallel, p.integer("pipeline_parallel", 1, kMaxLayers));
        set(par.expertParallel, p.integer("expert_parallel", 1, 100'000));
        set(par.sequenceParallel, p.boolean("sequence_parallel"));
        set(par.offloadOptimizer, p.boolean("offload_optimizer"));
        set(par.offloadParams, p.boolean("offload_params"));
        if (auto sh = p.choice<bool>("sharding", { { "zero", false }, { "fsdp2", true } }))
            par.fsdp2 = *sh;
        if (p.has("reshard_after_forward")) {
            // torchtitan's default without pipelining: every block but the last is resharded.
            const nlohmann::json& v = p.at("reshard_after_forward");
            if (v == "all but last block")
                run.keepLastBlockGathered = true;
            else if (v != true)
                throw InputError("run.parallelism.reshard_after_forward",
                    "not modelled yet (blocks kept gathered after forward); "
                    "expected true or \"all but last block\", got "
                        + JsonObjectReader::describe(v));
        }
        refuseUnmodelled(p, "context_parallel", 1, "ring attention shards the sequence over GPUs");
        refuseUnmodelled(p, "fsdp_shard_group", nullptr, "sharding over a subgroup (HSDP)");
        refuseUnmodelled(p, "pipeline_schedule", "1F1B", "only 1F1B's micro-batches in flight are modelled");
        refuseUnmodelled(p, "async_tp", false, "asynchronous tensor parallelism's extra buffers");
        p.collectUnknown(warnings);
    }
    if (r.has("finetune")) {
        JsonObjectReader f(r.at("finetune"), "run.finetune");
        set(run.finetune.method, f.choice("method", kFinetune));
        set(run.finetune.rank, f.integer("rank", 1, 100'000));
        set(run.finetune.alpha, f.number("alpha", 0, 1e6));
        set(run.finetune.dropout, f.number("dropout", 0.0, 1.0, true));
        if (f.has("targets")) {
            const json& t = f.at("targets");
            if (!t.is_array() || t.empty())
                throw InputError("run.finetune.targets",
                    "expected a non-empty array of module names, got " + JsonObjectReader::describe(t));
            run.finetune.targets.clear();
            for (size_t i = 0; i < t.size(); ++i) {
                if (!t[i].is_string())
                    throw InputError("run.finetune.targets[" + std::to_string(i) + "]",
                        "expected a module name string, got " + JsonObjectReader::describe(t[i]));
                run.finetune.targets.push_back(t[i].get<std::string>());
            }
        }
        refuseUnmodelled(f, "quant", "bnb-nf4", "other 4-bit formats and block sizes");
        refuseUnmodelled(f, "quant_block_size", 64, "NF4 block sizes other than 64");
        set(run.finetune.doubleQuant, f.boolean("double_quant"));
        set(run.finetune.quantizeLmHead, f.boolean("quantize_lm_head"));
        f.collectUnknown(warnings);
    }
    set(run.inference.batchSize, r.integer("batch_size", 1, kMaxBatch));
    set(run.inference.contextLength, r.integer("context_length", 1, kMaxTokens));
    set(run.inference.weightDtype, r.choice("weight_dtype", kWeightDtype));
    set(run.inference.kvCacheDtype, r.choice("kv_cache_dtype", kKvDtype));
    if (r.has("overheads")) {
        JsonObjectReader o(r.at("overheads"), "run.overheads");
        Overheads& ov = run.overheads;
        set(ov.cudaContextBytes, o.integer("cuda_context_bytes", 0, Count(1) << 40));
        set(ov.workspaceBytes, o.integer("workspace_bytes", 0, Count(1) << 40));
        set(ov.allocatorRounding, o.boolean("allocator_rounding"));
        set(ov.fragmentation, o.number("fragmentation", 0.0, 1.0));
        if (auto c = o.integer("comm_buffer_bytes", 0, Count(1) << 40))
            ov.commBufferBytes = *c;
        o.collectUnknown(warnings);
    }
    if (r.has("gpu"))
        run.gpu = readGpu(r, warnings);
    readServing(r, run);
    r.collectUnknown(warnings);
    return run;
}

json gpuToJson(const GpuSpec& g)
{
    if (auto cat = findGpu(g.name); cat && cat->memoryBytes == g.memoryBytes && cat->bf16Tflops == g.bf16Tflops
        && cat->memoryBandwidthGBs == g.memoryBandwidthGBs && cat->fp32Tflops == g.fp32Tflops)
        return g.name;
    return gpuSpecJson(g);
}

} // namespace

json gpuSpecJson(const GpuSpec& g)
{
    return { { "name", g.name }, { "memory_bytes", g.memoryBytes }, { "fp32_tflops", g.fp32Tflops },
        { "tf32_tflops", g.tf32Tflops }, { "bf16_tflops", g.bf16Tflops }, { "fp16_tflops", g.fp16Tflops },
        { "fp8_tflops", g.fp8Tflops }, { "int8_tops", g.int8Tops }, { "memory_bandwidth_gbs", g.memoryBandwidthGBs },
        { "interconnect_gbs", g.interconnectGBs }, { "host_link_gbs", g.hostLinkGBs } };
}

Scenario readScenario(const json& doc)
{
    JsonObjectReader top(doc, "");
    Scenario sc;
    if (auto format = top.string("format"); format && *format != "vramlab.scenario")
        throw InputError("format", "expected \"vramlab.scenario\", got \"" + *format + "\"");
    if (auto version = top.integer("version", 0, 1'000'000); version && *version != 1)
        throw InputError(
            "version", "expected 1 (this VRAM Lab reads scenario version 1), got " + std::to_string(*version));
    sc.name = top.string("name").value_or("");
    if (!top.has("model"))
        throw InputError("model", "required: the model object");
    sc.model = readModel(doc.at("model"), sc.warnings);
    if (top.has("run"))
        sc.run = readRun(doc.at("run"), sc.warnings);
    top.collectUnknown(sc.warnings);
    if (sc.name.empty())
        sc.name = sc.model.name;
    sc.document = doc;
    return sc;
}

std::string readTextFile(const std::string& path, std::size_t maxBytes)
{
    if (path.empty())
        throw InputError("", "the file name is empty");
    // A FIFO, a device or a folder would block the reader or never end: only regular files.
    struct stat st { };
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
        throw InputError("",
            S_ISDIR(st.st_mode) ? "is a folder, not a file" : "not a regular file (a pipe, socket or device); not read",
            path);
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw InputError("", std::string("cannot open the file: ") + std::strerror(errno), path);
    std::string text;
    char buf[65536];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
        text.append(buf, static_cast<size_t>(in.gcount()));
        if (text.size() > maxBytes)
            throw InputError(
                "", "file larger than " + formatBytes(static_cast<Bytes>(maxBytes)) + "; not a scenario", path);
    }
    if (in.bad())
        throw InputError("", "cannot read the file", path);
    return text;
}

namespace {

/// A SAX pass that refuses an object with the same key twice: nlohmann would keep the last
/// one silently, so a file could say two things and mean one. (A parser callback would do
/// the same in the DOM parse, but nlohmann's callback parser is ten times slower: 5 s for a
/// 3 MB file.) Syntax errors are left to the DOM parse, which reports them with a position.
class DuplicateKeyCheck {
public:
    explicit DuplicateKeyCheck(const std::string& file)
        : m_file(file)
    {
    }

    bool null() { return value(); }
    bool boolean(bool) { return value(); }
    bool number_integer(json::number_integer_t) { return value(); }
    bool number_unsigned(json::number_unsigned_t) { return value(); }
    bool number_float(json::number_float_t, const json::string_t&) { return value(); }
    bool string(json::string_t&) { return value(); }
    bool binary(json::binary_t&) { return value(); }
    bool start_object(std::size_t) { return m_frames.push_back({ true, {}, {}, 0 }), true; }
    bool start_array(std::size_t) { return m_frames.push_back({ false, {}, {}, 0 }), true; }
    bool end_object() { return m_frames.pop_back(), value(); }
    bool end_array() { return m_frames.pop_back(), value(); }
    bool key(json::string_t& k)
    {
        Frame& f = m_frames.back();
        f.key = k;
        if (!f.keys.insert(k).second)
            throw InputError(path(), "the key appears twice in one object; keep one", m_file);
        return true;
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }

private:
    struct Frame {
        bool object = false;
        std::set<std::string> keys;
        std::string key; ///< in an object: the key being read
        std::size_t index = 0; ///< in an array: the element being read
    };
    bool value()
    {
        if (!m_frames.empty() && !m_frames.back().object)
            ++m_frames.back().index;
        return true;
    }
    std::string path() const
    {
        std::string p;
        for (const Frame& f : m_frames)
            p += f.object ? (p.empty() ? "" : ".") + f.key : "[" + std::to_string(f.index) + "]";
        return p;
    }

    const std::string& m_file;
    std::vector<Frame> m_frames;
};

} // namespace

json parseJsonText(const std::string& text, const std::string& file)
{
    // Depth limit: a scenario nests 3 levels; refuse pathological nesting before recursing.
    int depth = 0, maxDepth = 0;
    bool inString = false, escaped = false;
    for (char ch : text) {
        if (inString) {
            if (escaped)
                escaped = false;
            else if (ch == '\\')
                escaped = true;
            else if (ch == '"')
                inString = false;
            continue;
        }
        if (ch == '"')
            inString = true;
        else if (ch == '{' || ch == '[')
            maxDepth = std::max(maxDepth, ++depth);
        else if (ch == '}' || ch == ']')
            --depth;
        if (maxDepth > 64)
            throw InputError("", "JSON nested deeper than 64 levels; not a scenario", file);
    }
    try {
        DuplicateKeyCheck check(file);
        json::sax_parse(text, &check);
        return json::parse(text);
    } catch (const json::parse_error& e) {
        // nlohmann reports the byte offset; turn it into line and column for people.
        const size_t at = std::min<size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
        size_t line = 1, col = 1;
        for (size_t i = 0; i < at; ++i) {
            if (text[i] == '\n') {
                ++line;
                col = 1;
            } else {
                ++col;
            }
        }
        throw InputError(
            "", "not valid JSON at line " + std::to_string(line) + ", column " + std::to_string(col), file);
    } catch (const json::exception&) {
        // Found by fuzzing: a number beyond double's range (1e999) throws out_of_range, not parse_error.
        throw InputError("", "not valid JSON: a number beyond the range of a double (about 1.8e308)", file);
    }
}

Scenario loadScenarioFile(const std::string& path)
{
    try {
        return readScenario(parseJsonText(readTextFile(path), path));
    } catch (const InputError& e) {
        throw e.withFile(path);
    }
}

json scenarioToJson(const Scenario& sc)
{
    json doc = sc.document.is_object() ? sc.document : json::object();
    doc["format"] = "vramlab.scenario";
    doc["version"] = 1;
    doc["name"] = sc.name;

    const ModelSpec& m = sc.model;
    json& jm = doc["model"];
    if (!jm.is_object())
        jm = json::object();
    if (!m.preset.empty())
        jm["preset"] = m.preset;
    jm["name"] = m.name;
    jm["vocab_size"] = m.vocabSize;
    jm["hidden_size"] = m.hiddenSize;
    jm["num_layers"] = m.numLayers;
    jm["num_heads"] = m.numHeads;
    jm["num_kv_heads"] = m.numKvHeads;
    jm["head_dim"] = m.headDim;
    jm["ffn_hidden_size"] = m.ffnHiddenSize;
    jm["mlp"] = nameOf(kMlp, m.mlp);
    jm["norm"] = nameOf(kNorm, m.norm);
    jm["position"] = nameOf(kPosition, m.position);
    if (m.maxPositionEmbeddings > 0)
        jm["max_position_embeddings"] = m.maxPositionEmbeddings;
    jm["bias"] = m.bias;
    jm["qkv_bias"] = m.qkvBias;
    jm["qk_norm"] = m.qkNorm;
    jm["post_norms"] = m.postNorms;
    if (m.parallelResidual || m.sharedAttentionNorm) {
        jm["parallel_residual"] = m.parallelResidual;
        jm["shared_attention_norm"] = m.sharedAttentionNorm;
    }
    jm["tied_embeddings"] = m.tiedEmbeddings;
    jm["dropout"] = m.dropout;
    jm["sliding_window"] = m.slidingWindow;
    jm["global_layer_interval"] = m.globalLayerInterval;
    jm["attention_type"] = nameOf(kAttnType, m.attentionType);
    if (m.attentionType == AttentionType::Mla)
        jm["mla"] = { { "q_lora_rank", m.mla.qLoraRank }, { "kv_lora_rank", m.mla.kvLoraRank },
            { "qk_nope_head_dim", m.mla.qkNopeHeadDim }, { "qk_rope_head_dim", m.mla.qkRopeHeadDim },
            { "v_head_dim", m.mla.vHeadDim } };
    if (m.moe.enabled())
        jm["moe"] = { { "num_experts", m.moe.numExperts }, { "top_k", m.moe.topK },
            { "shared_experts", m.moe.sharedExperts }, { "expert_ffn_hidden_size", m.expertWidth() },
            { "first_dense_layers", m.moe.firstDenseLayers }, { "router_bias", m.moe.routerBias } };
    // Written only when set, so scenarios without them read and write as before.
    if (m.moe.enabled() && m.moe.sharedExperts > 0 && m.moe.sharedExpertFfnHiddenSize > 0)
        jm["moe"]["shared_expert_ffn_hidden_size"] = m.moe.sharedExpertFfnHiddenSize;
    if (m.moe.enabled() && m.moe.sharedExpertGate)
        jm["moe"]["shared_expert_gate"] = true;

    const RunSpec& r = sc.run;
    json& jr = doc["run"];
    if (!jr.is_object())
        jr = json::object();
    jr["mode"] = nameOf(kMode, r.mode);
    jr["sequence_length"] = r.sequenceLength;
    jr["micro_batch_size"] = r.microBatchSize;
    jr["gradient_accumulation_steps"] = r.gradientAccumulationSteps;
    jr["precision"] = nameOf(kPrecision, r.precision);
    if (r.gradientDtype)
        jr["gradient_dtype"] = nameOf(kGradDtype, *r.gradientDtype);
    if (r.masterWeights)
        jr["master_weights"] = *r.masterWeights;
    jr["fp8"] = r.fp8;
    jr["optimizer"] = nameOf(kOptimizer, r.optimizer);
    if (r.checkpointing.kind == Checkpointing::Kind::Every)
        jr["checkpointing"] = { { "every", r.checkpointing.every } };
    else
        jr["checkpointing"] = toString(r.checkpointing);
    jr["attention"] = nameOf(kAttention, r.attention);
    jr["mfu"] = r.mfu;
    jr["framework"] = nameOf(kFramework, r.framework);
    // Keys the framework defaults are written only when set, so the file keeps following its framework.
    auto optional = [&jr](const char* key, const auto& value, auto write) {
        if (value)
            jr[key] = write(*value);
        else
            jr.erase(key);
    };
    optional("loss", r.loss, [](LossKind l) { return nameOf(kLoss, l); });
    optional("loss_chunks", r.lossChunks, [](Count c) { return c; });
    optional("loss_chunks_tokens", r.lossChunkTokens, [](Count c) { return c; });
    optional("loss_dtype", r.lossDtype, [](DType d) { return nameOf(kGradDtype, d); });
    optional("optimizer_impl", r.optimizerImpl, [](OptimizerImpl o) { return nameOf(kOptimizerImpl, o); });
    if (r.optimizerInBackward)
        jr["optimizer_in_backward"] = true;
    else
        jr.erase("optimizer_in_backward");
    const Parallelism& p = r.parallelism;
    jr["parallelism"] = { { "gpus", p.gpus }, { "zero_stage", p.zeroStage }, { "tensor_parallel", p.tensorParallel },
        { "pipeline_parallel", p.pipelineParallel }, { "expert_parallel", p.expertParallel },
        { "sequence_parallel", p.sequenceParallel }, { "offload_optimizer", p.offloadOptimizer },
        { "offload_params", p.offloadParams } };
    if (p.fsdp2)
        jr["parallelism"]["sharding"] = "fsdp2";
    if (r.keepLastBlockGathered)
        jr["parallelism"]["reshard_after_forward"] = "all but last block";
    jr["finetune"] = { { "method", nameOf(kFinetune, r.finetune.method) }, { "rank", r.finetune.rank },
        { "alpha", r.finetune.alpha }, { "dropout", r.finetune.dropout }, { "targets", r.finetune.targets } };
    if (r.finetune.method == FinetuneMethod::Qlora) {
        jr["finetune"]["double_quant"] = r.finetune.doubleQuant;
        jr["finetune"]["quantize_lm_head"] = r.finetune.quantizeLmHead;
    }
    jr["batch_size"] = r.inference.batchSize;
    jr["context_length"] = r.inference.contextLength;
    jr["weight_dtype"] = nameOf(kWeightDtype, r.inference.weightDtype);
    jr["kv_cache_dtype"] = nameOf(kKvDtype, r.inference.kvCacheDtype);
    const Overheads& o = r.overheads;
    jr["overheads"] = { { "cuda_context_bytes", o.cudaContextBytes }, { "workspace_bytes", o.workspaceBytes },
        { "allocator_rounding", o.allocatorRounding }, { "fragmentation", o.fragmentation } };
    if (o.commBufferBytes)
        jr["overheads"]["comm_buffer_bytes"] = *o.commBufferBytes;
    if (r.gpu)
        jr["gpu"] = gpuToJson(*r.gpu);
    else
        jr.erase("gpu");
    writeServing(r, jr);
    return doc;
}

std::string scenarioFileText(const Scenario& sc)
{
    const json doc = scenarioToJson(sc);
    // Indenting a deeply nested payload multiplies its size (2 spaces a level a line):
    // a 3.3 MB file came back as 16.5 MB, past the reader's limit.
    std::string text = doc.dump(2) + "\n";
    if (text.size() <= kMaxScenarioFileBytes)
        return text;
    text = doc.dump() + "\n";
    if (text.size() > kMaxScenarioFileBytes)
        throw InputError("",
            "the scenario would be " + formatBytes(static_cast<Bytes>(text.size())) + " written, more than the "
                + formatBytes(static_cast<Bytes>(kMaxScenarioFileBytes))
                + " a scenario file may be (it could not be opened again); remove unknown keys");
    return text;
}

void saveScenarioFile(const std::string& path, const Scenario& sc)
{
    try {
        writeFileAtomically(path, scenarioFileText(sc));
    } catch (const InputError& e) {
        throw e.withFile(path);
    }
}

} // namespace vramlab
