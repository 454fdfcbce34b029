// SPDX-License-Identifier: MIT
// The axolotl config import (vramlab-cli import-axolotl) on axolotl v0.13.0's own examples/llama-3 configs
// (tests/data/axolotl/SOURCES.md) and on what axolotl refuses or VRAM Lab does not model.
#include "vramlab/axolotl_config.h"
#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/gpu_catalog.h"
#include "vramlab/scenario_io.h"
#include "vramlab/yaml_reader.h"

#include <QtTest>

using namespace vramlab;
using nlohmann::json;

namespace {

const std::string kDir = VRAMLAB_SOURCE_DIR "/tests/data/axolotl/";

Scenario llama(const char* preset = "llama-3-8b", const char* gpu = "h100-sxm-80gb")
{
    return readScenario(json { { "format", "vramlab.scenario" }, { "version", 1 }, { "name", "llama" },
        { "model", { { "preset", preset } } }, { "run", { { "gpu", gpu } } } });
}

Scenario imported(const std::string& file, Scenario sc = llama())
{
    (void)applyAxolotlConfig(sc, parseYamlText(readTextFile(kDir + file, kMaxYamlFileBytes), file));
    return sc;
}

/// A config with axolotl's required keys and `extra` after them.
json config(const std::string& extra)
{
    return parseYamlText("base_model: x\nlearning_rate: 0.0002\nmicro_batch_size: 2\ngradient_accumulation_steps: 4\n"
                         "flash_attention: true\n"
            + extra,
        "c.yml");
}

/// The key applyAxolotlConfig refuses, or "".
std::string refusedKey(const json& c, Scenario sc = llama())
{
    try {
        (void)applyAxolotlConfig(sc, c);
    } catch (const InputError& e) {
        return e.keyPath();
    }
    return {};
}

} // namespace

class TestAxolotlConfig : public QObject {
    Q_OBJECT
private slots:
    /// examples/llama-3/qlora.yml: bf16 "auto" on an H100 is a bf16 model under bf16 autocast; nf4 with double
    /// quantization; PEFT's preparation with the norms and embeddings cast back (kbit_preparation none); packing 2 x
    /// 4096 tokens into one row; paged 32-bit AdamW. The same bytes as the scenario a user would write by hand.
    void qloraExample()
    {
        const Scenario sc = imported("llama-3-qlora.yml");
        const RunSpec& r = sc.run;
        QVERIFY(r.framework == Framework::HfTransformers);
        QVERIFY(r.finetune.method == FinetuneMethod::Qlora);
        QCOMPARE(r.finetune.rank, Count(32));
        QCOMPARE(r.finetune.dropout, 0.05);
        QCOMPARE(r.finetune.targets, std::vector<std::string> { "all-linear" });
        QVERIFY(r.finetune.doubleQuant);
        QVERIFY(r.finetune.kbitPreparation == KbitPreparation::None);
        QVERIFY(r.precision == Precision::MixedBf16);
        QCOMPARE(r.microBatchSize, Count(1));
        QCOMPARE(r.sequenceLength, Count(8192));
        QCOMPARE(r.gradientAccumulationSteps, Count(4));
        QVERIFY(r.optimizer == Optimizer::AdamW && r.optimizerImpl == OptimizerImpl::Paged32);
        QVERIFY(r.checkpointing.kind == Checkpointing::Kind::Full);
        const Scenario byHand = readScenario(json::parse(
            "{\"format\": \"vramlab.scenario\", \"version\": 1, \"name\": \"llama\", \"model\": {\"preset\": "
            "\"llama-3-8b\"}, \"run\": {\"framework\": \"hf-transformers\", \"sequence_length\": 8192, "
            "\"micro_batch_size\": 1, \"gradient_accumulation_steps\": 4, \"precision\": \"mixed-bf16\", "
            "\"optimizer\": \"adamw\", \"optimizer_impl\": \"paged-32bit\", \"checkpointing\": \"full\", "
            "\"attention\": \"flash\", \"finetune\": {\"method\": \"qlora\", \"rank\": 32, \"alpha\": 16, \"dropout\": "
            "0.05, \"targets\": [\"all-linear\"], \"double_quant\": true, \"quant\": \"bnb-nf4\", "
            "\"kbit_preparation\": "
            "\"none\"}, \"gpu\": \"h100-sxm-80gb\"}}"));
        QCOMPARE(estimate(sc).peak, estimate(byHand).peak);
        QCOMPARE(estimate(readScenario(scenarioToJson(sc))).peak, estimate(sc).peak);
    }

    /// fft-8b.yaml: a bf16 model fully fine-tuned is pure bf16 (no master copy); lora-1b.yml: the seven projections.
    void fullAndLoraExamples()
    {
        const Scenario full = imported("llama-3-fft-8b.yaml");
        QVERIFY(full.run.finetune.method == FinetuneMethod::Full);
        QVERIFY(full.run.precision == Precision::Bf16);
        QCOMPARE(full.run.sequenceLength, Count(8192));
        QVERIFY(full.run.optimizer == Optimizer::AdamW8bit && full.run.optimizerImpl == OptimizerImpl::Paged8);
        const Scenario lora = imported("llama-3-lora-1b.yml", llama("llama-3.2-1b"));
        QCOMPARE(lora.run.finetune.targets.size(), std::size_t(7));
        QCOMPARE(lora.run.sequenceLength, Count(2 * 2048));
        QVERIFY(lora.run.optimizer == Optimizer::AdamW8bit && !lora.run.optimizerImpl);
        // The same bytes as the hand-written full fine-tune: pure bf16 states (2 + 2 + 8-bit AdamW) of 8.03B
        // parameters.
        const Report fullReport = estimate(full);
        QCOMPARE(fullReport.bytes(ComponentKind::Weights), Bytes(2) * fullReport.params.total);
        QCOMPARE(fullReport.bytes(ComponentKind::MasterWeights), Bytes(0));
    }

    /// resolve_dtype: bf16 "auto" on a GPU without bf16 (V100) turns fp16 on: an fp16 model under fp16 autocast, which
    /// GradScaler refuses for full fine-tuning and which adapters run as mixed fp16.
    void bf16AutoFollowsTheGpu()
    {
        Scenario v100 = llama("llama-3-8b", "v100-32gb");
        (void)applyAxolotlConfig(v100, config("adapter: lora\nlora_r: 8\nlora_target_linear: true\n"));
        QVERIFY(v100.run.precision == Precision::MixedFp16);
        QCOMPARE(refusedKey(config(""), llama("llama-3-8b", "v100-32gb")), std::string("fp16"));
        Scenario fp32 = llama();
        (void)applyAxolotlConfig(fp32, config("bf16: false\n"));
        QVERIFY(fp32.run.precision == Precision::Fp32);
    }

    /// Liger's fused linear cross-entropy and Cut Cross Entropy as fused losses; their keys without their plugin are
    /// dropped, as axolotl's schema drops them; so is a key it does not know.
    void pluginsAndUnknownKeys()
    {
        Scenario liger = llama();
        (void)applyAxolotlConfig(liger,
            config("gradient_checkpointing: true\nplugins:\n  - axolotl.integrations.liger.LigerPlugin\n"
                   "liger_fused_linear_cross_entropy: true\nliger_rms_norm: true\n"));
        QVERIFY(liger.run.loss == LossKind::Fused);
        Scenario cce = llama();
        (void)applyAxolotlConfig(
            cce, config("plugins: [axolotl.integrations.cut_cross_entropy.CutCrossEntropyPlugin]\n"));
        QVERIFY(cce.run.loss == LossKind::Fused);
        Scenario plain = llama();
        const ConfigImport done
            = applyAxolotlConfig(plain, config("liger_fused_linear_cross_entropy: true\nmy_own_key: 3\n"));
        QVERIFY(!plain.run.loss);
        QCOMPARE(std::count_if(done.ignored.begin(), done.ignored.end(),
                     [](const std::string& l) {
                         return l.starts_with("liger_fused_linear_cross_entropy: its plugin")
                             || l.starts_with("my_own_key: not a key");
                     }),
            2L);
    }

    /// What axolotl itself refuses, and what VRAM Lab does not model, is refused naming the key; nothing changes.
    void refusesNamingTheKey()
    {
        QCOMPARE(refusedKey(parseYamlText(readTextFile(kDir + "llama-3-lora-1b-kernels.yml"), "k.yml")),
            std::string("lora_mlp_kernel"));
        QCOMPARE(refusedKey(parseYamlText(readTextFile(kDir + "llama-3-fft-8b-liger-fsdp.yaml"), "f.yml")),
            std::string("fsdp"));
        const std::pair<const char*, const char*> cases[] = {
            { "adapter: lora\nlora_r: 8\nlora_dropout: 0\nlora_target_linear: true\n", "lora_dropout" },
            { "adapter: lora\nlora_r: 8\n", "lora_target_modules" },
            { "adapter: lora\nlora_target_linear: true\n", "lora_r" },
            { "adapter: lora\nlora_r: 8\nlora_target_modules: q_proj\n", "lora_target_modules" },
            { "load_in_4bit: true\n", "load_in_4bit" },
            { "adapter: qlora\nlora_r: 8\nlora_target_linear: true\n", "adapter" },
            { "attn_implementation: sdpa\n", "flash_attention" },
            { "attn_implementation: sdpa\nsample_packing: true\nadapter: lora\nlora_r: 8\nlora_target_linear: true\n",
                "sample_packing" },
            { "bf16: full\n", "bf16" },
            { "chunked_cross_entropy: true\n", "chunked_cross_entropy" },
            { "unsloth_lora_mlp: true\n", "unsloth_lora_mlp" },
            { "tensor_parallel_size: 2\n", "tensor_parallel_size" },
            { "torch_compile: auto\n", "torch_compile" },
            { "plugins: [axolotl.integrations.kd.KDPlugin]\n", "plugins" },
            { "gradient_checkpointing: offload\n", "gradient_checkpointing" },
            { "deepspeed: deepspeed_configs/zero3.json\n", "deepspeed" },
            { "rl: dpo\n", "rl" },
            { "batch_size: 16\n", "batch_size" },
            { "optimizer: muon\n", "optimizer" },
            { "model_config:\n  num_hidden_layers: 4\n", "model_config" },
        };
        for (const auto& [text, key] : cases)
            QVERIFY2(refusedKey(config(text)) == key,
                (std::string(text) + " -> \"" + refusedKey(config(text)) + "\"").c_str());
        QCOMPARE(refusedKey(parseYamlText(
                     "base_model: x\nlearning_rate: 1\nflash_attention: true\nmicro_batch_size: 2\n", "c.yml")),
            std::string("micro_batch_size"));
        QCOMPARE(refusedKey(parseYamlText("micro_batch_size: 2\ngradient_accumulation_steps: 1\n", "c.yml")),
            std::string("base_model"));
        // QLoRA on a model with biases on q, k and v (Qwen2.5): PEFT's fp32 cast stays on them.
        QCOMPARE(refusedKey(config("adapter: qlora\nload_in_4bit: true\nlora_r: 8\nlora_target_linear: true\n"),
                     llama("qwen2.5-7b")),
            std::string("adapter"));
        Scenario sc = llama();
        const json before = scenarioToJson(sc);
        QVERIFY_THROWS_EXCEPTION(InputError, applyAxolotlConfig(sc, config("fsdp_config: {fsdp_version: 2}\n")));
        QCOMPARE(scenarioToJson(sc), before);
    }
};

QTEST_GUILESS_MAIN(TestAxolotlConfig)
#include "tst_axolotl_config.moc"
