// SPDX-License-Identifier: MIT
#include "vramlab/presets.h"

namespace vramlab {

namespace {

ModelSpec gpt2Style(const char* name, Count hidden, Count layers, Count heads, Count ffn, Count ctx)
{
    ModelSpec m;
    m.name = name;
    m.vocabSize = 50257;
    m.hiddenSize = hidden;
    m.numLayers = layers;
    m.numHeads = m.numKvHeads = heads;
    m.headDim = hidden / heads;
    m.ffnHiddenSize = ffn;
    m.mlp = MlpKind::Gelu;
    m.norm = NormKind::LayerNorm;
    m.position = PositionKind::Learned;
    m.maxPositionEmbeddings = ctx;
    m.bias = true;
    m.tiedEmbeddings = true;
    m.dropout = 0.1;
    return m;
}

/// Qwen2-MoE's block as Qwen3-Next and Qwen3.5 use it: routed experts and one shared expert of the same width,
/// behind its sigmoid gate.
MoeSpec qwenSharedExpertMoe(Count experts, Count topK, Count width)
{
    MoeSpec moe;
    moe.numExperts = experts;
    moe.topK = topK;
    moe.expertFfnHiddenSize = width;
    moe.sharedExperts = 1;
    moe.sharedExpertFfnHiddenSize = width;
    moe.sharedExpertGate = true;
    return moe;
}

ModelSpec llamaStyle(
    const char* name, Count vocab, Count hidden, Count layers, Count heads, Count kvHeads, Count ffn, Count ctx)
{
    ModelSpec m;
    m.name = name;
    m.vocabSize = vocab;
    m.hiddenSize = hidden;
    m.numLayers = layers;
    m.numHeads = heads;
    m.numKvHeads = kvHeads;
    m.headDim = hidden / heads;
    m.ffnHiddenSize = ffn;
    m.maxPositionEmbeddings = ctx;
    return m;
}

std::vector<Preset> build()
{
    std::vector<Preset> p;
    std::string family; // the group of the presets added next
    auto add = [&](const char* key, ModelSpec m, Count published, bool exact, const char* source) {
        m.preset = key;
        p.push_back({ key, family, std::move(m), published, exact, source });
    };

    family = "GPT";
    add("gpt2", gpt2Style("GPT-2 small (124M)", 768, 12, 12, 3072, 1024), 124439808, true,
        "openai-community/gpt2 config.json; 124,439,808 parameters (HF num_parameters)");
    add("gpt2-xl", gpt2Style("GPT-2 XL (1.5B)", 1600, 48, 25, 6400, 1024), 1557611200, true,
        "openai-community/gpt2-xl config.json; 1,557,611,200 parameters (HF num_parameters)");
    add("gpt3-175b", gpt2Style("GPT-3 175B", 12288, 96, 96, 49152, 2048), 175000000000, false,
        "Brown et al. 2020, Table 2.1: n_layers 96, d_model 12288, n_heads 96, context 2048; \"175.0B\"");

    family = "Llama";
    add("llama-2-7b", llamaStyle("Llama 2 7B", 32000, 4096, 32, 32, 32, 11008, 4096), 6738415616, true,
        "meta-llama/Llama-2-7b-hf config.json; 6,738,415,616 parameters");
    add("llama-2-13b", llamaStyle("Llama 2 13B", 32000, 5120, 40, 40, 40, 13824, 4096), 13015864320, true,
        "meta-llama/Llama-2-13b-hf config.json; 13,015,864,320 parameters");
    add("llama-2-70b", llamaStyle("Llama 2 70B", 32000, 8192, 80, 64, 8, 28672, 4096), 68976648192, true,
        "meta-llama/Llama-2-70b-hf config.json; 68,976,648,192 parameters");
    add("llama-3-8b", llamaStyle("Llama 3 8B", 128256, 4096, 32, 32, 8, 14336, 8192), 8030261248, true,
        "meta-llama/Meta-Llama-3-8B config.json; 8,030,261,248 parameters");
    add("llama-3-70b", llamaStyle("Llama 3 70B", 128256, 8192, 80, 64, 8, 28672, 8192), 70553706496, true,
        "meta-llama/Meta-Llama-3-70B config.json; 70,553,706,496 parameters");
    add("llama-3.1-405b", llamaStyle("Llama 3.1 405B", 128256, 16384, 126, 128, 8, 53248, 131072), 405853388800, true,
        "meta-llama/Llama-3.1-405B config.json; 405,853,388,800 parameters");

    ModelSpec llama32 = llamaStyle("Llama 3.2 1B", 128256, 2048, 16, 32, 8, 8192, 131072);
    llama32.tiedEmbeddings = true;
    add("llama-3.2-1b", llama32, 1235814400, true,
        "meta-llama/Llama-3.2-1B config.json (tests/data/hf/llama-3.2-1b.json); 1,235,814,400 parameters (Hub "
        "safetensors total of Llama-3.2-1B-Instruct)");

    // Llama 4 (modeling_llama4.py): a shared expert beside top-1 routed experts of 8192, every 4th layer global and
    // the others in 8192-token chunks, the vision tower; served as vLLM's --language-model-only builds it (choosing
    // one adapts the run: transformers' training runs every expert on every token, which is not modelled).
    auto llama4 = [&](const char* name, Count experts, Count interval, Count ctx) {
        ModelSpec m = llamaStyle(name, 202048, 5120, 48, 40, 8, 16384, ctx);
        m.headDim = 128;
        m.slidingWindow = 8192;
        m.globalLayerInterval = 4;
        m.chunkedLocalAttention = true;
        m.moe.numExperts = experts;
        m.moe.topK = 1;
        m.moe.sharedExperts = 1;
        m.moe.expertFfnHiddenSize = 8192;
        m.moe.layerInterval = interval;
        m.moe.everyExpertEveryToken = true;
        m.vision = { 1408, 5632, 34, 16, 336, 14, 3, VisionKind::Llama4, 0, 0, 4096, 0, 4096 };
        return m;
    };
    add("llama-4-scout", llama4("Llama 4 Scout 17B-16E (VL)", 16, 1, 10485760), 108641793536, true,
        "meta-llama/Llama-4-Scout-17B-16E-Instruct: the shapes of tests/data/hf/llama-4-scout-17b-16e.json (the base "
        "model's config, max_position_embeddings 262,144; the Instruct one's is 10,485,760); 108,641,793,536 "
        "parameters, the Hub's safetensors total (the language model 107,769,861,120, the tower 871,932,416)");
    add("llama-4-maverick", llama4("Llama 4 Maverick 17B-128E (VL)", 128, 2, 1048576), 401583781376, true,
        "meta-llama/Llama-4-Maverick-17B-128E-Instruct (tests/data/hf/llama-4-maverick-17b-128e-instruct.json); "
        "401,583,781,376 parameters, the Hub's safetensors total (the language model 400,711,848,960)");

    family = "Mistral";
    ModelSpec mistral = llamaStyle("Mistral 7B v0.1", 32000, 4096, 32, 32, 8, 14336, 32768);
    mistral.slidingWindow = 4096;
    add("mistral-7b", mistral, 7241732096, true, "mistralai/Mistral-7B-v0.1 config.json; 7,241,732,096 parameters");

    ModelSpec mixtral = llamaStyle("Mixtral 8x7B", 32000, 4096, 32, 32, 8, 14336, 32768);
    mixtral.moe = { 8, 2, 0, 14336, 0, false };
    add("mixtral-8x7b", mixtral, 46702792704, true,
        "mistralai/Mixtral-8x7B-v0.1 config.json; 46,702,792,704 parameters (12.9B active)");

    ModelSpec mixtral22 = llamaStyle("Mixtral 8x22B", 32000, 6144, 56, 48, 8, 16384, 65536);
    mixtral22.moe = { 8, 2, 0, 16384, 0, false };
    add("mixtral-8x22b", mixtral22, 140620634112, true,
        "mistralai/Mixtral-8x22B-v0.1 config.json (tests/data/hf/mixtral-8x22b.json); 140,620,634,112 parameters "
        "(Hub safetensors total of the same tensors' mirrors; 39.2B active)");

    add("mistral-7b-v0.3", llamaStyle("Mistral 7B v0.3", 32768, 4096, 32, 32, 8, 14336, 32768), 7248023552, true,
        "mistralai/Mistral-7B-v0.3 config.json (no sliding window, 32,768-token vocabulary); 7,248,023,552 "
        "parameters (Hub safetensors total)");
    ModelSpec nemo = llamaStyle("Mistral Nemo 12B", 131072, 5120, 40, 32, 8, 14336, 131072);
    nemo.headDim = 128; // not 5120 / 32
    add("mistral-nemo-12b", nemo, 12247782400, true,
        "mistralai/Mistral-Nemo-Instruct-2407 config.json shapes (head_dim 128); model.safetensors.index.json "
        "total_size 24,495,564,800 B = 12,247,782,400 bf16 parameters; context 128k as the card says");

    family = "Gemma";
    ModelSpec gemma1b = llamaStyle("Gemma 3 1B", 262144, 1152, 26, 4, 1, 6912, 32768);
    gemma1b.headDim = 256;
    gemma1b.mlp = MlpKind::GeGlu;
    gemma1b.qkNorm = true;
    gemma1b.postNorms = true;
    gemma1b.tiedEmbeddings = true;
    gemma1b.slidingWindow = 512;
    gemma1b.globalLayerInterval = 6;
    add("gemma-3-1b", gemma1b, 999885952, true,
        "google/gemma-3-1b-it config.json (Gemma3ForCausalLM, text only); 999,885,952 parameters (Hub safetensors "
        "total)");
    ModelSpec gemma = llamaStyle("Gemma 3 12B (text)", 262208, 3840, 48, 16, 8, 15360, 131072);
    gemma.headDim = 256;
    gemma.mlp = MlpKind::GeGlu;
    gemma.qkNorm = true;
    gemma.postNorms = true;
    gemma.tiedEmbeddings = true;
    gemma.slidingWindow = 1024;
    gemma.globalLayerInterval = 6; // 5 local : 1 global -> 40 local + 8 global
    add("gemma-3-12b", gemma, 11766034176, true,
        "google/gemma-3-12b-pt text_config (Gemma3ForCausalLM): 11,766,034,176 parameters; the 12.2B "
        "checkpoint adds the SigLIP vision tower. The seed article calls these shapes \"Gemma 4 12B\", ~11.6B");

    family = "Qwen";
    ModelSpec qwen = llamaStyle("Qwen2.5 7B", 152064, 3584, 28, 28, 4, 18944, 131072);
    qwen.qkvBias = true;
    add("qwen2.5-7b", qwen, 7615616512, true, "Qwen/Qwen2.5-7B config.json; 7,615,616,512 parameters");
    // Qwen2.5-VL 7B: Qwen2.5 7B's decoder with mRoPE (vLLM's 4x cos/sin cache) beside its vision transformer.
    ModelSpec qwenVl = qwen;
    qwenVl.name = "Qwen2.5-VL 7B (VL)";
    qwenVl.maxPositionEmbeddings = 128000;
    qwenVl.mrope = true;
    qwenVl.vision = { 1280, 3420, 32, 16, 0, 14, 3, VisionKind::Qwen25Vit, 2, 2, 3584, 0, 0 };
    add("qwen2.5-vl-7b", qwenVl, 8292166656, true,
        "Qwen/Qwen2.5-VL-7B-Instruct config.json (tests/data/hf/qwen2.5-vl-7b-instruct.json); 8,292,166,656 "
        "parameters, the vision transformer's 676,550,144 included");

    ModelSpec qwen3 = llamaStyle("Qwen3 8B", 151936, 4096, 36, 32, 8, 12288, 40960);
    qwen3.qkNorm = true;
    add("qwen3-8b", qwen3, 8190735360, true,
        "Qwen/Qwen3-8B config.json; checkpoint total_size 16,381,470,720 B = 8,190,735,360 parameters");
    ModelSpec qwen3moe = llamaStyle("Qwen3 30B-A3B (MoE)", 151936, 2048, 48, 32, 4, 6144, 40960);
    qwen3moe.headDim = 128; // not 2048 / 32
    qwen3moe.qkNorm = true;
    qwen3moe.moe = { 128, 8, 0, 768, 0, false };
    add("qwen3-30b-a3b", qwen3moe, 30532122624, true,
        "Qwen/Qwen3-30B-A3B config.json; checkpoint total_size 61,064,245,248 B = 30,532,122,624 parameters "
        "(3.3B activated)");
    // Gated DeltaNet linear attention in 36 of 48 layers, gated full attention (q_proj twice as wide, RoPE on 64 of
    // 256 channels) in every 4th, a Qwen2-MoE block of 512 experts (top 10) and a gated shared expert in each.
    ModelSpec qnext = llamaStyle("Qwen3-Next 80B-A3B", 151936, 2048, 48, 16, 2, 5120, 262144);
    qnext.headDim = 256;
    qnext.qkNorm = true;
    qnext.attentionOutputGate = true;
    qnext.rotaryDim = 64;
    qnext.moe = qwenSharedExpertMoe(512, 10, 512);
    qnext.ssm = { 36, 32, 128, 128, 16, 4, false, false, true, false, SsmKind::GatedDeltaNet, {} };
    qnext.attentionFreeLayers = 36;
    add("qwen3-next-80b-a3b", qnext, 79674391296, true,
        "Qwen/Qwen3-Next-80B-A3B-Instruct config.json (tests/data/hf/qwen3-next-80b-a3b-instruct.json); "
        "79,674,391,296 parameters of the model transformers builds (the Hub's 81,324,862,720 adds the MTP layer "
        "it skips)");
    // Qwen3.5 / Qwen3.6: Qwen3-Next's layers (every 4th gated full attention, Gated DeltaNet otherwise) beside a
    // vision transformer, served as vLLM's --language-model-only builds them (choosing one adapts the run).
    auto qwen35
        = [&](const char* name, Count hidden, Count layers, Count heads, Count kvHeads, Count ffn, Count vHeads) {
              ModelSpec m = llamaStyle(name, 248320, hidden, layers, heads, kvHeads, ffn, 262144);
              m.headDim = 256;
              m.qkNorm = true;
              m.attentionOutputGate = true;
              m.rotaryDim = 64;
              m.ssm = { layers / 4 * 3, vHeads, 128, 128, 16, 4, false, false, true, false, SsmKind::GatedDeltaNet,
                  DType::Fp32 };
              m.attentionFreeLayers = m.ssm.layers;
              m.vision = { 1152, 4304, 27, 16, 0, 16, 3, VisionKind::QwenVit, 2, 2, hidden, 2304 };
              m.mrope = true; // rope_parameters.mrope_section
              return m;
          };
    add("qwen3.5-27b", qwen35("Qwen3.5 27B (VL)", 5120, 64, 24, 4, 17408, 48), 27356728560, true,
        "Qwen/Qwen3.5-27B config.json (tests/data/hf/qwen3.5-27b.json); 27,356,728,560 parameters of the model "
        "transformers builds, the vision transformer's 460,730,096 included (the Hub's 27,781,427,952 adds the MTP "
        "layer); Qwen3.6-27B has the same shapes");
    ModelSpec q35moe = qwen35("Qwen3.5 35B-A3B (VL)", 2048, 40, 16, 2, 512, 32);
    q35moe.moe = qwenSharedExpertMoe(256, 8, 512);
    add("qwen3.5-35b-a3b", q35moe, 35107181936, true,
        "Qwen/Qwen3.5-35B-A3B config.json (tests/data/hf/qwen3.5-35b-a3b.json); 35,107,181,936 parameters of the "
        "model transformers builds, the vision transformer's 446,571,248 included (the Hub's 35,951,822,704 adds "
        "the MTP layer); Qwen3.6-35B-A3B has the same shapes");

    family = "Phi";
    add("phi-3-mini", llamaStyle("Phi-3 mini 4k (3.8B)", 32064, 3072, 32, 32, 32, 8192, 4096), 3821079552, true,
        "microsoft/Phi-3-mini-4k-instruct config.json; 3,821,079,552 parameters");

    ModelSpec phi4 = llamaStyle("Phi-4 (14B)", 100352, 5120, 40, 40, 10, 17920, 16384);
    add("phi-4", phi4, 14659507200, true,
        "microsoft/phi-4 config.json shapes (Phi3ForCausalLM); model.safetensors.index.json total_size "
        "29,319,014,400 B = 14,659,507,200 bf16 parameters");

    family = "DeepSeek";
    ModelSpec ds = llamaStyle("DeepSeek-V3 (671B MoE)", 129280, 7168, 61, 128, 128, 18432, 163840);
    ds.attentionType = AttentionType::Mla;
    ds.mla = { 1536, 512, 128, 64, 128 };
    ds.headDim = 192; // qk_nope + qk_rope
    ds.moe = { 256, 8, 1, 2048, 3, true };
    add("deepseek-v3", ds, 671026419200, true,
        "deepseek-ai/DeepSeek-V3 config.json, main model without the 14B MTP module: 671,026,419,200 parameters (37B "
        "active)");
    ModelSpec lite = llamaStyle("DeepSeek-V2-Lite (16B MoE)", 102400, 2048, 27, 16, 16, 10944, 163840);
    lite.attentionType = AttentionType::Mla;
    lite.mla = { 0, 512, 128, 64, 128 }; // q_lora_rank null: a plain q projection
    lite.headDim = 192;
    lite.moe = { 64, 6, 2, 1408, 1, false }; // greedy routing: no correction bias
    add("deepseek-v2-lite", lite, 15706484224, true,
        "deepseek-ai/DeepSeek-V2-Lite config.json; 15,706,484,224 parameters (2.4B activated)");

    family = "SmolLM2";
    ModelSpec smol = llamaStyle("SmolLM2 1.7B", 49152, 2048, 24, 32, 32, 8192, 8192);
    smol.tiedEmbeddings = true;
    add("smollm2-1.7b", smol, 1711376384, true,
        "HuggingFaceTB/SmolLM2-1.7B config.json; 1,711,376,384 parameters (Hub safetensors total of "
        "SmolLM2-1.7B-Instruct)");
    ModelSpec smolSmall = llamaStyle("SmolLM2 135M", 49152, 576, 30, 9, 3, 1536, 8192);
    smolSmall.tiedEmbeddings = true;
    add("smollm2-135m", smolSmall, 134515008, true,
        "HuggingFaceTB/SmolLM2-135M config.json; 134,515,008 parameters (Hub safetensors total of "
        "SmolLM2-135M-Instruct)");

    family = "OLMo";
    auto olmo2 = [](const char* name, Count hidden, Count layers, Count heads, Count ffn) {
        ModelSpec m = llamaStyle(name, 100352, hidden, layers, heads, heads, ffn, 4096);
        m.qkNorm = m.qkNormFullWidth = true; // Olmo2RMSNorm over heads x head_dim
        m.normAfterSublayers = true;
        m.normScaleFp32 = true;
        return m;
    };
    add("olmo-2-7b", olmo2("OLMo 2 7B", 4096, 32, 32, 11008), 7298617344, true,
        "allenai/OLMo-2-1124-7B config.json shapes; 7,298,617,344 parameters (Hub safetensors total of "
        "OLMo-2-1124-7B-Instruct)");
    add("olmo-2-13b", olmo2("OLMo 2 13B", 5120, 40, 40, 13824), 13716198400, true,
        "allenai/OLMo-2-1124-13B config.json; model.safetensors.index.json total_size 54,864,793,600 B = "
        "13,716,198,400 fp32 parameters");

    // OLMoE (modeling_olmoe.py): Llama's pre-norm layers, QK-norm over whole projections, every layer
    // 64 experts of 1024 behind a bias-free router, top-8, untied.
    ModelSpec olmoe = llamaStyle("OLMoE 1B-7B", 50304, 2048, 16, 16, 16, 1024, 4096);
    olmoe.qkNorm = olmoe.qkNormFullWidth = true;
    olmoe.moe = { 64, 8, 0, 1024, 0, false };
    add("olmoe-1b-7b", olmoe, 6919161856, true,
        "allenai/OLMoE-1B-7B-0924 config.json shapes (tests/data/hf/olmoe-1b-7b-0924.json); 6,919,161,856 "
        "parameters (Hub safetensors total), 1.28B active");

    family = "Granite";
    ModelSpec granite = llamaStyle("Granite 3.3 8B", 49159, 4096, 40, 32, 8, 12800, 131072);
    granite.tiedEmbeddings = true;
    add("granite-3.3-8b", granite, 8170864640, true,
        "ibm-granite/granite-3.3-8b-instruct config.json; 8,170,864,640 parameters (Hub safetensors total)");

    // Granite-4.0-H (modeling_granitemoehybrid.py): 36 Mamba-2 and 4 attention layers, each with a shared gated
    // MLP of 1536 and 72 experts of 768 (top 10) behind a bias-free router; tied.
    ModelSpec graniteH = llamaStyle("Granite 4.0 H Small (hybrid)", 100352, 4096, 40, 32, 8, 768, 131072);
    graniteH.tiedEmbeddings = true;
    graniteH.moe.numExperts = 72;
    graniteH.moe.topK = 10;
    graniteH.moe.sharedExperts = 1;
    graniteH.moe.expertFfnHiddenSize = 768;
    graniteH.moe.sharedExpertFfnHiddenSize = 1536;
    graniteH.ssm = { 36, 128, 64, 128, 1, 4, false, true, true, false };
    graniteH.attentionFreeLayers = 36;
    graniteH.position = PositionKind::None; // position_embedding_type "nope", as the Granite-4.0-H configs say
    add("granite-4.0-h-small", graniteH, 32207337984, true,
        "ibm-granite/granite-4.0-h-small config.json (tests/data/hf/granite-4.0-h-small.json); 32,207,337,984 "
        "parameters (Hub safetensors total); served only (vLLM, SGLang)");

    // Hybrid Mamba-2 models (modeling_nemotron_h.py, modeling_falcon_h1.py): their serving budgets are modelled,
    // training is refused (choosing one turns a training scenario into vLLM serving).
    family = "Nemotron-H";
    auto nemotron = [&](const char* name, Count hidden, Count layers, Count heads, Count ffn, Count ctx, SsmSpec ssm,
                        Count attention, Count mlp) {
        ModelSpec m = llamaStyle(name, 131072, hidden, layers, heads, 8, ffn, ctx);
        m.headDim = 128;
        m.mlp = MlpKind::Gelu; // up -> relu^2 -> down
        m.position = PositionKind::None; // NoPE attention
        m.ssm = ssm;
        m.attentionFreeLayers = layers - attention;
        m.mlpFreeLayers = layers - mlp;
        return m;
    };
    add("nemotron-h-8b", nemotron("Nemotron-H 8B", 4096, 52, 32, 21504, 8192, { 24, 128, 64, 128, 8 }, 4, 24),
        8100852736, true,
        "nvidia/Nemotron-H-8B-Base-8K config.json (tests/data/hf/nemotron-h-8b-base-8k.json); 8,100,852,736 "
        "parameters of the loaded model");
    add("nemotron-nano-9b-v2",
        nemotron("NVIDIA Nemotron Nano 9B v2", 4480, 56, 40, 15680, 131072, { 27, 128, 80, 128, 8 }, 4, 25), 8888227328,
        true,
        "nvidia/NVIDIA-Nemotron-Nano-9B-v2 config.json (tests/data/hf/nemotron-nano-9b-v2.json); 8,888,227,328 "
        "parameters (HF safetensors)");

    family = "Falcon-H1";
    ModelSpec falconH = llamaStyle("Falcon-H1 7B", 130048, 3072, 44, 12, 2, 12288, 262144);
    falconH.headDim = 128;
    falconH.ssm = { 44, 24, 128, 256, 1, 4, false, true, true, true };
    add("falcon-h1-7b", falconH, 7585648736, true,
        "tiiuae/Falcon-H1-7B-Base config.json (tests/data/hf/falcon-h1-7b-base.json); 7,585,648,736 parameters of "
        "the loaded model");

    family = "StarCoder2";
    ModelSpec sc2 = llamaStyle("StarCoder2 7B", 49152, 4608, 32, 36, 4, 18432, 16384);
    sc2.mlp = MlpKind::Gelu;
    sc2.norm = NormKind::LayerNorm;
    sc2.bias = true;
    sc2.tiedEmbeddings = true;
    sc2.slidingWindow = 4096;
    sc2.dropout = 0.1;
    add("starcoder2-7b", sc2, 7000000000, false,
        "bigcode/starcoder2-7b config.json; the model card says \"7B\" (no exact published count found; the shapes "
        "give 7,173,923,840)");

    // GLM-4-0414 (modeling_glm4.py): q/k/v biases, four RMSNorms per layer (the sublayer outputs normalized
    // before the residual add), RoPE on half of each head, untied.
    family = "GLM";
    ModelSpec glm4 = llamaStyle("GLM-4 9B", 151552, 4096, 40, 32, 2, 13696, 32768);
    glm4.qkvBias = true;
    glm4.postNorms = true;
    glm4.rotaryDim = 64;
    add("glm-4-9b", glm4, 9400279040, true,
        "THUDM/GLM-4-9B-0414 config.json shapes (tests/data/hf/glm-4-9b-0414.json); 9,400,279,040 parameters "
        "(the safetensors total)");

    // Aya 23 8B (modeling_cohere.py): Command-R's architecture at 8B: one weight-only LayerNorm per layer read by
    // attention and the MLP in parallel, tied embeddings, a 256,000-token vocabulary.
    family = "Cohere";
    ModelSpec aya = llamaStyle("Aya 23 8B", 256000, 4096, 32, 32, 8, 14336, 8192);
    aya.norm = NormKind::LayerNorm;
    aya.normBias = false;
    aya.parallelResidual = aya.sharedAttentionNorm = true;
    aya.tiedEmbeddings = true;
    add("aya-23-8b", aya, 8028033024, true,
        "CohereForAI/aya-23-8B config.json shapes (tests/data/hf/aya-23-8b.json); 8,028,033,024 parameters, the "
        "Hub safetensors total of aya-expanse-8b, which the same shapes give exactly");
    return p;
}

} // namespace

const std::vector<Preset>& presets()
{
    static const std::vector<Preset> all = build();
    return all;
}

std::optional<Preset> findPreset(std::string_view key)
{
    for (const Preset& p : presets())
        if (p.key == key)
            return p;
    return std::nullopt;
}

} // namespace vramlab
