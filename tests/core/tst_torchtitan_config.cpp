// SPDX-License-Identifier: MIT
// The TOML reader and the torchtitan config import (vramlab-cli import-torchtitan), on torchtitan's own
// train_configs at 9dec370ad26b (tests/data/torchtitan/SOURCES.md).
#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/gpu_catalog.h"
#include "vramlab/scenario_io.h"
#include "vramlab/toml_reader.h"
#include "vramlab/torchtitan_config.h"

#include <QtTest>

using namespace vramlab;
using nlohmann::json;

namespace {

const std::string kDir = VRAMLAB_SOURCE_DIR "/tests/data/torchtitan/";

json toml(const std::string& name)
{
    return parseTomlText(readTextFile(kDir + name, kMaxTomlFileBytes), name);
}

/// The error parseTomlText raises for `text`, or an empty one.
InputError tomlError(const std::string& text)
{
    try {
        (void)parseTomlText(text, "t.toml");
    } catch (const InputError& e) {
        return e;
    }
    return InputError("", "no error");
}

Scenario gpus(Count n)
{
    Scenario sc = readScenario(json { { "format", "vramlab.scenario" }, { "version", 1 }, { "name", "cluster" },
        { "model", { { "preset", "llama-2-7b" } } }, { "run", { { "gpu", "h100-sxm-80gb" } } } });
    sc.run.parallelism.gpus = n;
    return sc;
}

/// The key applyTorchtitanConfig refuses for `config` on `n` GPUs, or "".
std::string refusedKey(const json& config, Count n = 8)
{
    Scenario sc = gpus(n);
    try {
        (void)applyTorchtitanConfig(sc, config);
    } catch (const InputError& e) {
        return e.keyPath();
    }
    return {};
}

} // namespace

class TestTorchtitanConfig : public QObject {
    Q_OBJECT
private slots:
    void tomlValues()
    {
        // Ordinary literals: moc's tokenizer misreads quotes inside raw strings.
        const std::string text = "# a comment\n"
                                 "top = 1\n"
                                 "[a]\n"
                                 "s = \"x\\\"y\\u00e9\"  # trailing comment\n"
                                 "lit = 'C:\\path'\n"
                                 "f = 3e-4\n"
                                 "neg = -1_000\n"
                                 "flag = true\n"
                                 "arr = [\n"
                                 "  \"one\", 'two', # inside\n"
                                 "  [1, 2],\n"
                                 "]\n"
                                 "inline = { k = 1, n.m = \"v\" }\n"
                                 "[a.b]\n"
                                 "dotted.key = 0.5\n";
        const json t = parseTomlText(text, "t.toml");
        QCOMPARE(t["top"], json(1));
        QCOMPARE(t["a"]["s"].get<std::string>(), std::string("x\"y\xc3\xa9"));
        QCOMPARE(t["a"]["lit"].get<std::string>(), std::string("C:\\path"));
        QCOMPARE(t["a"]["f"].get<double>(), 3e-4);
        QCOMPARE(t["a"]["neg"], json(-1000));
        QCOMPARE(t["a"]["flag"], json(true));
        QCOMPARE(t["a"]["arr"], json::parse("[\"one\", \"two\", [1, 2]]"));
        QCOMPARE(t["a"]["inline"], json::parse("{\"k\": 1, \"n\": {\"m\": \"v\"}}"));
        QCOMPARE(t["a"]["b"]["dotted"]["key"].get<double>(), 0.5);
    }

    void tomlRefusesWhatItDoesNotRead_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("key");
        QTest::addColumn<QString>("expected");
        QTest::newRow("duplicate key") << "a = 1\na = 2\n"
                                       << "line 2"
                                       << "defined twice";
        QTest::newRow("duplicate table") << "[t]\n[t]\n"
                                         << "line 2"
                                         << "already defined";
        QTest::newRow("table over a value") << "[a]\nb = 1\n[a.b]\n"
                                            << "line 3"
                                            << "already a value";
        QTest::newRow("multi-line string") << "a = \"\"\"x\"\"\"\n"
                                           << "line 1"
                                           << "multi-line";
        QTest::newRow("date") << "d = 1979-05-27\n"
                              << "line 1"
                              << "dates";
        QTest::newRow("hex") << "h = 0xff\n"
                             << "line 1"
                             << "hexadecimal";
        QTest::newRow("array of tables") << "[[t]]\n"
                                         << "line 1"
                                         << "arrays of tables";
        QTest::newRow("unterminated") << "s = \"abc\n"
                                      << "line 1"
                                      << "closed";
        QTest::newRow("two values") << "a = 1 2\n"
                                    << "line 1"
                                    << "end of the line";
        QTest::newRow("bare word") << "a = yes\n"
                                   << "line 1"
                                   << "got \"yes\"";
        QTest::newRow("inf") << "a = inf\n"
                             << "line 1"
                             << "finite";
        QTest::newRow("too big") << "a = 99999999999999999999\n"
                                 << "line 1"
                                 << "64 bits";
        QTest::newRow("deep") << "a = " + QString(40, QLatin1Char('[')) + QString(40, QLatin1Char(']')) + "\n"
                              << "line 1"
                              << "32 deep";
        QTest::newRow("header over dotted keys") << "a.b = 1\n[a]\n"
                                                 << "line 2"
                                                 << "by dotted keys";
        QTest::newRow("header over a dotted sub-table") << "[a]\nb.c = 1\n[a.b]\n"
                                                        << "line 3"
                                                        << "by dotted keys";
        QTest::newRow("dotted keys into a header's table") << "[a.b]\n[a]\nb.d = 2\n"
                                                           << "line 3"
                                                           << "defined by a [header]";
        QTest::newRow("header over an inline table") << "a = { x = 1 }\n[a]\n"
                                                     << "line 2"
                                                     << "inline table";
        QTest::newRow("dotted keys into an inline table") << "a = { x = 1 }\na.y = 2\n"
                                                          << "line 2"
                                                          << "inline table";
        QTest::newRow("float without fraction digits") << "f = 1.\n"
                                                       << "line 1"
                                                       << "both sides";
        QTest::newRow("float with a leading zero") << "f = 01.5\n"
                                                   << "line 1"
                                                   << "leading zeros";
        QTest::newRow("deep dotted key") << "a" + QString(".a").repeated(40) + " = 1\n"
                                         << "line 1"
                                         << "32 dotted parts";
        QTest::newRow("control character in a comment") << QString::fromLatin1("a = 1 # \x01\n") << "line 1"
                                                        << "control characters";
        QTest::newRow("not utf-8") << QString::fromLatin1("a = \"\xff\"\n") << "(file)"
                                   << "UTF-8";
    }
    void tomlRefusesWhatItDoesNotRead()
    {
        QFETCH(QString, text);
        QFETCH(QString, key);
        QFETCH(QString, expected);
        const InputError e = tomlError(text.toLatin1().toStdString());
        QCOMPARE(QString::fromStdString(e.keyPath()), key);
        QVERIFY2(QString::fromStdString(e.expected()).contains(expected), e.what());
        QCOMPARE(QString::fromStdString(e.file()), QStringLiteral("t.toml"));
    }

    /// What TOML allows around those rules (Python's tomllib reads these): a quoted key with a dot is one key,
    /// a header may add sub-tables to a table made by dotted keys, and an implicit parent may get its own header.
    void tomlTablesAsTomlAllows()
    {
        const json t = parseTomlText("[\"a.b\"]\nx = 1\n[a.b]\ny = 2\n"
                                     "[fruit]\napple.color = \"red\"\n[fruit.apple.texture]\nsmooth = true\n"
                                     "[p.q.r]\n[p]\ns = 1\n",
            "t.toml");
        QCOMPARE(t["a.b"]["x"], json(1));
        QCOMPARE(t["a"]["b"]["y"], json(2));
        QCOMPARE(t["fruit"]["apple"]["texture"]["smooth"], json(true));
        QCOMPARE(t["p"]["s"], json(1));
    }

    void tomlSizeLimit()
    {
        const std::string big(kMaxTomlFileBytes + 1, '#');
        QVERIFY(QString::fromStdString(tomlError(big).expected()).contains("1 MiB"));
    }

    /// train_configs/llama3_8b.toml@9dec370 on 8 GPUs: FSDP over all 8 (dp_shard -1), bf16 parameters, every
    /// block but the last resharded, op-level selective checkpointing, local batch 1 of 8192 tokens.
    void llama3_8b()
    {
        Scenario sc = gpus(8);
        const ConfigImport done = applyTorchtitanConfig(sc, toml("llama3_8b.toml"));
        QCOMPARE(QString::fromStdString(sc.model.preset), QStringLiteral("llama-3-8b"));
        const RunSpec& r = sc.run;
        QVERIFY(r.framework == Framework::Torchtitan);
        QVERIFY(r.precision == Precision::MixedBf16);
        QCOMPARE(r.parallelism.gpus, Count(8));
        QCOMPARE(r.parallelism.zeroStage, 3);
        QVERIFY(r.parallelism.fsdp2());
        QVERIFY(r.keepLastBlockGathered && !r.keepAllGathered);
        QVERIFY(r.checkpointing.kind == Checkpointing::Kind::SelectiveOp);
        QCOMPARE(r.sequenceLength, Count(8192));
        QCOMPARE(r.microBatchSize, Count(1));
        QCOMPARE(r.gradientAccumulationSteps, Count(1));
        QVERIFY(r.optimizer == Optimizer::AdamW && r.optimizerImpl == OptimizerImpl::Foreach);
        QVERIFY(!r.compile && !r.fp8);
        QCOMPARE(sc.run.gpu->name, gpus(1).run.gpu->name); // the scenario's GPU stays
        QVERIFY(std::any_of(done.ignored.begin(), done.ignored.end(),
            [](const std::string& l) { return l.starts_with("optimizer.lr: "); }));
        (void)estimate(sc); // a run the estimator takes
        // The same config on one GPU: no FSDP, and train.py@9dec370 runs no autocast, so the model is fp32.
        Scenario one = gpus(1);
        applyTorchtitanConfig(one, toml("llama3_8b.toml"));
        QCOMPARE(one.run.parallelism.zeroStage, 0);
        QVERIFY(one.run.precision == Precision::Fp32);
    }

    /// train_configs/llama3_405b.toml@9dec370 with the 405B benchmark's overrides (local batch 32, PP 8,
    /// Interleaved1F1B; benchmarks/llama3_h100_202412_torchtitan.md@820504e2 Table 5) on 512 GPUs is the published
    /// case's scenario: the same estimate to the byte.
    void llama3_405bBenchmark()
    {
        json c = toml("llama3_405b.toml");
        c["training"]["batch_size"] = 32;
        c["experimental"]["pipeline_parallel_degree"] = 8;
        c["experimental"]["pipeline_parallel_schedule"] = "Interleaved1F1B";
        Scenario sc = gpus(512);
        applyTorchtitanConfig(sc, c);
        const json caseFile = parseJsonText(
            readTextFile(VRAMLAB_SOURCE_DIR "/tests/data/published/training/"
                                            "torchtitan-llama3.1-405b-fsdp8-tp8-pp8-interleaved-1f1b-full-ac-"
                                            "compile-float8-asynctp.json"),
            "case");
        const Scenario published = readScenario(caseFile.at("scenario"));
        QCOMPARE(sc.run.parallelism.fsdpShardGroup, Count(0));
        QCOMPARE(sc.run.microBatchSize, published.run.microBatchSize);
        QCOMPARE(sc.run.gradientAccumulationSteps, published.run.gradientAccumulationSteps);
        QVERIFY(sc.run.loss == published.run.loss);
        QVERIFY(sc.run.parallelism.asyncTp && sc.run.parallelism.fp8AllGather && sc.run.keepAllGathered);
        QCOMPARE(estimate(sc).peak, estimate(published).peak);
    }

    /// What the config leaves out is torchtitan's default, not the scenario's: a scenario that was interleaved,
    /// with Hugging Face's loss, async TP and bf16 gradients comes out as llama3_8b.toml says.
    void defaultsNotTheScenarios()
    {
        Scenario sc = gpus(8);
        sc.run.loss = LossKind::HfShift;
        sc.run.parallelism.pipelineSchedule = PipelineSchedule::Interleaved;
        sc.run.parallelism.virtualStages = 2;
        sc.run.parallelism.asyncTp = true;
        sc.run.gradientDtype = DType::Bf16;
        applyTorchtitanConfig(sc, toml("llama3_8b.toml"));
        QVERIFY(!sc.run.loss && !sc.run.gradientDtype && !sc.run.parallelism.asyncTp);
        QVERIFY(sc.run.parallelism.pipelineSchedule == PipelineSchedule::OneFOneB);
        QCOMPARE(sc.run.parallelism.virtualStages, Count(1));
        QCOMPARE(sc.run.gpu->name, std::string("h100-sxm-80gb"));
        // disable_loss_parallel under TP: torchtitan's own cross_entropy(pred.float()).
        json c = toml("llama3_8b.toml");
        c["training"]["tensor_parallel_degree"] = 2;
        c["training"]["disable_loss_parallel"] = true;
        applyTorchtitanConfig(sc, c);
        QVERIFY(!sc.run.loss);
    }

    /// float8.py@9dec370 Float8Handler: no conversion before SM89, and FSDP's float8 all-gather only with dp_shard
    /// above 1: llama3_405b.toml on 8 GPUs (TP 8, no FSDP) runs float8 without it; on A100s it runs bf16.
    void float8AsTorchtitanDecides()
    {
        Scenario sc = gpus(8);
        applyTorchtitanConfig(sc, toml("llama3_405b.toml"));
        QVERIFY(sc.run.fp8 && !sc.run.parallelism.fp8AllGather);
        QCOMPARE(sc.run.parallelism.zeroStage, 0);
        QVERIFY(sc.run.parallelism.asyncTp);
        Scenario a100 = gpus(64);
        a100.run.gpu = findGpu("a100-80gb");
        const ConfigImport done = applyTorchtitanConfig(a100, toml("llama3_405b.toml"));
        QVERIFY(!a100.run.fp8 && !a100.run.parallelism.fp8AllGather);
        QVERIFY(std::any_of(done.applied.begin(), done.applied.end(),
            [](const std::string& l) { return l.find("before SM89") != std::string::npos; }));
        // Async TP is read only under TP.
        json noTp = toml("llama3_8b.toml");
        noTp["experimental"]["enable_async_tensor_parallel"] = true;
        applyTorchtitanConfig(sc, noTp);
        QVERIFY(!sc.run.parallelism.asyncTp);
    }

    void layerCheckpointingEveryKthBlock()
    {
        json c = toml("llama3_8b.toml");
        c["activation_checkpoint"]["selective_ac_option"] = "3"; // blocks 3, 6, ..., 30: floor(32 / 3)
        Scenario sc = gpus(8);
        applyTorchtitanConfig(sc, c);
        QVERIFY(sc.run.checkpointing.kind == Checkpointing::Kind::Layers);
        QCOMPARE(sc.run.checkpointing.every, Count(10));
        c["activation_checkpoint"]["selective_ac_option"] = "1";
        applyTorchtitanConfig(sc, c);
        QVERIFY(sc.run.checkpointing.kind == Checkpointing::Kind::Full);
    }

    void refusals()
    {
        QCOMPARE(refusedKey(toml("debug_model.toml")), std::string("model.flavor"));
        json c = toml("llama3_8b.toml");
        json offload = c;
        offload["training"]["enable_cpu_offload"] = true;
        QCOMPARE(refusedKey(offload), std::string("training.enable_cpu_offload"));
        json unknown = c;
        unknown["training"]["gradient_accumulation_steps"] = 4; // a later version's key
        QCOMPARE(refusedKey(unknown), std::string("training.gradient_accumulation_steps"));
        json section = c;
        section["parallelism"] = json::object(); // a later version's table
        QCOMPARE(refusedKey(section), std::string("parallelism"));
        json dims = c;
        dims["training"]["data_parallel_shard_degree"] = 3;
        QCOMPARE(refusedKey(dims), std::string("training.data_parallel_shard_degree"));
        json gpipe = c;
        gpipe["experimental"]["pipeline_parallel_degree"] = 2;
        gpipe["experimental"]["pipeline_parallel_schedule"] = "GPipe";
        QCOMPARE(refusedKey(gpipe), std::string("experimental.pipeline_parallel_schedule"));
        json split = c;
        split["experimental"]["pipeline_parallel_split_points"] = json::array({ "layers.4" });
        QCOMPARE(refusedKey(split), std::string("experimental.pipeline_parallel_split_points"));
        json kth = c;
        kth["experimental"]["pipeline_parallel_degree"] = 2;
        kth["training"]["batch_size"] = 2; // one sequence per pipeline micro-batch
        kth["activation_checkpoint"]["selective_ac_option"] = "2";
        QCOMPARE(refusedKey(kth), std::string("activation_checkpoint.selective_ac_option"));
        json ddp = c;
        ddp["training"]["data_parallel_replicate_degree"] = 2;
        ddp["training"]["data_parallel_shard_degree"] = 1;
        ddp["training"]["tensor_parallel_degree"] = 4;
        QCOMPARE(refusedKey(ddp), std::string("training.data_parallel_replicate_degree"));
        json plus = c;
        plus["activation_checkpoint"]["mode"] = "selective";
        plus["activation_checkpoint"]["selective_ac_option"] = "+2"; // torchtitan's isdigit() refuses it
        QCOMPARE(refusedKey(plus), std::string("activation_checkpoint.selective_ac_option"));
        json fused = c;
        fused["model"]["norm_type"] = "fused_rmsnorm";
        QCOMPARE(refusedKey(fused), std::string("model.norm_type"));
        json wrongType = c;
        wrongType["training"]["compile"] = "yes";
        QCOMPARE(refusedKey(wrongType), std::string("training.compile"));
        // A refusal leaves the scenario as it was.
        Scenario sc = gpus(8);
        const Scenario before = sc;
        QVERIFY_THROWS_EXCEPTION(InputError, applyTorchtitanConfig(sc, offload));
        QCOMPARE(sc.model.preset, before.model.preset);
        QVERIFY(sc.run.framework == before.run.framework);
    }
};

QTEST_APPLESS_MAIN(TestTorchtitanConfig)
#include "tst_torchtitan_config.moc"
