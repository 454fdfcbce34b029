// SPDX-License-Identifier: MIT
#include "vramlab/hf_import.h"

#include "json_reader.h"
#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/hf_key_table.h"
#include "vramlab/run_adaptation.h"
#include "vramlab/scenario_io.h"
#include "vramlab/serving_io.h"

#include <algorithm>
#include <map>
#include <optional>

namespace vramlab {

using detail::JsonObjectReader;
using nlohmann::json;

namespace {

// Wide enough for any real config; the scenario reader's own limits are applied afterwards
// (validateThroughScenarioReader), so these only keep the arithmetic below finite.
constexpr Count kWide = 1'000'000'000'000LL;

/// Reads one config object and remembers which config key fed which scenario key, so a
/// limit the scenario reader enforces can be reported against the config's own key.
class ConfigReader {
public:
    ConfigReader(const json& cfg, std::string path, std::string family)
        : m_r(cfg, std::move(path))
        , m_family(std::move(family))
    {
    }
    JsonObjectReader& raw() { return m_r; }
    bool has(const std::string& key) { return m_r.has(key); }
    std::string path(const std::string& key) const { return m_r.keyPath(key); }

    Count req(const std::string& key, const std::string& scenarioKey, Count lo = 1)
    {
        if (!m_r.has(key))
            throw InputError(m_r.keyPath(key), "missing: a " + m_family + " config.json names it");
        return opt(key, scenarioKey, lo).value();
    }
    std::optional<Count> opt(const std::string& key, const std::string& scenarioKey, Count lo = 0)
    {
        const std::optional<Count> v = m_r.integer(key, lo, kWide);
        if (v && !scenarioKey.empty())
            sources[scenarioKey] = m_r.keyPath(key);
        return v;
    }
    std::optional<bool> flag(const std::string& key) { return m_r.boolean(key); }

    std::map<std::string, std::string> sources; ///< "model.hidden_size" -> "hidden_size"

private:
    JsonObjectReader m_r;
    std::string m_family;
};

bool endsWith(const std::string& s, std::string_view tail)
{
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

/// Every key of `cfg` must be modelled, provably inert, or at its neutral value; the rest are
/// named in one refusal (issue 19: refusing beats a confident wrong count).
void checkKeys(const HfFamily& family, const json& cfg, const std::string& path)
{
    std::vector<std::string> refused;
    std::string firstPath;
    for (auto it = cfg.begin(); it != cfg.end(); ++it) {
        const HfKeyRule* rule = findHfKeyRule(family, it.key());
        std::string why;
        if (!rule)
            why = it.key();
        else if (rule->use == HfKeyUse::NeutralOnly && !rule->neutral(it.value(), cfg))
            why = it.key() + " = " + it.value().dump() + " (accepted only as " + std::string(rule->neutralText) + ": "
                + std::string(rule->why) + ")";
        if (why.empty())
            continue;
        if (firstPath.empty())
            firstPath = path.empty() ? it.key() : path + "." + it.key();
        refused.push_back(why);
    }
    if (refused.empty())
        return;
    std::string list;
    for (const std::string& k : refused)
        list += (list.empty() ? "" : ", ") + k;
    throw InputError(firstPath,
        "model_type \"" + std::string(family.modelType) + "\": cannot account for " + list
            + "; refusing rather than guessing the parameters and memory (see README, Import)");
}

void checkArchitectures(const json& root, const std::string& path = {})
{
    if (!root.contains("architectures"))
        return;
    const json& a = root.at("architectures");
    const std::string key = path.empty() ? "architectures" : path + ".architectures";
    if (!a.is_array())
        throw InputError(key, "expected an array of class names, got " + JsonObjectReader::describe(a));
    for (const json& name : a) {
        const std::string s = name.is_string() ? name.get<std::string>() : name.dump();
        if (!name.is_string()
            || !(endsWith(s, "ForCausalLM") || endsWith(s, "LMHeadModel") || endsWith(s, "ForConditionalGeneration")))
            throw InputError(key,
                "expected a causal language model class (…ForCausalLM, …LMHeadModel), got " + s
                    + ": a classification or reward head has no LM head and other memory");
    }
}

/// Where a model's MoE layers fall, as model.moe.first_dense_layers and model.moe.layer_interval say it: dense[i]
/// must equal (i < leading || (i + 1) % interval != 0). Any other pattern is refused, naming `key`, since pipeline
/// stages and llama.cpp's per-layer placement would hold other layers than the estimate assumes.
void placeMoeLayers(const std::vector<bool>& dense, Count interval, const std::string& key, MoeSpec& moe)
{
    const Count layers = static_cast<Count>(dense.size());
    Count leading = 0; // one past the last layer that breaks the interval's pattern
    for (Count i = 0; i < layers; ++i)
        if (dense[static_cast<size_t>(i)] != ((i + 1) % interval != 0))
            leading = i + 1;
    for (Count i = 0; i < leading; ++i)
        if (!dense[static_cast<size_t>(i)])
            throw InputError(key,
                "MoE layers must follow a leading run of dense layers, then every " + std::to_string(interval)
                    + (interval == 1 ? "" : "th") + " layer (layer " + std::to_string(i)
                    + " has experts before dense layer " + std::to_string(leading - 1)
                    + "): VRAM Lab models that placement only");
    moe.firstDenseLayers = leading;
    moe.layerInterval = interval;
}

/// Qwen2-MoE / Qwen3-MoE: layer i is sparse when i is not in mlp_only_layers and
/// (i + 1) % decoder_sparse_step == 0 (modeling_qwen2_moe.py, Qwen2MoeDecoderLayer).
void placeQwenMoeLayers(ConfigReader& r, Count layers, MoeSpec& moe)
{
    const Count step = r.opt("decoder_sparse_step", "model.moe.layer_interval", 1).value_or(1);
    // Beyond the reader's layer limit the scenario is refused anyway (num_hidden_layers, in
    // validateThroughScenarioReader); do not allocate a flag per layer for it.
    if (layers > 100'000)
        return;
    std::vector<bool> dense(static_cast<size_t>(layers), false);
    for (Count i = 0; i < layers; ++i)
        dense[static_cast<size_t>(i)] = (i + 1) % step != 0;
    if (r.has("mlp_only_layers")) {
        const json& list = r.raw().at("mlp_only_layers");
        if (!list.is_array())
            throw InputError(r.path("mlp_only_layers"),
                "expected an array of layer indices, got " + JsonObjectReader::describe(list));
        for (const json& v : list) {
            if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() >= layers)
                throw InputError(r.path("mlp_only_layers"),
                    "expected layer indices from 0 to " + std::to_string(layers - 1) + ", got " + v.dump());
            dense[static_cast<size_t>(v.get<long long>())] = true;
        }
    }
    placeMoeLayers(dense, step, r.path(r.has("mlp_only_layers") ? "mlp_only_layers" : "decoder_sparse_step"), moe);
}

/// N when every Nth layer, and only those, is flagged (N is the first flagged layer's position + 1); 0 when none is;
/// nothing when the flags follow no such pattern.
std::optional<Count> everyNthLayer(const std::vector<bool>& flagged)
{
    Count n = 0;
    for (size_t i = 0; i < flagged.size() && n == 0; ++i)
        if (flagged[i])
            n = static_cast<Count>(i + 1);
    for (size_t i = 0; i < flagged.size(); ++i)
        if (flagged[i] != (n > 0 && static_cast<Count>(i + 1) % n == 0))
            return std::nullopt;
    return n;
}

/// layer_types as N where every Nth layer attends fully and the others slide, the only mix of
/// sliding and full layers the model spec expresses (model.global_layer_interval); any other
/// list is refused, naming the key, rather than read from its first full layer alone.
Count fullLayerInterval(ConfigReader& r, const json& cfg, Count layers)
{
    const json& lt = cfg.at("layer_types");
    const std::string where = r.path("layer_types");
    if (!lt.is_array() || lt.size() != static_cast<size_t>(layers))
        throw InputError(where,
            "expected one of \"sliding_attention\" or \"full_attention\" per layer (" + std::to_string(layers) + ")");
    std::vector<bool> full(lt.size(), false);
    bool kinds = true;
    for (size_t i = 0; i < lt.size(); ++i) {
        kinds = kinds && (lt[i] == "full_attention" || lt[i] == "sliding_attention");
        full[i] = lt[i] == "full_attention";
    }
    const std::optional<Count> interval = everyNthLayer(full);
    if (!kinds || !interval || *interval == 0)
        throw InputError(where,
            "a pattern where every Nth layer attends fully and the others slide: VRAM Lab models that pattern "
            "only (pipeline stages would hold other layers than the estimate assumes)");
    r.sources["model.global_layer_interval"] = where;
    return *interval;
}

/// gpt-oss (modeling_gpt_oss.py, configuration_gpt_oss.py), after the shared decoder keys are read.
void importGptOss(ConfigReader& r, const json& cfg, ModelSpec& m, std::vector<std::string>& warnings)
{
    // GptOssConfig defaults head_dim to 64, not hidden / heads: only a named value is read.
    if (!cfg.contains("head_dim"))
        throw InputError(r.path("head_dim"), "missing: GptOssConfig would default it to 64; name it");
    m.bias = r.flag("attention_bias").value_or(true); // q, k, v, o (GptOssConfig: attention_bias=True)
    m.attentionSinks = true;
    m.clampedSwiGlu = true;
    m.normScaleFp32 = true; // GptOssRMSNorm: (weight * x).to(dtype)
    m.moe.numExperts = r.req("num_local_experts", "model.moe.num_experts");
    m.moe.topK = r.opt("num_experts_per_tok", "model.moe.top_k", 1).value_or(4);
    m.moe.expertFfnHiddenSize = m.ffnHiddenSize;
    m.moe.routerBias = true; // GptOssTopKRouter.bias [num_experts]
    m.moe.expertBias = true; // gate_up_proj_bias [E, 2 x intermediate], down_proj_bias [E, hidden]
    // Sliding and full layers: layer_types, or GptOssConfig's default (odd layers full).
    if (cfg.contains("sliding_window") && cfg.at("sliding_window").is_null())
        throw InputError(r.path("sliding_window"), "expected the window of the sliding_attention layers, got null");
    m.slidingWindow = r.opt("sliding_window", "model.sliding_window", 1).value_or(128);
    m.globalLayerInterval = 2;
    if (r.has("layer_types"))
        m.globalLayerInterval = fullLayerInterval(r, cfg, m.numLayers);
    if (cfg.contains("quantization_config"))
        warnings.push_back("quantization_config: the checkpoint stores the experts as MXFP4 (4-bit values + an 8-bit "
                           "scale per 32 values, about 4.25 bits each); this scenario holds every weight in "
                           "run.precision, as transformers does when it dequantizes them; MXFP4-resident experts "
                           "(vLLM, transformers with the MXFP4 kernels) are not modelled");
}

/// Llama 4's language model (models/llama4/configuration_llama4.py and modeling_llama4.py, transformers 4.57.1):
/// no biases (the config forces attention_bias to False), a weight-free L2 norm on q and k, routed experts of
/// intermediate_size with one shared expert of the same width behind a bias-free router, dense layers of
/// intermediate_size_mlp; local layers attend within attention_chunk_size chunks and the NoPE layers globally.
void importLlama4Text(ConfigReader& r, const json& cfg, ModelSpec& m)
{
    const Count layers = m.numLayers;
    if (layers > 100'000) // refused by the scenario reader anyway; do not allocate a flag per layer for it
        return;
    m.ffnHiddenSize = r.req("intermediate_size_mlp", "model.ffn_hidden_size");
    const Count experts = r.opt("num_local_experts", "model.moe.num_experts", 0).value_or(16);
    if (experts > 0) {
        m.moe.numExperts = experts;
        m.moe.topK = r.opt("num_experts_per_tok", "model.moe.top_k", 1).value_or(1);
        m.moe.expertFfnHiddenSize = r.req("intermediate_size", "model.moe.expert_ffn_hidden_size");
        m.moe.sharedExperts = 1; // Llama4TextMLP(config): intermediate_size, the routed experts' width
        m.moe.everyExpertEveryToken = true;
        // moe_layers, or range(step - 1, L, step) from interleave_moe_layer_step (configuration_llama4.py).
        // A step of 0 is read only beside an explicit moe_layers (range(-1, L, 0) raises in configuration_llama4.py).
        const Count step = r.opt("interleave_moe_layer_step", "model.moe.layer_interval", 0).value_or(1);
        if (step == 0 && !r.has("moe_layers"))
            throw InputError(r.path("interleave_moe_layer_step"),
                "at least 1 without moe_layers (transformers raises for 0), got 0");
        std::vector<bool> dense(static_cast<size_t>(layers), true);
        Count interval = std::max<Count>(1, step);
        std::string key = r.path("interleave_moe_layer_step");
        if (r.has("moe_layers")) {
            key = r.path("moe_layers");
            const json& list = cfg.at("moe_layers");
            if (!list.is_array())
                throw InputError(key, "expected an array of layer indices, got " + JsonObjectReader::describe(list));
            for (const json& v : list) {
                if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() >= layers)
                    throw InputError(
                        key, "expected layer indices from 0 to " + std::to_string(layers - 1) + ", got " + v.dump());
                dense[static_cast<size_t>(v.get<long long>())] = false;
            }
            if (list.size() >= 2 && list[1].get<long long>() > list[0].get<long long>())
                interval = list[1].get<long long>() - list[0].get<long long>();
        } else {
            for (Count i = step - 1; i < layers; i += step)
                dense[static_cast<size_t>(i)] = false;
        }
        placeMoeLayers(dense, interval, key, m.moe);
        if (m.moe.firstDenseLayers >= layers)
            m.moe = MoeSpec {}; // no layer has experts: a dense model
    }
    // layer_types, else no_rope_layers (1 = RoPE and a chunked layer), else every no_rope_layer_interval-th layer
    // NoPE and global (configuration_llama4.py: the default interval 4 makes layers 3, 7, ... global).
    std::vector<bool> global(static_cast<size_t>(layers), false);
    std::string where = r.path("no_rope_layer_interval");
    if (r.has("layer_types")) {
        where = r.path("layer_types");
        const json& lt = cfg.at("layer_types");
        if (!lt.is_array() || lt.size() != static_cast<size_t>(layers))
            throw InputError(where,
                "expected one of \"chunked_attention\" or \"full_attention\" per layer (" + std::to_string(layers)
                    + ")");
        for (size_t i = 0; i < lt.size(); ++i) {
            if (lt[i] != "chunked_attention" && lt[i] != "full_attention")
                throw InputError(where, "expected \"chunked_attention\" or \"full_attention\", got " + lt[i].dump());
            global[i] = lt[i] == "full_attention";
        }
        // vLLM picks the chunked layers from no_rope_layers (llama4.py): two lists that disagree are refused.
        if (r.has("no_rope_layers") && cfg.at("no_rope_layers").is_array() && !cfg.at("no_rope_layers").empty())
            for (size_t i = 0; i < lt.size() && i < cfg.at("no_rope_layers").size(); ++i)
                if ((cfg.at("no_rope_layers")[i] == 0) != global[i])
                    throw InputError(where,
                        "the same kinds as no_rope_layers (layer " + std::to_string(i)
                            + " differs): transformers masks by layer_types while vLLM reads no_rope_layers");
    } else if (r.has("no_rope_layers") && !cfg.at("no_rope_layers").empty()) {
        where = r.path("no_rope_layers");
        const json& list = cfg.at("no_rope_layers");
        if (!list.is_array() || list.size() != static_cast<size_t>(layers))
            throw InputError(where, "expected a 0 or 1 per layer (" + std::to_string(layers) + ")");
        for (size_t i = 0; i < list.size(); ++i) {
            if (list[i] != 0 && list[i] != 1)
                throw InputError(where, "expected 0 (NoPE, global) or 1 (RoPE, chunked), got " + list[i].dump());
            global[i] = list[i] == 0;
        }
    } else {
        const Count every = r.opt("no_rope_layer_interval", "model.global_layer_interval", 1).value_or(4);
        for (Count i = 0; i < layers; ++i)
            global[static_cast<size_t>(i)] = (i + 1) % every == 0;
    }
    if (std::find(global.begin(), global.end(), false) == global.end())
        return; // every layer attends to the whole context
    const std::optional<Count> interval = everyNthLayer(global);
    if (!interval)
        throw InputError(where,
            "a pattern where every Nth layer attends globally and the others within chunks: VRAM Lab models "
            "that pattern only (pipeline stages would hold other layers than the estimate assumes)");
    // Llama4TextConfig defaults the chunk to 8192; masking_utils.py@4.57.1 raises for a chunked layer given null.
    if (cfg.contains("attention_chunk_size") && cfg.at("attention_chunk_size").is_null())
        throw InputError(r.path("attention_chunk_size"),
            "expected the chunk of the chunked_attention layers (transformers 4.57 raises for null), got null");
    m.slidingWindow = r.opt("attention_chunk_size", "model.sliding_window", 1).value_or(8192);
    m.globalLayerInterval = *interval;
    m.chunkedLocalAttention = true;
    r.sources["model.global_layer_interval"] = where;
}

/// The layer kinds of a hybrid model as one string, one character per block: M Mamba-2, * attention, - MLP.
std::string hybridPattern(ConfigReader& r, const json& cfg, const std::string& type, Count layers)
{
    if (type == "nemotron_h") {
        // configuration_nemotron_h.py: the pattern's length is the layer count (num_hidden_layers must agree).
        const std::string where = r.path("hybrid_override_pattern");
        const std::optional<std::string> p = r.raw().string("hybrid_override_pattern");
        if (!p)
            throw InputError(where, "missing: a nemotron_h config.json names each block's kind");
        if (static_cast<Count>(p->size()) != layers)
            throw InputError(where,
                "expected one character per layer (num_hidden_layers " + std::to_string(layers) + "), got "
                    + std::to_string(p->size()));
        for (const char c : *p)
            if (c != 'M' && c != '*' && c != '-')
                throw InputError(where,
                    std::string("expected M (Mamba-2), * (attention) or - (MLP) per block, got '") + c
                        + (c == 'E' ? "': MoE blocks (Nemotron 3) are not modelled yet" : "'"));
        r.sources["model.ssm.layers"] = where;
        return *p;
    }
    // granitemoehybrid: layer_types (or layers_block_type), "mamba" or "attention"; absent = every layer Mamba-2.
    const std::string key = cfg.contains("layer_types") ? "layer_types" : "layers_block_type";
    if (!cfg.contains(key) || cfg.at(key).is_null())
        return std::string(static_cast<size_t>(std::min<Count>(layers, 100'000)), 'M');
    const json& lt = cfg.at(key);
    if (!lt.is_array() || static_cast<Count>(lt.size()) != layers)
        throw InputError(r.path(key), "expected \"mamba\" or \"attention\" per layer (" + std::to_string(layers) + ")");
    std::string p;
    for (const json& t : lt) {
        if (t != "mamba" && t != "attention")
            throw InputError(r.path(key), "expected \"mamba\" or \"attention\" per layer, got " + t.dump());
        p += t == "mamba" ? 'M' : '*';
    }
    r.sources["model.ssm.layers"] = r.path(key);
    return p;
}

/// The mixer keys Granite-4.0 and Falcon-H1 share, with their configuration classes' defaults.
void readMambaKeys(ConfigReader& r, SsmSpec& s)
{
    s.groups = r.opt("mamba_n_groups", "model.ssm.groups", 1).value_or(1);
    s.stateSize = r.opt("mamba_d_state", "model.ssm.state_size", 1).value_or(256);
    s.convKernel = r.opt("mamba_d_conv", "model.ssm.conv_kernel", 2).value_or(4);
    s.convBias = r.flag("mamba_conv_bias").value_or(true);
    s.bias = r.flag("mamba_proj_bias").value_or(false);
}

/// Nemotron-H, Granite-4.0 (granitemoehybrid) and Falcon-H1: Mamba-2 mixers beside or instead of attention
/// (the tensors in parameter_tensors.cpp, ssm()); the shared keys (vocabulary, hidden, heads) are read already.
void importHybrid(
    ConfigReader& r, const json& cfg, const std::string& type, ModelSpec& m, std::vector<std::string>& warnings)
{
    SsmSpec& s = m.ssm;
    const Count h = m.hiddenSize;
    if (type == "nemotron_h") {
        const std::string pattern = hybridPattern(r, cfg, type, m.numLayers);
        const auto count = [&](char c) { return static_cast<Count>(std::count(pattern.begin(), pattern.end(), c)); };
        s.layers = count('M');
        m.attentionFreeLayers = m.numLayers - count('*');
        m.mlpFreeLayers = m.numLayers - count('-');
        // NemotronHAttention: head_dim (attention_head_dim in the Hub files; 128 for the 4B, not 3072 / 32).
        const std::string hd = cfg.contains("head_dim") ? "head_dim" : "attention_head_dim";
        m.headDim = r.opt(hd, "model.head_dim", 1).value_or(m.hiddenSize / m.numHeads);
        m.mlp = MlpKind::Gelu; // NemotronHMLP: up -> relu^2 -> down, two matrices
        m.position = PositionKind::None; // NemotronHAttention applies no rotary embedding (the Mamba-2 mixers order)
        const bool attn = r.flag("attention_bias").value_or(false), mlp = r.flag("mlp_bias").value_or(false);
        if (mlp && !attn)
            throw InputError(r.path("mlp_bias"), "true without attention_bias is not modelled");
        m.bias = attn && mlp;
        m.attentionBias = attn && !mlp;
        s.numHeads = r.req("mamba_num_heads", "model.ssm.num_heads");
        s.headDim = r.req("mamba_head_dim", "model.ssm.head_dim");
        s.groups = r.opt("n_groups", "model.ssm.groups", 1).value_or(8);
        s.stateSize = r.opt("ssm_state_size", "model.ssm.state_size", 1).value_or(128);
        s.convKernel = r.opt("conv_kernel", "model.ssm.conv_kernel", 2).value_or(4);
        s.convBias = r.flag("use_conv_bias").value_or(true);
        s.bias = r.flag("use_bias").value_or(false);
        if (const std::optional<std::string> d = r.raw().string("mamba_ssm_cache_dtype"))
            warnings.push_back("mamba_ssm_cache_dtype: \"" + *d
                + "\" is the dtype vLLM keeps the scan's state in for this model; set run.serving."
                  "mamba_ssm_cache_dtype to it");
    } else if (type == "granitemoehybrid") {
        const std::string pattern = hybridPattern(r, cfg, type, m.numLayers);
        s.layers = static_cast<Count>(std::count(pattern.begin(), pattern.end(), 'M'));
        m.attentionFreeLayers = s.layers;
        // GraniteMoeHybridAttention: head_dim = hidden / heads, k and v of kv_heads x that.
        if (h % m.numHeads != 0)
            throw InputError(
                r.path("num_attention_heads"), "expected a divisor of hidden_size (" + std::to_string(h) + ")");
        m.headDim = h / m.numHeads;
        m.bias = false;
        m.attentionBias = r.flag("attention_bias").value_or(false);
        // Every layer: shared_mlp (input_linear H -> 2 x shared, output_linear), and with experts a
        // GraniteMoeHybridMoE of num_local_experts gated experts of intermediate_size behind a bias-free router.
        const Count shared = r.opt("shared_intermediate_size", "model.ffn_hidden_size", 1).value_or(1024);
        const Count experts = r.opt("num_local_experts", "model.moe.num_experts", 0).value_or(8);
        if (experts > 0) {
            m.moe.numExperts = experts;
            m.moe.topK = r.req("num_experts_per_tok", "model.moe.top_k");
            m.moe.expertFfnHiddenSize = m.ffnHiddenSize; // intermediate_size
            m.moe.sharedExperts = 1;
            m.moe.sharedExpertFfnHiddenSize = shared;
        } else {
            m.ffnHiddenSize = shared;
        }
        // GraniteMoeHybridMambaLayer: intermediate = mamba_expand x hidden, split into mamba_n_heads heads.
        s.numHeads = r.opt("mamba_n_heads", "model.ssm.num_heads", 1).value_or(128);
        const Count expand = r.opt("mamba_expand", "", 1).value_or(2);
        if (checkedMul(expand, h) % s.numHeads != 0)
            throw InputError(r.path("mamba_n_heads"),
                "expected a divisor of mamba_expand x hidden_size (" + std::to_string(expand * h) + ")");
        s.headDim = checkedMul(expand, h) / s.numHeads;
        if (cfg.contains("mamba_d_head") && !cfg.at("mamba_d_head").is_string()) // "auto" derives it
            if (const std::optional<Count> d = r.opt("mamba_d_head", "", 1); d && *d != s.headDim)
                throw InputError(r.path("mamba_d_head"),
                    "expected mamba_expand x hidden_size / mamba_n_heads (" + std::to_string(s.headDim) + "), got "
                        + std::to_string(*d));
        readMambaKeys(r, s);
        // position_embedding_type "nope" (the Granite-4.0-H files): the attention has no rotary embedding.
        if (const std::optional<std::string> pos = r.raw().string("position_embedding_type")) {
            if (*pos != "nope" && *pos != "rope")
                throw InputError(
                    r.path("position_embedding_type"), "expected \"rope\" or \"nope\", got \"" + *pos + "\"");
            if (*pos == "nope")
                m.position = PositionKind::None;
        }
        // GraniteMoeHybridConfig(tie_word_embeddings=False); the published Granite-4.0 files all say true.
        m.tiedEmbeddings = r.flag("tie_word_embeddings").value_or(false);
    } else { // falcon_h1
        s.layers = m.numLayers;
        s.parallel = true;
        s.numHeads = r.opt("mamba_n_heads", "model.ssm.num_heads", 1).value_or(128);
        // FalconH1Config: mamba_d_ssm defaults to 1024; null means mamba_expand x hidden.
        const Count inner = cfg.contains("mamba_d_ssm") && cfg.at("mamba_d_ssm").is_null()
            ? checkedMul(r.opt("mamba_expand", "", 1).value_or(2), h)
            : r.opt("mamba_d_ssm", "", 1).value_or(1024);
        if (inner % s.numHeads != 0)
            throw InputError(r.path("mamba_n_heads"), "expected a divisor of the inner width " + std::to_string(inner));
        s.headDim = inner / s.numHeads;
        if (const std::optional<Count> d = r.opt("mamba_d_head", "", 1); d && *d != s.headDim)
            throw InputError(r.path("mamba_d_head"),
                "expected the inner width / mamba_n_heads (" + std::to_string(s.headDim) + "), got "
                    + std::to_string(*d));
        readMambaKeys(r, s);
        if (r.flag("projectors_bias").value_or(false) != s.bias)
            throw InputError(r.path("projectors_bias"),
                "equal to mamba_proj_bias: VRAM Lab has one bias flag for in_proj and out_proj");
        s.gatedNorm = r.flag("mamba_rms_norm").value_or(false);
    }
    if (s.numHeads % s.groups != 0)
        throw InputError(r.path(type == "nemotron_h" ? "n_groups" : "mamba_n_groups"),
            "expected a divisor of the Mamba-2 heads (" + std::to_string(s.numHeads) + ")");
    if (s.layers == 0) // no Mamba-2 block: a plain transformer (Granite-4.0's dense models)
        s = SsmSpec {};
}

/// The channels of each head RoPE turns: partial_rotary_factor x head_dim, the factor at the top level or (transformers
/// 5, Qwen3.5) in rope_parameters, `fallback` being the configuration class's default.
Count rotaryDimFrom(ConfigReader& r, const json& cfg, Count headDim, double fallback)
{
    std::optional<double> partial = r.raw().number("partial_rotary_factor", 0, 1);
    if (cfg.contains("rope_parameters") && cfg.at("rope_parameters").is_object()) {
        JsonObjectReader rope(cfg.at("rope_parameters"), r.path("rope_parameters"));
        if (const std::optional<double> p = rope.number("partial_rotary_factor", 0, 1)) {
            if (partial && *partial != *p)
                throw InputError(r.path("partial_rotary_factor"), "equal to rope_parameters.partial_rotary_factor");
            partial = p;
        }
    } else if (cfg.contains("rope_parameters") && !cfg.at("rope_parameters").is_null()) {
        throw InputError(r.path("rope_parameters"), "expected an object");
    }
    return static_cast<Count>(partial.value_or(fallback) * static_cast<double>(headDim));
}

/// Multimodal RoPE: rope_scaling or rope_parameters (transformers 5) names mrope_section, which makes vLLM build an
/// MRotaryEmbedding (rotary_embedding/__init__.py get_rope) with its 4x cos/sin cache (model.mrope).
bool hasMropeSection(const json& cfg)
{
    for (const char* key : { "rope_scaling", "rope_parameters" })
        if (cfg.contains(key) && cfg.at(key).is_object() && cfg.at(key).contains("mrope_section"))
            return true;
    return false;
}

/// Qwen3-Next (models/qwen3_next/modeling_qwen3_next.py, configuration_qwen3_next.py): layer_types, or every
/// full_attention_interval-th layer, is gated full attention; the others are Gated DeltaNet linear attention. Every
/// layer's MLP is the Qwen2-MoE block (read with the shared decoder keys). The decoder and MoE keys are read already.
void importGatedDeltaNet(ConfigReader& r, const json& cfg, ModelSpec& m)
{
    Count full = 0;
    if (cfg.contains("layer_types") && !cfg.at("layer_types").is_null()) {
        const json& lt = cfg.at("layer_types");
        if (!lt.is_array() || static_cast<Count>(lt.size()) != m.numLayers)
            throw InputError(r.path("layer_types"),
                "expected \"linear_attention\" or \"full_attention\" per layer (" + std::to_string(m.numLayers) + ")");
        for (const json& t : lt) {
            if (t != "linear_attention" && t != "full_attention")
                throw InputError(r.path("layer_types"),
                    "expected \"linear_attention\" or \"full_attention\" per layer, got " + t.dump());
            full += t == "full_attention" ? 1 : 0;
        }
        r.sources["model.attention_layers"] = r.path("layer_types");
    } else {
        // Qwen3NextConfig: layer i is full attention when (i + 1) % full_attention_interval == 0 (default 4).
        const Count interval = r.opt("full_attention_interval", "", 1).value_or(4);
        full = m.numLayers / interval;
        r.sources["model.attention_layers"] = r.path("full_attention_interval");
    }
    SsmSpec& s = m.ssm;
    s.kind = SsmKind::GatedDeltaNet;
    s.layers = m.numLayers - full;
    m.attentionFreeLayers = s.layers;
    // Qwen3NextGatedDeltaNet: value heads of head_v_dim hold the state and the output, key heads of head_k_dim
    // are q and k; conv1d without a bias over q, k and v; in_proj and out_proj without biases.
    s.numHeads = r.req("linear_num_value_heads", "model.ssm.num_heads");
    s.headDim = r.req("linear_value_head_dim", "model.ssm.head_dim");
    s.groups = r.req("linear_num_key_heads", "model.ssm.groups");
    s.stateSize = r.req("linear_key_head_dim", "model.ssm.state_size");
    s.convKernel = r.opt("linear_conv_kernel_dim", "model.ssm.conv_kernel", 2).value_or(4);
    s.convBias = false;
    s.bias = false;
    if (s.numHeads % s.groups != 0)
        throw InputError(r.path("linear_num_key_heads"),
            "expected a divisor of linear_num_value_heads (" + std::to_string(s.numHeads) + ")");
    // Qwen3NextAttention: q_proj Linear(hidden, heads x head_dim x 2) for the query and its output gate.
    m.attentionOutputGate = true;
    // partial_rotary_factor: 0.25 in Qwen3NextConfig and Qwen3_5TextConfig.
    m.rotaryDim = rotaryDimFrom(r, cfg, m.headDim, 0.25);
    // Qwen3.5's mamba_ssm_dtype: the recurrent state's dtype, which vLLM (PR #34489) and SGLang take on auto.
    if (const std::optional<std::string> d = r.raw().string("mamba_ssm_dtype")) {
        s.stateDtype = mambaDtypeNamed(*d);
        if (!s.stateDtype)
            throw InputError(r.path("mamba_ssm_dtype"), "expected float32, bfloat16 or float16, got \"" + *d + "\"");
    }
    if (s.layers == 0)
        s = SsmSpec {};
}

/// The scenario reader's limits and the estimator's checks, applied to the imported model so
/// import-hf never writes a scenario that estimate then rejects (issue 17). The error names
/// the config key that fed the failing scenario key.
void validateThroughScenarioReader(const HfImport& imported, const std::map<std::string, std::string>& sources)
{
    try {
        const Scenario sc = readScenario(scenarioToJson(scenarioFromHf(imported, imported.model.name)));
        validateScenario(sc);
    } catch (const InputError& e) {
        const auto it = sources.find(e.keyPath());
        const std::string key = it != sources.end() ? it->second : e.keyPath();
        throw InputError(
            key, e.expected() + (it != sources.end() ? " (VRAM Lab's limit for " + e.keyPath() + ")" : ""));
    }
}

/// A wrapper's vision_config: an object whose model_type (default `family`) is one of `accepted`, every key
/// accounted for by `family`'s rules. `tower` names it in the messages.
void checkVisionConfig(
    const json& vc, const std::string& family, const std::vector<std::string>& accepted, const std::string& tower)
{
    if (!vc.is_object())
        throw InputError("vision_config", "expected an object (" + tower + "'s config)");
    JsonObjectReader top(vc, "vision_config");
    const std::string type = top.string("model_type").value_or(family);
    if (std::find(accepted.begin(), accepted.end(), type) == accepted.end()) {
        std::string names;
        for (const std::string& a : accepted)
            names += (names.empty() ? "" : a == accepted.back() ? " or " : ", ") + ("\"" + a + "\"");
        throw InputError("vision_config.model_type", "expected " + names + " (" + tower + "), got \"" + type + "\"");
    }
    checkKeys(*findHfFamily(family), vc, "vision_config");
}

/// A tower's shape: its patches tile the image (where it has a fixed size) and its heads split its width.
void checkTowerShape(ConfigReader& r, const VisionSpec& v, const std::string& headsKey)
{
    if (v.imageSize > 0 && v.imageSize % v.patchSize != 0)
        throw InputError(
            r.path("patch_size"), "expected a divisor of image_size (" + std::to_string(v.imageSize) + ")");
    if (v.hiddenSize % v.numHeads != 0)
        throw InputError(r.path(headsKey), "expected a divisor of hidden_size (" + std::to_string(v.hiddenSize) + ")");
}

/// Gemma 3's SigLIP tower (modeling_siglip.py, vision_use_head false) from its vision_config.
VisionSpec importSiglipVision(const json& vc)
{
    checkVisionConfig(vc, "siglip_vision_model", { "siglip_vision_model" }, "Gemma 3's tower");
    ConfigReader r(vc, "vision_config", "siglip_vision_model");
    VisionSpec v;
    v.hiddenSize = r.req("hidden_size", "model.vision.hidden_size");
    v.intermediateSize = r.req("intermediate_size", "model.vision.intermediate_size");
    v.numLayers = r.req("num_hidden_layers", "model.vision.num_layers");
    v.numHeads = r.req("num_attention_heads", "model.vision.num_heads");
    v.imageSize = r.req("image_size", "model.vision.image_size");
    v.patchSize = r.req("patch_size", "model.vision.patch_size");
    v.channels = r.opt("num_channels", "model.vision.channels", 1).value_or(3);
    checkTowerShape(r, v, "num_attention_heads");
    return v;
}

/// Where Qwen's two configuration classes differ in their defaults.
struct QwenTowerDefaults {
    Count depth, hiddenSize, intermediateSize, patchSize;
};

/// The keys Qwen's two towers share (depth, widths, heads, the Conv3d's kernel, the merger), with the configuration
/// class's defaults.
VisionSpec readQwenTower(ConfigReader& r, VisionKind kind, const QwenTowerDefaults& defaults)
{
    VisionSpec v;
    v.kind = kind;
    v.numLayers = r.opt("depth", "model.vision.num_layers", 1).value_or(defaults.depth);
    v.hiddenSize = r.opt("hidden_size", "model.vision.hidden_size", 1).value_or(defaults.hiddenSize);
    v.intermediateSize
        = r.opt("intermediate_size", "model.vision.intermediate_size", 1).value_or(defaults.intermediateSize);
    v.numHeads = r.opt("num_heads", "model.vision.num_heads", 1).value_or(16);
    v.channels = r.opt("in_channels", "model.vision.channels", 1).value_or(3);
    v.patchSize = r.opt("patch_size", "model.vision.patch_size", 1).value_or(defaults.patchSize);
    v.temporalPatchSize = r.opt("temporal_patch_size", "model.vision.temporal_patch_size", 1).value_or(2);
    v.spatialMergeSize = r.opt("spatial_merge_size", "model.vision.spatial_merge_size", 1).value_or(2);
    v.outHiddenSize = r.opt("out_hidden_size", "model.vision.out_hidden_size", 1).value_or(3584);
    return v;
}

/// Qwen3.5's vision transformer (Qwen3_5VisionModel) from its vision_config, with the configuration class's
/// defaults (configuration_qwen3_5.py Qwen3_5VisionConfig).
VisionSpec importQwenVision(const json& vc)
{
    checkVisionConfig(vc, "qwen3_5_vision", { "qwen3_5", "qwen3_5_moe", "qwen3_5_vision" }, "Qwen3.5's tower");
    ConfigReader r(vc, "vision_config", "qwen3_5_vision");
    VisionSpec v = readQwenTower(
        r, VisionKind::QwenVit, { .depth = 27, .hiddenSize = 1152, .intermediateSize = 4304, .patchSize = 16 });
    v.numPositionEmbeddings
        = r.opt("num_position_embeddings", "model.vision.num_position_embeddings", 1).value_or(2304);
    checkTowerShape(r, v, "num_heads");
    return v;
}

/// Qwen2.5-VL's vision transformer from its vision_config, with Qwen2_5_VLVisionConfig's defaults
/// (configuration_qwen2_5_vl.py@4.57.1: hidden_size 3584 there, though every published tower is 1280 wide).
VisionSpec importQwen25Vision(const json& vc)
{
    checkVisionConfig(vc, "qwen2_5_vl_vision", { "qwen2_5_vl", "qwen2_5_vl_vision" }, "Qwen2.5-VL's tower");
    ConfigReader r(vc, "vision_config", "qwen2_5_vl_vision");
    const VisionSpec v = readQwenTower(
        r, VisionKind::Qwen25Vit, { .depth = 32, .hiddenSize = 3584, .intermediateSize = 3420, .patchSize = 14 });
    checkTowerShape(r, v, "num_heads");
    return v;
}

/// Llama 4's vision_config (modeling_llama4.py@4.57.1 Llama4VisionModel, Llama4VisionPixelShuffleMLP,
/// Llama4MultiModalProjector).
VisionSpec importLlama4Vision(const json& vc)
{
    checkVisionConfig(vc, "llama4_vision_model", { "llama4_vision_model" }, "Llama 4's tower");
    ConfigReader r(vc, "vision_config", "llama4_vision_model");
    VisionSpec v;
    v.kind = VisionKind::Llama4;
    // Llama4VisionConfig's defaults.
    v.hiddenSize = r.opt("hidden_size", "model.vision.hidden_size", 1).value_or(768);
    v.intermediateSize = r.opt("intermediate_size", "model.vision.intermediate_size", 1).value_or(5632);
    v.numLayers = r.opt("num_hidden_layers", "model.vision.num_layers", 1).value_or(34);
    v.numHeads = r.opt("num_attention_heads", "model.vision.num_heads", 1).value_or(16);
    v.imageSize = r.opt("image_size", "model.vision.image_size", 1).value_or(448);
    v.patchSize = r.opt("patch_size", "model.vision.patch_size", 1).value_or(14);
    v.channels = r.opt("num_channels", "model.vision.channels", 1).value_or(3);
    v.projectorInputDim = r.opt("projector_input_dim", "model.vision.projector_input_dim", 1).value_or(4096);
    const Count adapterOut = r.opt("projector_output_dim", "", 1).value_or(4096);
    v.outHiddenSize = r.opt("vision_output_dim", "model.vision.out_hidden_size", 1).value_or(7680);
    checkTowerShape(r, v, "num_attention_heads");
    // The adapter's fc1 reads the pixel-shuffled patches (hidden / ratio^2 wide) with intermediate_size inputs, and
    // the projector reads fc2's projector_output_dim with vision_output_dim inputs: the model runs only when they
    // agree, so a config where they differ describes no checkpoint.
    const double ratio = r.raw().number("pixel_shuffle_ratio", 0, 1, true).value_or(0.5);
    if (ratio <= 0 || static_cast<double>(v.hiddenSize) / (ratio * ratio) != static_cast<double>(v.intermediateSize))
        throw InputError(r.path("pixel_shuffle_ratio"),
            "expected hidden_size / pixel_shuffle_ratio^2 to equal intermediate_size ("
                + std::to_string(v.intermediateSize) + "), the width Llama4VisionMLP2's fc1 reads");
    if (adapterOut != v.projectorInputDim)
        throw InputError(r.path("projector_output_dim"),
            "expected projector_input_dim (" + std::to_string(v.projectorInputDim)
                + "), the width the adapter's fc2 reads from its fc1");
    if (adapterOut != v.outHiddenSize)
        throw InputError(r.path("projector_output_dim"),
            "expected vision_output_dim (" + std::to_string(v.outHiddenSize)
                + "), the width multi_modal_projector reads from the adapter");
    return v;
}

} // namespace

HfImport importHfConfig(const json& root)
{
    if (!root.is_object())
        throw InputError("(document)", "expected a JSON object (a Hugging Face config.json)");
    // Read through the checked reader: a wrong type is an InputError, not nlohmann's type_error
    // (the fuzzer found `"_name_or_path": [...]` crashing json::value()).
    JsonObjectReader top(root, "");
    const std::string topType = top.string("model_type").value_or("");
    const json* cfgp = &root;
    std::string path;
    std::string type = topType;
    // Qwen2.5-VL's flat layout (the Hub's original files) keeps the language model's keys at the top level
    // (Qwen2_5_VLConfig builds its text_config from them); the nested one is read like the other wrappers.
    const bool qwen25Flat = topType == "qwen2_5_vl" && !root.contains("text_config");
    const bool wrapper = topType == "gemma3" || topType == "qwen3_5" || topType == "qwen3_5_moe" || topType == "llama4"
        || (topType == "qwen2_5_vl" && !qwen25Flat);
    if (qwen25Flat)
        type = "qwen2_5_vl_text";
    // Without a vision_config the configuration class builds its default tower (Qwen2_5_VLConfig,
    // Gemma3Config, ...: vision_config=None means the defaults), which no published checkpoint has.
    if ((wrapper || qwen25Flat) && !root.contains("vision_config"))
        throw InputError("vision_config",
            "missing: " + topType
                + "'s configuration class then builds its default vision tower, which no published checkpoint has; "
                  "name the tower (or import the language model's text_config alone where transformers has it)");
    if (wrapper) {
        // Multimodal Gemma 3, Qwen3.5 / Qwen3.6: the language model is text_config (model_type <wrapper>_text),
        // beside vision_config's tower; the wrapper's keys are checked too.
        if (!root.contains("text_config") || !root.at("text_config").is_object())
            throw InputError("text_config", "missing: a " + topType + " config.json holds the language model there");
        checkKeys(*findHfFamily(topType), root, "");
        cfgp = &root.at("text_config");
        path = "text_config";
        JsonObjectReader text(*cfgp, path);
        const std::string want = topType + "_text";
        type = text.string("model_type").value_or(want);
        if (type != want)
            throw InputError("text_config.model_type",
                "expected \"" + want + "\" in a " + topType + " config, got \"" + type + "\"");
    }
    if (type.empty())
        throw InputError("model_type", "missing: expected one of " + supportedHfModelTypes());
    const HfFamily* family = findHfFamily(type);
    // The wrappers and their towers' configs are read only inside a wrapper, never as a model of their own.
    if (!family || type == "gemma3" || type == "qwen3_5" || type == "qwen3_5_moe" || type == "siglip_vision_model"
        || type == "qwen3_5_vision" || type == "llama4" || type == "llama4_vision_model" || type == "qwen2_5_vl"
        || type == "qwen2_5_vl_vision" || (type == "qwen2_5_vl_text" && topType == type)) {
        std::string keys;
        for (auto it = cfgp->begin(); it != cfgp->end(); ++it)
            keys += (keys.empty() ? "" : ", ") + it.key();
        throw InputError(path.empty() ? "model_type" : path + ".model_type",
            "model_type \"" + type + "\" is not a family VRAM Lab models, so none of its keys can be accounted for ("
                + keys + "); refusing rather than guessing. Families modelled: " + supportedHfModelTypes());
    }
    const json& cfg = *cfgp;
    checkKeys(*family, cfg, path);
    checkArchitectures(root);
    // A text_config that names a class of its own (Qwen2.5-VL's re-saved files copy the wrapper's) must name one
    // with an LM head too: one that does not contradicts the file.
    if (!path.empty())
        checkArchitectures(cfg, path);

    ConfigReader r(cfg, path, type);
    HfImport out;
    // transformers' Auto classes load their own class for a model_type they know unless trust_remote_code=True
    // (models/auto/auto_factory.py, dynamic_module_utils.resolve_trust_remote_code); vLLM and SGLang run their
    // own implementation of it. Both load the same checkpoint tensors, so the count holds either way.
    for (const json* c : { &root, &cfg })
        if (c->contains("auto_map") && c->at("auto_map").is_object() && !c->at("auto_map").empty()) {
            out.warnings.push_back("auto_map: the repository ships its own Python classes (trust_remote_code); "
                                   "VRAM Lab models transformers' built-in "
                + type
                + " class, which loads the same checkpoint tensors (the parameter count holds); remote code run "
                  "with trust_remote_code=True may keep other activations");
            break;
        }
    out.modelType = type;
    ModelSpec& m = out.model;
    // Named after the checkpoint, or its top-level model_type (a wrapper's, not its text_config's).
    m.name = top.string("_name_or_path").value_or(topType.empty() ? type : topType);
    if (topType == "gemma3" && root.contains("vision_config"))
        m.vision = importSiglipVision(root.at("vision_config"));
    if ((topType == "qwen3_5" || topType == "qwen3_5_moe") && root.contains("vision_config"))
        m.vision = importQwenVision(root.at("vision_config"));
    if (topType == "llama4" && root.contains("vision_config"))
        m.vision = importLlama4Vision(root.at("vision_config"));
    if (topType == "qwen2_5_vl" && root.contains("vision_config"))
        m.vision = importQwen25Vision(root.at("vision_config"));

    if (type == "starcoder2") {
        // modeling_starcoder2.py: LayerNorm (weight and bias) before attention and MLP; q, k, v,
        // o, c_fc and c_proj all carry bias=use_bias; the MLP is c_fc -> GELU -> c_proj (no
        // gate); every layer attends within sliding_window; embedding, attention and residual
        // dropout at the places GPT-2 has them.
        m.vocabSize = r.req("vocab_size", "model.vocab_size");
        m.hiddenSize = r.req("hidden_size", "model.hidden_size");
        m.numLayers = r.req("num_hidden_layers", "model.num_layers");
        m.numHeads = r.req("num_attention_heads", "model.num_heads");
        m.numKvHeads = r.opt("num_key_value_heads", "model.num_kv_heads", 1).value_or(m.numHeads);
        if (m.hiddenSize % m.numHeads != 0)
            throw InputError(r.path("num_attention_heads"),
                "expected a divisor of hidden_size (" + std::to_string(m.hiddenSize) + ")");
        m.headDim = m.hiddenSize / m.numHeads;
        m.ffnHiddenSize = r.req("intermediate_size", "model.ffn_hidden_size");
        m.maxPositionEmbeddings = r.opt("max_position_embeddings", "model.max_position_embeddings", 1).value_or(0);
        m.mlp = MlpKind::Gelu;
        m.norm = NormKind::LayerNorm;
        m.bias = r.flag("use_bias").value_or(true);
        if (!m.bias)
            throw InputError(r.path("use_bias"),
                "false is not modelled here: it drops the biases but keeps LayerNorm's, which VRAM Lab cannot express");
        // Starcoder2Config(tie_word_embeddings=True): the published 3B/7B/15B counts are tied.
        m.tiedEmbeddings = r.flag("tie_word_embeddings").value_or(true);
        if (r.has("sliding_window"))
            m.slidingWindow = r.opt("sliding_window", "model.sliding_window", 1).value_or(0);
        m.dropout = r.raw().number("residual_dropout", 0, 1, true).value_or(0.0);
    } else if (type == "gpt2") {
        m.vocabSize = r.req("vocab_size", "model.vocab_size");
        m.hiddenSize = r.req("n_embd", "model.hidden_size");
        m.numLayers = r.req("n_layer", "model.num_layers");
        m.numHeads = m.numKvHeads = r.req("n_head", "model.num_heads");
        if (m.hiddenSize % m.numHeads != 0)
            throw InputError(r.path("n_head"), "expected a divisor of n_embd (" + std::to_string(m.hiddenSize) + ")");
        m.headDim = m.hiddenSize / m.numHeads;
        m.ffnHiddenSize = r.opt("n_inner", "model.ffn_hidden_size", 1).value_or(4 * m.hiddenSize);
        m.maxPositionEmbeddings = r.req("n_positions", "model.max_position_embeddings");
        m.mlp = MlpKind::Gelu;
        m.norm = NormKind::LayerNorm;
        m.position = PositionKind::Learned;
        m.bias = true;
        m.tiedEmbeddings = r.flag("tie_word_embeddings").value_or(true);
        m.dropout = r.raw().number("resid_pdrop", 0, 1, true).value_or(0.1);
    } else {
        m.vocabSize = r.req("vocab_size", "model.vocab_size");
        m.hiddenSize = r.req("hidden_size", "model.hidden_size");
        m.numLayers = r.req("num_hidden_layers", "model.num_layers");
        m.numHeads = r.req("num_attention_heads", "model.num_heads");
        // DeepSeek-V2/V3's MLA never reads num_key_value_heads (modeling_deepseek_v3.py).
        const bool deepseek = type == "deepseek_v2" || type == "deepseek_v3";
        // Llama4TextConfig defaults num_key_value_heads to 8 and head_dim to 128 (configuration_llama4.py@4.57.1).
        const bool llama4 = type == "llama4_text";
        m.numKvHeads = deepseek
            ? m.numHeads
            : r.opt("num_key_value_heads", "model.num_kv_heads", 1).value_or(llama4 ? 8 : m.numHeads);
        // Glm4Config defines head_dim (default 128); the others fall back to hidden / heads.
        const bool glm4 = type == "glm4";
        if (!r.has("head_dim") && !glm4 && !llama4 && m.hiddenSize % m.numHeads != 0)
            throw InputError(r.path("num_attention_heads"),
                "expected a divisor of hidden_size (" + std::to_string(m.hiddenSize) + ") without head_dim");
        m.headDim = r.opt("head_dim", "model.head_dim", 1).value_or(glm4 || llama4 ? 128 : m.hiddenSize / m.numHeads);
        // Qwen3.5-MoE configs carry no intermediate_size: every layer is a MoE block.
        m.ffnHiddenSize = type == "qwen3_5_moe_text"
            ? r.req("moe_intermediate_size", "model.moe.expert_ffn_hidden_size")
            : r.req("intermediate_size", "model.ffn_hidden_size");
        m.maxPositionEmbeddings = r.opt("max_position_embeddings", "model.max_position_embeddings", 1).value_or(0);
        const bool gemma = type.starts_with("gemma");
        const bool cohere = type == "cohere";
        // CohereConfig(tie_word_embeddings=True): Command-R and Aya checkpoints store no lm_head.
        m.tiedEmbeddings = r.flag("tie_word_embeddings").value_or(gemma || cohere);
        if (cohere) {
            // modeling_cohere.py@015bfeb8 CohereDecoderLayer: h = input_layernorm(x); x + attn(h) + mlp(h), with
            // CohereLayerNorm(hidden, bias=False): a weight and no bias, computed in fp32.
            m.norm = NormKind::LayerNorm;
            m.normBias = false;
            m.parallelResidual = true;
            m.sharedAttentionNorm = true;
        }
        if (gemma)
            m.mlp = MlpKind::GeGlu;
        if (type == "gemma2" || type == "gemma3_text")
            m.postNorms = true;
        const bool qwenHybrid = type == "qwen3_next" || type == "qwen3_5_text" || type == "qwen3_5_moe_text";
        if (type == "gemma3_text" || type == "qwen3" || type == "qwen3_moe" || qwenHybrid)
            m.qkNorm = true; // q_norm / k_norm over head_dim (modeling_qwen3.py, modeling_gemma3.py)
        if (type == "olmo2") {
            // modeling_olmo2.py: q_norm = Olmo2RMSNorm(heads x head_dim), k_norm over kv_heads x head_dim,
            // post_attention_layernorm and post_feedforward_layernorm on the sublayer outputs, no input
            // norm, and Olmo2RMSNorm scales in fp32 before casting back.
            m.qkNorm = m.qkNormFullWidth = true;
            m.normAfterSublayers = true;
            m.normScaleFp32 = true;
        }
        // Qwen2 and Qwen2-MoE: q, k, v bias=True, o bias=False, hard-coded (modeling_qwen2.py).
        m.qkvBias = type == "qwen2" || type == "qwen2_moe" || type == "qwen2_5_vl_text";
        if (glm4) {
            // models/glm4/modeling_glm4.py (modular_glm4.py: GlmAttention, Phi3MLP): q, k, v with
            // bias=attention_bias (Glm4Config default true), o_proj never; one fused gate_up_proj (the
            // shapes of gate and up, its output chunked in two views); four RMSNorms per layer, the
            // sublayer outputs normalized before the residual add (post_self_attn_layernorm,
            // post_mlp_layernorm) as Gemma 2 does; RoPE on partial_rotary_factor of each head (0.5).
            m.qkvBias = r.flag("attention_bias").value_or(true);
            m.postNorms = true;
            m.rotaryDim = rotaryDimFrom(r, cfg, m.headDim, 0.5);
        }

        if (type == "llama" || type == "granite" || type == "olmo2" || type == "olmoe" || type == "qwen3"
            || type == "qwen3_moe" || qwenHybrid || cohere) {
            // attention_bias adds a bias to q, k, v AND o (modeling_llama.py, modeling_qwen3.py);
            // mlp_bias to gate, up, down. The model spec has "every linear" or "q, k, v only".
            const bool attn = r.flag("attention_bias").value_or(false);
            const bool mlp = r.flag("mlp_bias").value_or(false);
            if (attn && mlp && (type == "llama" || type == "granite"))
                m.bias = true;
            else if (attn)
                m.attentionBias = true; // q, k, v and o only
            else if (mlp)
                throw InputError(r.path("mlp_bias"),
                    "true without attention_bias is not modelled: VRAM Lab cannot express MLP-only biases");
        }

        // Sliding windows, as each family's modeling file applies them.
        if (type == "mistral" || type == "mixtral" || type == "phi3" || type == "phimoe" || type == "gemma2"
            || type == "gemma3_text") {
            if (r.has("sliding_window"))
                m.slidingWindow = r.opt("sliding_window", "model.sliding_window", 1).value_or(0);
            // A window as long as the model's whole context masks nothing (Phi-3.5-MoE: 131,072 of 131,072).
            if (m.slidingWindow > 0 && m.maxPositionEmbeddings > 0 && m.slidingWindow >= m.maxPositionEmbeddings)
                m.slidingWindow = 0;
            if (m.slidingWindow > 0 && type == "gemma2")
                m.globalLayerInterval = 2; // is_sliding = not layer_idx % 2 (modeling_gemma2.py)
            if (m.slidingWindow > 0 && type == "gemma3_text")
                m.globalLayerInterval = r.opt("sliding_window_pattern", "model.global_layer_interval", 1).value_or(6);
            if (m.slidingWindow > 0 && r.has("layer_types")) // explicit per-layer kinds
                m.globalLayerInterval = fullLayerInterval(r, cfg, m.numLayers);
        }

        if (type == "mixtral" || type == "phimoe") {
            m.moe.numExperts = r.req("num_local_experts", "model.moe.num_experts");
            m.moe.topK = r.req("num_experts_per_tok", "model.moe.top_k");
            m.moe.expertFfnHiddenSize = m.ffnHiddenSize;
        }
        if (type == "phimoe") {
            // modeling_phimoe.py (modular_phimoe.py): LlamaAttention's q, k, v, o with bias=attention_bias;
            // nn.LayerNorm (weight and bias) before attention, before the MoE block and at the end;
            // MixtralExperts (w1, w3, w2 without bias) behind a Linear(hidden, num_local_experts, bias=False)
            // router; lm_head = Linear(hidden, vocab, bias=lm_head_bias). Training routes by SparseMixer.
            m.norm = NormKind::LayerNorm;
            m.attentionBias = r.flag("attention_bias").value_or(false);
            m.lmHeadBias = r.flag("lm_head_bias").value_or(false);
            m.moe.sparseMixer = true;
        }
        if (type == "qwen2_moe" || type == "qwen3_moe" || type == "qwen3_next" || type == "qwen3_5_moe_text") {
            // Router Linear(hidden, num_experts, bias=False); experts Qwen2MoeMLP(moe_intermediate_size);
            // Qwen2-MoE adds one shared expert of shared_expert_intermediate_size and its gate.
            m.moe.numExperts = r.req("num_experts", "model.moe.num_experts", 0);
            m.moe.topK = r.req("num_experts_per_tok", "model.moe.top_k", 0);
            m.moe.expertFfnHiddenSize = r.req("moe_intermediate_size", "model.moe.expert_ffn_hidden_size");
            if (m.moe.numExperts > 0 && type != "qwen3_5_moe_text") // Qwen3.5-MoE: every layer is MoE
                placeQwenMoeLayers(r, m.numLayers, m.moe);
            if (type == "qwen2_moe" || type == "qwen3_next" || type == "qwen3_5_moe_text") {
                const Count shared
                    = r.opt("shared_expert_intermediate_size", "model.moe.shared_expert_ffn_hidden_size", 0)
                          .value_or(0);
                if (shared > 0) {
                    m.moe.sharedExperts = 1;
                    m.moe.sharedExpertFfnHiddenSize = shared;
                    m.moe.sharedExpertGate = true;
                }
            }
        }
        if (deepseek) {
            m.attentionType = AttentionType::Mla;
            // DeepseekV2Config and DeepseekV3Config default q_lora_rank to 1536 when the key is
            // absent, while V2-Lite ships null (a plain q projection): only a named value is read.
            if (!cfg.contains("q_lora_rank"))
                throw InputError(r.path("q_lora_rank"),
                    "missing: transformers would default it to 1536 (a low-rank query) while the checkpoints that "
                    "omit it use a plain q projection; name it (null for none)");
            m.mla.qLoraRank = r.opt("q_lora_rank", "model.mla.q_lora_rank", 0).value_or(0);
            m.mla.kvLoraRank = r.req("kv_lora_rank", "model.mla.kv_lora_rank");
            m.mla.qkNopeHeadDim = r.req("qk_nope_head_dim", "model.mla.qk_nope_head_dim", 0);
            m.mla.qkRopeHeadDim = r.req("qk_rope_head_dim", "model.mla.qk_rope_head_dim", 0);
            m.mla.vHeadDim = r.req("v_head_dim", "model.mla.v_head_dim");
            m.headDim = m.mla.qkNopeHeadDim + m.mla.qkRopeHeadDim;
            m.moe.numExperts = r.req("n_routed_experts", "model.moe.num_experts");
            m.moe.topK = r.req("num_experts_per_tok", "model.moe.top_k");
            m.moe.sharedExperts = r.opt("n_shared_experts", "model.moe.shared_experts", 0).value_or(0);
            m.moe.expertFfnHiddenSize = r.req("moe_intermediate_size", "model.moe.expert_ffn_hidden_size");
            m.moe.firstDenseLayers = r.opt("first_k_dense_replace", "model.moe.first_dense_layers", 0).value_or(0);
            // noaux_tc keeps a per-expert e_score_correction_bias; greedy and group_limited_greedy
            // (DeepSeek-V2) route on the logits alone. Another method may keep other tensors.
            const std::string method = r.raw().string("topk_method").value_or("greedy");
            if (method != "noaux_tc" && method != "greedy" && method != "group_limited_greedy")
                throw InputError(
                    r.path("topk_method"), "expected noaux_tc, greedy or group_limited_greedy, got \"" + method + "\"");
            m.moe.routerBias = method == "noaux_tc";
        }
    }
    if (type == "olmoe") {
        // modeling_olmoe.py: q_norm = OlmoeRMSNorm(hidden_size), k_norm over kv_heads x head_dim (whole
        // projections, before the split into heads); OlmoeRMSNorm casts before the weight (no fp32 scale).
        // Every layer is a OlmoeSparseMoeBlock: Linear(hidden, num_experts, bias=False) and num_experts
        // OlmoeMLP(intermediate_size); no shared expert.
        m.qkNorm = m.qkNormFullWidth = true;
        m.moe.numExperts = r.req("num_experts", "model.moe.num_experts");
        m.moe.topK = r.req("num_experts_per_tok", "model.moe.top_k");
        m.moe.expertFfnHiddenSize = m.ffnHiddenSize;
    }
    if (type == "granitemoe") {
        // modeling_granitemoe.py: q, k, v, o with bias=attention_bias (every layer is MoE, so m.bias adds no
        // MLP bias); experts input_linear [E, 2 x intermediate, hidden] = gate + up, output_linear [E, hidden,
        // intermediate], no expert bias; router Linear(hidden, E, bias=False).
        m.bias = r.flag("attention_bias").value_or(false);
        m.moe.numExperts = r.req("num_local_experts", "model.moe.num_experts");
        m.moe.topK = r.req("num_experts_per_tok", "model.moe.top_k");
        m.moe.expertFfnHiddenSize = m.ffnHiddenSize;
    }
    if (type == "gpt_oss")
        importGptOss(r, cfg, m, out.warnings);
    if (type == "llama4_text")
        importLlama4Text(r, cfg, m);
    if (type == "nemotron_h" || type == "granitemoehybrid" || type == "falcon_h1")
        importHybrid(r, cfg, type, m, out.warnings);
    if (type == "qwen3_next" || type == "qwen3_5_text" || type == "qwen3_5_moe_text")
        importGatedDeltaNet(r, cfg, m);
    if (topType == "qwen3_5" || topType == "qwen3_5_moe") {
        // Qwen3_5ForConditionalGeneration ties by the wrapper's tie_word_embeddings (false unless the file says).
        m.tiedEmbeddings = top.boolean("tie_word_embeddings").value_or(false);
        if (cfg.contains("tie_word_embeddings") && r.flag("tie_word_embeddings") != m.tiedEmbeddings)
            throw InputError(r.path("tie_word_embeddings"), "equal to the wrapper's tie_word_embeddings");
        if (m.vision.enabled() && m.vision.outHiddenSize != m.hiddenSize)
            throw InputError("vision_config.out_hidden_size",
                "equal to text_config.hidden_size (" + std::to_string(m.hiddenSize)
                    + "): the merger feeds the "
                      "language model");
        if (m.vision.enabled())
            out.warnings.push_back("vision_config: the vision transformer's "
                + std::to_string(countParameters(m).vision)
                + " parameters are counted; its activations are not modelled, so the scenario serves the language "
                  "model with vLLM's --language-model-only (run.serving.language_model_only), which leaves the "
                  "tower out");
    }
    if (type == "qwen2_5_vl_text" || type == "qwen3_5_text" || type == "qwen3_5_moe_text")
        m.mrope = hasMropeSection(cfg);
    if (topType == "qwen2_5_vl") {
        if (m.vision.enabled() && m.vision.outHiddenSize != m.hiddenSize)
            throw InputError("vision_config.out_hidden_size",
                "equal to the language model's hidden_size (" + std::to_string(m.hiddenSize)
                    + "): the merger's output replaces image tokens' embeddings");
        // transformers 4 ties by text_config's (get_text_config; Qwen2_5_VLTextConfig's default false), transformers
        // 5 and vLLM on it by the top level's (PR #44976): a nested file whose two disagree describes two models.
        const std::optional<bool> topTie = top.boolean("tie_word_embeddings");
        if (!qwen25Flat && topTie && *topTie != m.tiedEmbeddings)
            throw InputError("text_config.tie_word_embeddings",
                std::string("equal to the top-level tie_word_embeddings (") + (*topTie ? "true" : "false")
                    + "): transformers 4 ties by text_config's (false where absent), transformers 5 by the top "
                      "level's");
    }
    if (m.numHeads > 0 && m.numKvHeads > 0 && m.numHeads % m.numKvHeads != 0)
        throw InputError(r.path("num_key_value_heads"),
            "expected a divisor of num_attention_heads (" + std::to_string(m.numHeads) + ")");
    validateThroughScenarioReader(out, r.sources);
    return out;
}

Scenario scenarioFromHf(const HfImport& imported, const std::string& name)
{
    Scenario sc;
    sc.model = imported.model;
    sc.name = name;
    const Count maxPos = imported.model.maxPositionEmbeddings;
    sc.run.sequenceLength = maxPos > 0 ? std::min<Count>(4096, maxPos) : 4096;
    sc.run.inference.contextLength = sc.run.sequenceLength;
    sc.warnings = imported.warnings;
    // gpt-oss and Phi-3.5-MoE: their training activations are not modelled (validateRun refuses them),
    // their inference is.
    if (imported.model.clampedSwiGlu || imported.model.moe.sparseMixer)
        sc.run.mode = Mode::Inference;
    // Hybrid state-space models, gated attention and Llama 4: only the serving engines' budgets are modelled
    // (validateRun), vLLM by default.
    const ModelSpec& m = imported.model;
    if (m.hybrid() || m.attentionOutputGate || m.chunkedLocalAttention
        || (m.moe.enabled() && m.moe.everyExpertEveryToken)) {
        sc.run.mode = Mode::Inference;
        sc.run.serving = vllmServingFor(imported.model);
    }
    return sc;
}

} // namespace vramlab
