// SPDX-License-Identifier: MIT
// The YAML reader (checked against PyYAML 6.0 safe_load on the same text) and the TRL config import
// (vramlab-cli import-trl), on TRL v0.25.1's own examples/cli_configs/example_config.yaml and on configs written as
// TRL's docs write them (tests/data/trl/SOURCES.md).
#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/scenario_io.h"
#include "vramlab/trl_config.h"
#include "vramlab/yaml_reader.h"

#include <QtTest>

using namespace vramlab;
using nlohmann::json;

namespace {

const std::string kDir = VRAMLAB_SOURCE_DIR "/tests/data/trl/";

json yaml(const std::string& text)
{
    return parseYamlText(text, "t.yaml");
}

/// The error parseYamlText raises for `text`, or an empty one.
InputError yamlError(const std::string& text)
{
    try {
        (void)parseYamlText(text, "t.yaml");
    } catch (const InputError& e) {
        return e;
    }
    return InputError("", "no error");
}

Scenario llama(Count gpus = 1)
{
    Scenario sc = readScenario(json { { "format", "vramlab.scenario" }, { "version", 1 }, { "name", "llama" },
        { "model", { { "preset", "llama-3-8b" } } }, { "run", { { "gpu", "h100-sxm-80gb" } } } });
    sc.run.parallelism.gpus = gpus;
    return sc;
}

Scenario imported(const std::string& file, Scenario sc = llama())
{
    (void)applyTrlConfig(sc, parseYamlText(readTextFile(kDir + file, kMaxYamlFileBytes), file));
    return sc;
}

/// The key applyTrlConfig refuses for the YAML `text`, or "".
std::string refusedKey(const std::string& text)
{
    Scenario sc = llama();
    try {
        (void)applyTrlConfig(sc, yaml(text));
    } catch (const InputError& e) {
        return e.keyPath();
    }
    return {};
}

} // namespace

class TestTrlConfig : public QObject {
    Q_OBJECT
private slots:
    /// Each value as PyYAML 6.0's safe_load gives it (YAML 1.1 resolver): 1e-5 without a '.' is a string, yes/Off
    /// are booleans, a value on the line below its key is that key's, flow and block collections nest.
    void yamlReadsAsPyYaml()
    {
        const json v = yaml("---\n"
                            "a: 1\nb: 1e-5\nc: 1.0e-5\nd: .5\ne: -.5\nf: yes\ng: Off\nh: ~\ni:\n"
                            "k: \"quoted # not comment\"   # comment\nl: 'it''s'\n"
                            "m: [1, 2.5, \"x\", [a, b], {p: q, r: 3}]\n"
                            "n:\n  Qwen/Qwen2.5-0.5B\n"
                            "o: http://example.com:8080/x\np: 1_000\nq: 09\nw: \"\\u00e9\\t\\x41\"\n"
                            "list:\n- a\n- b: 1\n  c: 2\n-\n  - x\n  - y\n"
                            "lit: |\n  one\n    two\n\nfold: >\n  a\n  b\n\n  c\nstrip: |-\n  text\n");
        const json want = json::parse("{\"a\":1,\"b\":\"1e-5\",\"c\":1e-05,\"d\":0.5,\"e\":\"-.5\",\"f\":true,"
                                      "\"g\":false,\"h\":null,\"i\":null,\"k\":\"quoted # not comment\",\"l\":\"it's\","
                                      "\"m\":[1,2.5,\"x\",[\"a\",\"b\"],{\"p\":\"q\",\"r\":3}],"
                                      "\"n\":\"Qwen/Qwen2.5-0.5B\",\"o\":\"http://example.com:8080/x\",\"p\":1000,"
                                      "\"q\":\"09\",\"w\":\"\xc3\xa9\\tA\","
                                      "\"list\":[\"a\",{\"b\":1,\"c\":2},[\"x\",\"y\"]],"
                                      "\"lit\":\"one\\n  two\\n\",\"fold\":\"a b\\nc\\n\",\"strip\":\"text\"}");
        QCOMPARE(QString::fromStdString(v.dump()), QString::fromStdString(want.dump()));
        // PyYAML's timestamp resolver takes only whole dates and times; leading zeros before a '.' make a float; a
        // keep-chomped block at the end of the file and a literal's line of spaces keep what PyYAML keeps.
        QCOMPARE(QString::fromStdString(yaml("run_name: 2024-06-01-llama-sft\nf: 01.5\n").dump()),
            QStringLiteral("{\"f\":1.5,\"run_name\":\"2024-06-01-llama-sft\"}"));
        QCOMPARE(QString::fromStdString(yaml("a: |+\n  x\n\n\n").dump()), QStringLiteral("{\"a\":\"x\\n\\n\\n\"}"));
        QCOMPARE(
            QString::fromStdString(yaml("a: |\n  x\n   \n  y\n").dump()), QStringLiteral("{\"a\":\"x\\n \\ny\\n\"}"));
        QCOMPARE(QString::fromStdString(yaml("a: \"x\ty\" # c\td\n").dump()), QStringLiteral("{\"a\":\"x\\ty\"}"));
        QVERIFY(yaml("").is_null());
        QVERIFY(yaml("# only a comment\n").is_null());
    }

    /// A config is data: what could construct an object (PyYAML's unsafe loaders run !!python/object/apply) or alias
    /// data is refused naming the line, and so is what PyYAML reads otherwise than JSON can say.
    void yamlRefusesWhatIsNotPlainData()
    {
        const std::pair<const char*, const char*> cases[] = {
            { "a: !!python/object/apply:os.system [\"echo pwned\"]\n", "line 1" },
            { "a: 1\nb: !!binary aGk=\n", "line 2" },
            { "a: &x 1\nb: *x\n", "line 1" },
            { "<<: {a: 1}\n", "line 1" },
            { "? a\n: b\n", "line 1" },
            { "%YAML 1.1\n---\na: 1\n", "line 1" },
            { "a: 1\n---\nb: 2\n", "line 2" },
            { "a: 1\na: 2\n", "line 2" }, // PyYAML keeps the last one silently
            { "a:\n\tb: 1\n", "line 2" },
            { "a: b: c\n", "line 1" },
            { "a: 0x1F\n", "line 1" },
            { "a: 2024-01-01\n", "line 1" },
            { "a: .inf\n", "line 1" },
            { "a: [1, 2\n", "line 2" },
            { "a: \"open\n", "line 1" },
            { "a: 99999999999999999999\n", "line 1" },
            { "a: 1\nb:\t2\n", "line 2" }, // PyYAML reads tabs only in quotes, comments and block scalars
            { "- \tx\n", "line 1" },
        };
        for (const auto& [text, line] : cases) {
            const InputError e = yamlError(text);
            QVERIFY2(e.keyPath() == line, (std::string(text) + " -> " + e.what()).c_str());
            QCOMPARE(QString::fromStdString(e.file()), QStringLiteral("t.yaml"));
        }
        QVERIFY(QString::fromStdString(yamlError("a: !!python/object/apply:os.system [ls]\n").expected())
                    .contains(QStringLiteral("tags")));
        std::string deep = "a: ";
        for (int i = 0; i < 40; ++i)
            deep += "[";
        QVERIFY(QString::fromStdString(yamlError(deep).expected()).contains(QStringLiteral("32 deep")));
        std::string nested;
        for (int i = 0; i < 40; ++i)
            nested += std::string(static_cast<std::size_t>(2 * i), ' ') + "k:\n";
        QVERIFY(QString::fromStdString(yamlError(nested).expected()).contains(QStringLiteral("32 deep")));
        QVERIFY(QString::fromStdString(yamlError(std::string(kMaxYamlFileBytes + 1, '#')).expected())
                    .contains(QStringLiteral("1 MiB")));
        QCOMPARE(QString::fromStdString(yamlError("a: \"\xff\"\n").keyPath()), QStringLiteral("(file)"));
    }

    /// TRL v0.25.1's own example config: every key it leaves out is SFTConfig's default (bf16 autocast over the fp32
    /// model transformers loads when dtype is unset, gradient checkpointing, batch 8 of max_length 1024) and
    /// transformers' (adamw_torch_fused).
    void trlExampleConfig()
    {
        Scenario before = llama();
        before.run.finetune.method = FinetuneMethod::Lora;
        before.run.parallelism.zeroStage = 3;
        const Scenario sc = imported("example_config.yaml", before);
        const RunSpec& r = sc.run;
        QVERIFY(r.framework == Framework::HfTransformers);
        QVERIFY(r.finetune.method == FinetuneMethod::Full);
        QVERIFY(r.precision == Precision::MixedBf16);
        QCOMPARE(r.microBatchSize, Count(8));
        QCOMPARE(r.sequenceLength, Count(1024));
        QCOMPARE(r.gradientAccumulationSteps, Count(1));
        QVERIFY(r.checkpointing.kind == Checkpointing::Kind::Full);
        QVERIFY(r.optimizer == Optimizer::AdamW && r.optimizerImpl == OptimizerImpl::Fused);
        QCOMPARE(r.parallelism.zeroStage, 0); // the scenario's ZeRO-3 is not TRL's default
        QCOMPARE(sc.model.preset, std::string("llama-3-8b"));
        QCOMPARE(r.gpu->name, llama().run.gpu->name);
    }

    /// A QLoRA config as TRL's docs write it gives the scenario a user would write by hand, to the byte: ModelConfig's
    /// lora_dropout 0.05, the nested quantization it asks for, the bf16 autocast over a bf16 base, paged 8-bit AdamW.
    void qloraAsTrlSftLoadsIt()
    {
        const Scenario sc = imported("qlora-llama3-8b.yaml");
        const Scenario byHand = readScenario(json::parse(
            "{\"format\": \"vramlab.scenario\", \"version\": 1, \"name\": \"llama\", \"model\": {\"preset\": "
            "\"llama-3-8b\"}, \"run\": {\"framework\": \"hf-transformers\", \"sequence_length\": 2048, "
            "\"micro_batch_size\": 2, \"gradient_accumulation_steps\": 8, \"precision\": \"mixed-bf16\", "
            "\"optimizer\": \"adamw-8bit\", \"optimizer_impl\": \"paged-8bit\", \"checkpointing\": \"full\", "
            "\"attention\": \"flash\", \"finetune\": {\"method\": \"qlora\", \"rank\": 16, \"alpha\": 32, \"dropout\": "
            "0.05, \"targets\": [\"all-linear\"], \"double_quant\": true, \"quant\": \"bnb-nf4\"}, \"gpu\": "
            "\"h100-sxm-80gb\"}}"));
        QCOMPARE(sc.run.finetune.dropout, 0.05);
        QVERIFY(sc.run.finetune.doubleQuant);
        const Report got = estimate(sc), want = estimate(byHand);
        QCOMPARE(got.peak, want.peak);
        QCOMPARE(got.peakAllocatedBytes, want.peakAllocatedBytes);
        // The scenario file it writes reads back the same.
        QCOMPARE(estimate(readScenario(scenarioToJson(sc))).peak, got.peak);
    }

    /// Packing with "bfd" is padding-free (sft_trainer.py: the micro-batch becomes one row of up to batch x
    /// max_length tokens); Liger's fused loss; TRL's shipped zero2 accelerate config through the DeepSpeed import;
    /// the allocator setting of the config's env.
    void paddingFreeLigerAndZero()
    {
        const Scenario sc = imported("lora-packed-liger.yaml");
        const RunSpec& r = sc.run;
        QCOMPARE(r.microBatchSize, Count(1));
        QCOMPARE(r.sequenceLength, Count(4 * 4096));
        QVERIFY(r.loss == LossKind::Fused);
        QVERIFY(r.framework == Framework::Deepspeed);
        QCOMPARE(r.parallelism.zeroStage, 2);
        QCOMPARE(r.parallelism.gpus, Count(2));
        QVERIFY(r.allocator.expandableSegments);
        QVERIFY(r.finetune.method == FinetuneMethod::Lora);
        QCOMPARE(r.finetune.rank, Count(32));
        QCOMPARE(r.finetune.dropout, 0.0);
        QCOMPARE(r.finetune.targets, (std::vector<std::string> { "q", "k", "v", "o" }));
        QVERIFY(r.precision == Precision::MixedBf16);
        // pad_to_multiple_of rounds the row up.
        Scenario padded = llama();
        (void)applyTrlConfig(padded,
            yaml("attn_implementation: flash_attention_2\npadding_free: true\nper_device_train_batch_size: 3\n"
                 "max_length: 1000\npad_to_multiple_of: 64\n"));
        QCOMPARE(padded.run.sequenceLength, Count(3008));
        QCOMPARE(padded.run.microBatchSize, Count(1));
        // TRL's shipped fsdp1 accelerate config: FSDP1 FULL_SHARD over its 8 processes, with the Trainer's no_sync and
        // PEFT wrapping; a bf16 model fully fine-tuned there is mixed, since accelerate upcasts the trainable flat
        // parameters to fp32 (accelerator.py): 4 B of master shard beside 2 B gathered, fp32 gradients and states.
        Scenario sharded = llama(1);
        (void)applyTrlConfig(
            sharded, yaml("accelerate_config: fsdp1\ndtype: bfloat16\nattn_implementation: flash_attention_2\n"));
        QVERIFY(sharded.run.parallelism.fsdp1() && sharded.run.parallelism.zeroStage == 3);
        QCOMPARE(sharded.run.parallelism.gpus, Count(8));
        QVERIFY(sharded.run.precision == Precision::MixedBf16);
        const Report fsdp = estimate(sharded);
        const Count params = fsdp.params.total;
        QVERIFY(fsdp.bytes(ComponentKind::OptimizerStates) >= Bytes(8 * params / 8)); // fp32 m, v of a rank's eighth
        Scenario lora = llama(1);
        (void)applyTrlConfig(lora,
            yaml("accelerate_config: fsdp1\ndtype: bfloat16\nuse_peft: true\n"
                 "lora_target_modules: all-linear\ngradient_accumulation_steps: 4\n"));
        QVERIFY(lora.run.precision == Precision::MixedBf16 && lora.run.parallelism.fsdp1());
        // single_gpu is one process; a num_processes key wins over a shipped config's 8.
        Scenario one = llama(8);
        (void)applyTrlConfig(one, yaml("accelerate_config: single_gpu\n"));
        QCOMPARE(one.run.parallelism.gpus, Count(1));
        Scenario four = llama(1);
        (void)applyTrlConfig(four, yaml("accelerate_config: zero3\nnum_processes: 4\n"));
        QCOMPARE(four.run.parallelism.gpus, Count(4));
        QCOMPARE(four.run.parallelism.zeroStage, 3);
    }

    /// The load dtype and autocast together (transformers 4.57.1 never casts the parameters for training).
    void precisionFromDtypeAndAutocast()
    {
        const auto precisionOf = [](const std::string& text) {
            Scenario sc = llama();
            (void)applyTrlConfig(sc, yaml(text));
            return sc.run.precision;
        };
        QVERIFY(precisionOf("torch_dtype: bfloat16\n") == Precision::Bf16); // full: pure bf16, no master copy
        QVERIFY(precisionOf("dtype: float32\nbf16: false\n") == Precision::Fp32);
        QVERIFY(precisionOf("fp16: true\n") == Precision::MixedFp16);
        QVERIFY(precisionOf("dtype: bfloat16\nuse_peft: true\nlora_target_modules: [q_proj, v_proj]\n")
            == Precision::MixedBf16);
        QVERIFY(precisionOf("dtype: bfloat16\nbf16: false\nuse_peft: true\nlora_target_modules: [q_proj, v_proj]\n")
            == Precision::Bf16);
        QVERIFY(precisionOf("dtype: auto\n") == Precision::Bf16); // Llama 3's checkpoint is bf16
        // OLMo-2 ships fp32 weights (config.json torch_dtype float32): "auto" loads fp32, under autocast mixed.
        Scenario olmo = readScenario(json { { "format", "vramlab.scenario" }, { "version", 1 }, { "name", "o" },
            { "model", { { "preset", "olmo-2-13b" } } }, { "run", { { "gpu", "h100-sxm-80gb" } } } });
        (void)applyTrlConfig(olmo, yaml("dtype: auto\nattn_implementation: flash_attention_2\n"));
        QVERIFY(olmo.run.precision == Precision::MixedBf16);
        QVERIFY(precisionOf("dtype: bfloat16\nbf16: \"no\"\n") == Precision::Bf16); // argparse's string_to_bool
        // `trl sft --use_peft` without a dtype: an fp32 base under bf16 autocast, its frozen weights 4 B each, the
        // estimate a lower bound (autocast's 16-bit casts of them are not modelled).
        Scenario fp32Base = llama();
        (void)applyTrlConfig(fp32Base, yaml("use_peft: true\nlora_target_modules: [q_proj, v_proj]\n"));
        QVERIFY(fp32Base.run.precision == Precision::MixedBf16 && fp32Base.run.finetune.baseFp32.value_or(false));
        Scenario bf16Base = fp32Base;
        bf16Base.run.finetune.baseFp32.reset();
        const Report fp32Report = estimate(fp32Base), bf16Report = estimate(bf16Base);
        QVERIFY(!fp32Report.lowerBound.empty() && bf16Report.lowerBound.empty());
        // Every base parameter is frozen (the adapters are PEFT's fp32 ones either way): 2 B more each.
        QCOMPARE(fp32Report.bytes(ComponentKind::Weights) - bf16Report.bytes(ComponentKind::Weights),
            Bytes(2) * fp32Report.params.total);
    }

    /// What trl sft itself rejects, and what VRAM Lab does not model, is refused naming the key; a refusal changes
    /// nothing.
    void refusesNamingTheKey()
    {
        const std::pair<const char*, const char*> cases[] = {
            { "max_seq_length: 2048\n", "max_seq_length" },
            { "evaluation_strategy: steps\n", "evaluation_strategy" },
            { "use_peft: true\nload_in_8bit: true\n", "load_in_8bit" },
            { "load_in_4bit: true\n", "load_in_4bit" },
            { "use_peft: true\nload_in_4bit: true\n", "dtype" },
            { "use_peft: true\nload_in_4bit: true\ndtype: auto\n", "dtype" },
            { "use_peft: true\nlora_target_modules: [q_proj]\ndtype: bfloat16\n", "lora_target_modules" },
            { "use_peft: true\nlora_target_modules: [c_attn, c_proj]\ndtype: bfloat16\n", "lora_target_modules" },
            { "torch_compile: true\n", "torch_compile" },
            { "fsdp: full_shard auto_wrap\n", "fsdp" },
            { "deepspeed: ds_zero3.json\n", "deepspeed" },
            { "activation_offloading: true\n", "activation_offloading" },
            { "packing: true\n", "packing" },
            { "use_liger_kernel: true\ngradient_checkpointing: false\n", "use_liger_kernel" },
            { "optim: galore_adamw\n", "optim" },
            { "bf16: true\nfp16: true\n", "fp16" },
            { "max_length: null\n", "max_length" },
            { "label_smoothing_factor: 0.1\n", "label_smoothing_factor" },
            { "accelerate_config: fsdp2\n", "accelerate_config" },
            { "accelerate_config: zero3\ndeepspeed: {zero_optimization: {stage: 2}}\n", "deepspeed" },
            { "per_device_train_batch_size: many\n", "per_device_train_batch_size" },
            { "loss_type: dft\n", "loss_type" },
            { "use_liger_kernel: true\nliger_kernel_config: {cross_entropy: true}\n",
                "liger_kernel_config.cross_entropy" },
        };
        for (const auto& [text, key] : cases)
            QVERIFY2(refusedKey(text) == key, (std::string(text) + " -> \"" + refusedKey(text) + "\"").c_str());
        // Liger has no kernels for GPT-2 (monkey_patch.py): the loss stays transformers'; PEFT has no default modules
        // for qwen3_moe; "auto" on a model VRAM Lab knows no checkpoint of.
        Scenario gpt2 = readScenario(json { { "format", "vramlab.scenario" }, { "version", 1 }, { "name", "g" },
            { "model", { { "preset", "gpt2" } } }, { "run", { { "gpu", "h100-sxm-80gb" } } } });
        const ConfigImport noLiger = applyTrlConfig(gpt2, yaml("dtype: float32\nuse_liger_kernel: true\n"));
        QVERIFY(!gpt2.run.loss);
        QVERIFY(std::any_of(noLiger.ignored.begin(), noLiger.ignored.end(),
            [](const std::string& l) { return l.starts_with("use_liger_kernel: Liger v0.6.3 has no kernels"); }));
        Scenario moe = readScenario(json { { "format", "vramlab.scenario" }, { "version", 1 }, { "name", "m" },
            { "model", { { "preset", "qwen3-30b-a3b" } } }, { "run", { { "gpu", "h100-sxm-80gb" } } } });
        QVERIFY_THROWS_EXCEPTION(InputError, applyTrlConfig(moe, yaml("dtype: bfloat16\nuse_peft: true\n")));
        Scenario custom = llama();
        custom.model.preset.clear();
        QVERIFY_THROWS_EXCEPTION(InputError, applyTrlConfig(custom, yaml("dtype: auto\n")));
        Scenario sc = llama();
        const json before = scenarioToJson(sc);
        QVERIFY_THROWS_EXCEPTION(InputError, applyTrlConfig(sc, yaml("gradient_accumulation_steps: 4\nfsdp: true\n")));
        QCOMPARE(scenarioToJson(sc), before);
        // Keys that change no memory are listed with why, and an accelerate launch option is read.
        Scenario ok = llama();
        const ConfigImport done = applyTrlConfig(ok, yaml("learning_rate: 2.0e-5\nnum_processes: 8\nseed: 3\n"));
        QCOMPARE(ok.run.parallelism.gpus, Count(8));
        QCOMPARE(std::count_if(done.ignored.begin(), done.ignored.end(),
                     [](const std::string& l) { return l.starts_with("learning_rate: ") || l.starts_with("seed: "); }),
            2L);
    }
};

QTEST_GUILESS_MAIN(TestTrlConfig)
#include "tst_trl_config.moc"
