// SPDX-License-Identifier: MIT
// DeepSpeed configs applied to a scenario (vramlab-cli import-deepspeed): the keys DeepSpeed v0.16.4 reads
// (runtime/config.py, runtime/zero/config.py@e2dc3eeb) map to the scenario's, Hugging Face's "auto" keeps the
// scenario's values or derives Trainer's buckets, and what VRAM Lab cannot model is refused naming the key.
#include "vramlab/deepspeed_config.h"
#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/scenario_io.h"

#include <QtTest>

using namespace vramlab;
using nlohmann::json;

namespace {

json shipped(const char* name)
{
    const std::string path = std::string(VRAMLAB_SOURCE_DIR "/tests/data/deepspeed/") + name;
    return parseJsonText(readTextFile(path), path);
}

/// Llama 3 8B on 8 GPUs, mixed-bf16, micro-batch 2 x 4 steps: what a Trainer's arguments would say.
Scenario base()
{
    return readScenario(json::parse(R"({"format": "vramlab.scenario", "version": 1, "name": "ds",
        "model": {"preset": "llama-3-8b"},
        "run": {"sequence_length": 2048, "micro_batch_size": 2, "gradient_accumulation_steps": 4,
                "precision": "mixed-bf16", "parallelism": {"gpus": 8}, "gpu": "h100-sxm-80gb"}})"));
}

std::string refusedKey(const json& config)
{
    Scenario sc = base();
    try {
        (void)applyDeepSpeedConfig(sc, config);
    } catch (const InputError& e) {
        return e.keyPath();
    }
    return "accepted";
}

} // namespace

class TstDeepSpeedConfig : public QObject {
    Q_OBJECT
private slots:
    /// Trainer's ZeRO-3 config: every value "auto" but the stage; the buckets are Trainer's (hidden 4,096).
    void trainerZero3()
    {
        Scenario sc = base();
        const DeepSpeedImport done = applyDeepSpeedConfig(sc, shipped("hf-trainer-zero3.json"));
        const Parallelism& p = sc.run.parallelism;
        QVERIFY(sc.run.framework == Framework::Deepspeed);
        QCOMPARE(p.zeroStage, 3);
        QCOMPARE(p.reduceBucketSize.value_or(0), Count(4096 * 4096));
        QCOMPARE(p.stage3PrefetchBucketSize.value_or(0), Count(15'099'494)); // 0.9 x 4096^2, as int() rounds
        QCOMPARE(p.stage3ParamPersistenceThreshold.value_or(0), Count(40'960));
        QVERIFY(!p.stage3MaxLiveParameters); // not in the file: DeepSpeed's default
        // "auto" keeps the run's micro-batch, accumulation and precision.
        QCOMPARE(sc.run.microBatchSize, Count(2));
        QCOMPARE(sc.run.gradientAccumulationSteps, Count(4));
        QVERIFY(sc.run.precision == Precision::MixedBf16);
        QVERIFY(sc.run.optimizer == Optimizer::AdamW && sc.run.optimizerImpl == OptimizerImpl::Fused);
        QVERIFY(std::any_of(done.ignored.begin(), done.ignored.end(),
            [](const std::string& s) { return s.starts_with("scheduler:"); }));
        const Report r = estimate(sc); // the run it describes is one VRAM Lab models
        QVERIFY(r.peak > 0);
        // The file round-trips with DeepSpeed's keys written.
        const json back = scenarioToJson(sc)["run"];
        QCOMPARE(back["framework"], json("deepspeed"));
        QCOMPARE(back["parallelism"]["stage3_prefetch_bucket_size"], json(15'099'494));
    }

    /// A scenario sharded with FSDP (FSDP1 under the Trainer, with no_sync) takes DeepSpeed's ZeRO-3, not FSDP's.
    void fsdpScenarioBecomesDeepSpeed()
    {
        Scenario sc = base();
        sc.run.framework = Framework::HfTransformers;
        sc.run.parallelism.zeroStage = 3;
        sc.run.parallelism.sharding = Sharding::Fsdp1;
        sc.run.parallelism.noSync = true;
        (void)applyDeepSpeedConfig(sc, shipped("hf-trainer-zero3.json"));
        const Parallelism& p = sc.run.parallelism;
        QVERIFY(p.sharding == Sharding::Zero && !p.noSync && !p.fsdpWrap);
        QVERIFY(estimate(sc).peak > 0); // refused before: FSDP1 under framework "deepspeed"
    }

    void trainerZero2AndExamples()
    {
        Scenario z2 = base();
        (void)applyDeepSpeedConfig(z2, shipped("hf-trainer-zero2.json"));
        QCOMPARE(z2.run.parallelism.zeroStage, 2);
        QVERIFY(!z2.run.parallelism.reduceBucketSize); // not in the file
        // DeepSpeedExamples' autotuning config: fp16 on, micro-batch "auto".
        Scenario ex = base();
        (void)applyDeepSpeedConfig(ex, shipped("dsexamples-autotuning-fp16-z3.json"));
        QVERIFY(ex.run.precision == Precision::MixedFp16);
        QCOMPARE(ex.run.parallelism.zeroStage, 3);
        QCOMPARE(ex.run.microBatchSize, Count(2));
        // LAMB keeps states VRAM Lab does not model: refused, naming the key; the scenario is untouched.
        Scenario lamb = base();
        try {
            (void)applyDeepSpeedConfig(lamb, shipped("dsexamples-bing-bert-lamb.json"));
            QFAIL("LAMB accepted");
        } catch (const InputError& e) {
            QCOMPARE(e.keyPath(), std::string("optimizer.type"));
        }
        QVERIFY(lamb.run.framework != Framework::Deepspeed && lamb.run.microBatchSize == 2);
    }

    /// A hand-written ZeRO-2 + CPU offload config with numbers, as DeepSpeed's docs write them.
    void numbersOffloadAndBatch()
    {
        Scenario sc = base();
        const json config = json::parse(R"({"train_batch_size": 128, "train_micro_batch_size_per_gpu": 4,
            "gradient_accumulation_steps": 4, "bf16": {"enabled": true},
            "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu", "pin_memory": true},
                "reduce_bucket_size": 2e8, "overlap_comm": true, "contiguous_gradients": true,
                "allgather_bucket_size": 2e8},
            "data_types": {"grad_accum_dtype": "fp32"}, "gradient_clipping": 1.0, "steps_per_print": 10})");
        const DeepSpeedImport done = applyDeepSpeedConfig(sc, config);
        const Parallelism& p = sc.run.parallelism;
        QCOMPARE(sc.run.microBatchSize, Count(4));
        QCOMPARE(sc.run.gradientAccumulationSteps, Count(4));
        QCOMPARE(p.zeroStage, 2);
        QVERIFY(p.offloadOptimizer && !p.offloadParams);
        QCOMPARE(p.reduceBucketSize.value_or(0), Count(200'000'000));
        QVERIFY(p.overlapComm.value_or(false));
        QVERIFY(sc.run.gradientDtype == DType::Fp32);
        QVERIFY(std::any_of(done.applied.begin(), done.applied.end(),
            [](const std::string& s) { return s == "zero_optimization.stage = 2 -> run.parallelism.zero_stage = 2"; }));
        QVERIFY(std::any_of(done.ignored.begin(), done.ignored.end(),
            [](const std::string& s) { return s.starts_with("zero_optimization.allgather_bucket_size:"); }));
        QVERIFY(estimate(sc).peak > 0);
        // 4 x 4 x 8 GPUs is 128; DeepSpeed asserts it, and so does the import.
        json wrong = config;
        wrong["train_batch_size"] = 64;
        QCOMPARE(refusedKey(wrong), std::string("train_batch_size"));
        // Neither bf16 nor fp16: DeepSpeed trains in fp32.
        Scenario fp32 = base();
        (void)applyDeepSpeedConfig(
            fp32, json::parse(R"({"train_micro_batch_size_per_gpu": 2, "zero_optimization": {"stage": 1}})"));
        QVERIFY(fp32.run.precision == Precision::Fp32);
    }

    /// runtime/config.py@e2dc3eeb _set_batch_related_parameters: what the config leaves out is derived as DeepSpeed
    /// derives it (8 data-parallel GPUs here), and what it does not say of ZeRO is DeepSpeed's default, not the
    /// scenario's.
    void deepSpeedDerivesAndDefaults()
    {
        Scenario sc = base();
        sc.run.parallelism.zeroStage = 3;
        sc.run.parallelism.offloadOptimizer = true;
        (void)applyDeepSpeedConfig(sc, json::parse(R"({"train_batch_size": 64, "bf16": {"enabled": true}})"));
        QCOMPARE(sc.run.microBatchSize, Count(8)); // 64 / 8 GPUs, accumulation 1
        QCOMPARE(sc.run.gradientAccumulationSteps, Count(1));
        QCOMPARE(sc.run.parallelism.zeroStage, 0);
        QVERIFY(!sc.run.parallelism.offloadOptimizer);
        Scenario both = base();
        (void)applyDeepSpeedConfig(
            both, json::parse(R"({"train_batch_size": 64, "train_micro_batch_size_per_gpu": 2})"));
        QCOMPARE(both.run.gradientAccumulationSteps, Count(4)); // 64 / 2 / 8
        Scenario micro = base();
        (void)applyDeepSpeedConfig(micro, json::parse(R"({"train_micro_batch_size_per_gpu": 3})"));
        QCOMPARE(micro.run.microBatchSize, Count(3));
        QCOMPARE(micro.run.gradientAccumulationSteps, Count(1));
        // Lion is FusedLion; a pure 16-bit scenario under "auto" becomes DeepSpeed's mixed mode (fp32 master).
        Scenario lion = base();
        lion.run.precision = Precision::Bf16;
        (void)applyDeepSpeedConfig(lion, json::parse(R"({"train_micro_batch_size_per_gpu": "auto",
            "bf16": {"enabled": "auto"}, "optimizer": {"type": "Lion"}})"));
        QVERIFY(lion.run.optimizer == Optimizer::Lion && lion.run.optimizerImpl == OptimizerImpl::Fused);
        QVERIFY(lion.run.precision == Precision::MixedBf16);
        // A Hugging Face run under Trainer + DeepSpeed keeps its model's loss (ForCausalLMLoss).
        Scenario hf = base();
        hf.run.framework = Framework::HfTransformers;
        (void)applyDeepSpeedConfig(hf, shipped("hf-trainer-zero2.json"));
        QVERIFY(hf.run.framework == Framework::Deepspeed && hf.run.loss == LossKind::HfShift);
        QCOMPARE(refusedKey(json::parse(R"({"zero_optimization": {"stage": 2}})")), std::string("train_batch_size"));
    }

    void refusedNamingTheKey_data()
    {
        QTest::addColumn<QString>("config");
        QTest::addColumn<QString>("key");
        QTest::newRow("nvme") << R"({"zero_optimization": {"stage": 3, "offload_param": {"device": "nvme"}}})"
                              << "zero_optimization.offload_param.device";
        QTest::newRow("zero++") << R"({"zero_optimization": {"stage": 3, "zero_quantized_weights": true}})"
                                << "zero_optimization.zero_quantized_weights";
        QTest::newRow("hpz") << R"({"zero_optimization": {"stage": 3, "zero_hpz_partition_size": 8}})"
                             << "zero_optimization.zero_hpz_partition_size";
        QTest::newRow("cpu checkpointing") << R"({"activation_checkpointing": {"cpu_checkpointing": true}})"
                                           << "activation_checkpointing.cpu_checkpointing";
        QTest::newRow("both types") << R"({"bf16": {"enabled": true}, "fp16": {"enabled": true}})"
                                    << "fp16.enabled";
        QTest::newRow("unknown") << R"({"zero_optimisation": {"stage": 3}})"
                                 << "zero_optimisation";
        QTest::newRow("stage 4") << R"({"zero_optimization": {"stage": 4}})"
                                 << "zero_optimization.stage";
        QTest::newRow("half a number") << R"({"train_micro_batch_size_per_gpu": 2.5})"
                                       << "train_micro_batch_size_per_gpu";
        QTest::newRow("compression") << R"({"compression_training": {"enabled": true}})"
                                     << "compression_training";
        QTest::newRow("graph harvesting") << R"({"train_micro_batch_size_per_gpu": 1, "graph_harvesting": true})"
                                          << "graph_harvesting";
        QTest::newRow("weight quantization")
            << R"({"train_micro_batch_size_per_gpu": 1, "weight_quantization": {"quantized_initialization": {}}})"
            << "weight_quantization";
        QTest::newRow("pipeline") << R"({"train_micro_batch_size_per_gpu": 1, "pipeline": {"stages": "auto"}})"
                                  << "pipeline";
        QTest::newRow("partial offload") << R"({"zero_optimization": {"stage": 3,
            "offload_optimizer": {"device": "cpu", "ratio": 0.3}}})"
                                         << "zero_optimization.offload_optimizer.ratio";
    }
    void refusedNamingTheKey()
    {
        QFETCH(QString, config);
        QFETCH(QString, key);
        json c = json::parse(config.toStdString());
        if (!c.contains("train_micro_batch_size_per_gpu") && !c.contains("train_batch_size"))
            c["train_micro_batch_size_per_gpu"] = 1; // DeepSpeed needs one of the two (deepSpeedDerivesAndDefaults)
        QCOMPARE(refusedKey(c), key.toStdString());
    }
};

QTEST_APPLESS_MAIN(TstDeepSpeedConfig)
#include "tst_deepspeed_config.moc"
