// SPDX-License-Identifier: MIT
// Reading and writing scenario files: defaults, presets, round trip, and every kind of bad input.
#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/gpu_catalog.h"
#include "vramlab/presets.h"
#include "vramlab/scenario_fields.h"
#include "vramlab/scenario_io.h"
#include "vramlab/scenario_name.h"

#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace vramlab;
using nlohmann::json;

namespace {

json base()
{
    return json::parse(R"({"format": "vramlab.scenario", "version": 1, "name": "t",
        "model": {"preset": "llama-3-8b"},
        "run": {"mode": "training", "sequence_length": 4096, "parallelism": {"gpus": 8, "zero_stage": 3}}})");
}

/// Applies `patch` at a JSON pointer and returns the InputError's key path ("" if accepted).
QString errorKey(const std::string& pointer, const json& value)
{
    json doc = base();
    doc[json::json_pointer(pointer)] = value;
    try {
        estimate(readScenario(doc));
        return {};
    } catch (const InputError& e) {
        return QString::fromStdString(e.keyPath());
    }
}

void writeText(const QString& path, const std::string& text)
{
    std::ofstream(path.toStdString(), std::ios::binary) << text;
}

} // namespace

class TestScenarioIo : public QObject {
    Q_OBJECT
private slots:
    void presetWithOverrides()
    {
        json doc = base();
        doc["model"]["num_layers"] = 16;
        const Scenario sc = readScenario(doc);
        QCOMPARE(sc.model.numLayers, Count(16));
        QCOMPARE(sc.model.numKvHeads, Count(8));
        QCOMPARE(sc.model.headDim, Count(128));
        QCOMPARE(sc.run.parallelism.zeroStage, 3);
        QVERIFY(sc.run.precision == Precision::MixedBf16); // the default
    }

    void specExampleReads()
    {
        // The example document of spec/scenario-v1.md.
        const json doc = json::parse(R"({"format": "vramlab.scenario", "version": 1,
          "name": "Llama-3-8B full fine-tune on 8x H100",
          "model": {"preset": "llama-3-8b", "vocab_size": 128256, "hidden_size": 4096, "num_layers": 32, "num_heads": 32,
            "num_kv_heads": 8, "head_dim": 128, "ffn_hidden_size": 14336, "mlp": "swiglu", "norm": "rmsnorm",
            "position": "rope", "max_position_embeddings": 8192, "bias": false, "tied_embeddings": false, "dropout": 0.0},
          "run": {"mode": "training", "sequence_length": 4096, "micro_batch_size": 1, "gradient_accumulation_steps": 8,
            "precision": "mixed-bf16", "optimizer": "adamw", "checkpointing": "none", "attention": "flash",
            "parallelism": {"gpus": 8, "zero_stage": 3, "tensor_parallel": 1, "pipeline_parallel": 1,
              "sequence_parallel": false, "offload_optimizer": false, "offload_params": false},
            "finetune": {"method": "full"}, "gpu": "h100-sxm-80gb"}})");
        const Scenario sc = readScenario(doc);
        QVERIFY(sc.warnings.empty());
        const Report r = estimate(sc);
        QCOMPARE(r.params.total, Count(8'030'261'248));
        QVERIFY(r.fits);
    }

    void unknownKeysWarnAndSurvive()
    {
        json doc = base();
        doc["model"]["my_note"] = "keep me";
        doc["review"] = { { "owner", "ana" } };
        const Scenario sc = readScenario(doc);
        QCOMPARE(sc.warnings.size(), size_t(2));
        const json out = scenarioToJson(sc);
        QCOMPARE(QString::fromStdString(out["model"]["my_note"].get<std::string>()), QStringLiteral("keep me"));
        QCOMPARE(QString::fromStdString(out["review"]["owner"].get<std::string>()), QStringLiteral("ana"));
    }

    void roundTripIsExact()
    {
        json doc = base();
        doc["run"]["checkpointing"] = { { "every", 4 } };
        doc["run"]["gpu"] = { { "name", "my card" }, { "memory_gib", 12 }, { "bf16_tflops", 100 } };
        doc["run"]["finetune"] = { { "method", "qlora" }, { "rank", 64 }, { "targets", { "q", "v" } } };
        const Scenario a = readScenario(doc);
        const Scenario b = readScenario(scenarioToJson(a));
        QCOMPARE(scenarioToJson(a).dump(), scenarioToJson(b).dump());
        QCOMPARE(b.run.checkpointing.every, Count(4));
        QCOMPARE(b.run.gpu->memoryBytes, 12 * kGiB);
        QCOMPARE(b.run.finetune.targets.size(), size_t(2));
        QCOMPARE(estimate(a).total, estimate(b).total);
    }

    void editedCatalogGpuKeepsEveryFigure_data()
    {
        QTest::addColumn<QString>("figure");
        for (const char* f : { "fp32_tflops", "tf32_tflops", "bf16_tflops", "fp16_tflops", "fp8_tflops", "int8_tops",
                 "memory_bandwidth_gbs", "interconnect_gbs", "host_link_gbs" })
            QTest::newRow(f) << QString::fromLatin1(f);
    }
    void editedCatalogGpuKeepsEveryFigure()
    {
        // A catalog GPU with any figure changed (the window's GPU details) is written whole, not by name.
        QFETCH(QString, figure);
        json doc = base();
        doc["run"]["gpu"]
            = { { "base", "h100-sxm-80gb" }, { "name", "h100-sxm-80gb" }, { figure.toStdString(), 12.5 } };
        const json written = scenarioToJson(readScenario(doc));
        QVERIFY2(written["run"]["gpu"].is_object(), written["run"]["gpu"].dump().c_str());
        QCOMPARE(written["run"]["gpu"][figure.toStdString()].get<double>(), 12.5);
        doc["run"]["gpu"] = "h100-sxm-80gb";
        QCOMPARE(scenarioToJson(readScenario(doc))["run"]["gpu"], json("h100-sxm-80gb"));
    }

    void reshardTrueIsEveryBlock()
    {
        // true read over "all but last block" (the window going back to the default) resets it.
        json doc = base();
        doc["run"]["parallelism"]["reshard_after_forward"] = "all but last block";
        Scenario s = readScenario(doc);
        QVERIFY(s.run.keepLastBlockGathered);
        const ScenarioField& f = *findField("run.parallelism.reshard_after_forward");
        std::vector<std::string> warnings;
        f.read(s, json(true), std::string(f.key), warnings);
        QVERIFY(!s.run.keepLastBlockGathered);
        QVERIFY(fieldJson(f, s).is_null());
    }

    void emptyTargetsAreRefused()
    {
        // A file cannot say [] (the reader wants a name); a window's empty list is refused by name too.
        QCOMPARE(errorKey("/run/finetune", json::parse(R"({"method": "lora", "targets": []})")),
            QStringLiteral("run.finetune.targets"));
        Scenario s = readScenario(base());
        s.run.finetune.method = FinetuneMethod::Lora;
        s.run.finetune.targets.clear();
        try {
            estimate(s);
            QFAIL("an empty list of targets was estimated");
        } catch (const InputError& e) {
            QCOMPARE(QString::fromStdString(e.keyPath()), QStringLiteral("run.finetune.targets"));
        }
    }

    void badValues_data()
    {
        QTest::addColumn<QString>("pointer");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("key");
        // wrong types
        QTest::newRow("string for int") << "/model/hidden_size"
                                        << R"("4096")"
                                        << "model.hidden_size";
        QTest::newRow("bool for int") << "/run/micro_batch_size"
                                      << "true"
                                      << "run.micro_batch_size";
        QTest::newRow("int for bool") << "/model/bias"
                                      << "1"
                                      << "model.bias";
        QTest::newRow("int for string") << "/run/precision"
                                        << "16"
                                        << "run.precision";
        QTest::newRow("array for object") << "/run/parallelism"
                                          << "[]"
                                          << "run.parallelism";
        QTest::newRow("object for model") << "/model"
                                          << "3"
                                          << "model";
        // ranges: negative, zero, huge, non-integer
        QTest::newRow("negative") << "/run/sequence_length"
                                  << "-5"
                                  << "run.sequence_length";
        QTest::newRow("zero layers") << "/model/num_layers"
                                     << "0"
                                     << "model.num_layers";
        QTest::newRow("huge hidden") << "/model/hidden_size"
                                     << "1e12"
                                     << "model.hidden_size";
        QTest::newRow("huge unsigned") << "/model/vocab_size"
                                       << "18446744073709551615"
                                       << "model.vocab_size";
        QTest::newRow("non-integer") << "/run/micro_batch_size"
                                     << "1.5"
                                     << "run.micro_batch_size";
        QTest::newRow("dropout 1") << "/model/dropout"
                                   << "1.0"
                                   << "model.dropout";
        QTest::newRow("mfu 0") << "/run/mfu"
                               << "0"
                               << "run.mfu";
        // enums
        QTest::newRow("precision") << "/run/precision"
                                   << R"("fp64")"
                                   << "run.precision";
        QTest::newRow("optimizer") << "/run/optimizer"
                                   << R"("adagrad")"
                                   << "run.optimizer";
        QTest::newRow("mlp") << "/model/mlp"
                             << R"("relu")"
                             << "model.mlp";
        QTest::newRow("checkpointing") << "/run/checkpointing"
                                       << R"("sometimes")"
                                       << "run.checkpointing";
        QTest::newRow("checkpointing every 0") << "/run/checkpointing"
                                               << R"({"every": 0})"
                                               << "run.checkpointing.every";
        QTest::newRow("zero stage 5") << "/run/parallelism/zero_stage"
                                      << "5"
                                      << "run.parallelism.zero_stage";
        QTest::newRow("preset") << "/model/preset"
                                << R"("llama-9")"
                                << "model.preset";
        QTest::newRow("gpu") << "/run/gpu"
                             << R"("h900")"
                             << "run.gpu";
        QTest::newRow("gpu no memory") << "/run/gpu"
                                       << R"({"name": "x"})"
                                       << "run.gpu.memory_gib";
        QTest::newRow("kv dtype") << "/run/kv_cache_dtype"
                                  << R"("nf4")"
                                  << "run.kv_cache_dtype";
        QTest::newRow("lora target") << "/run/finetune"
                                     << R"({"method": "lora", "targets": ["q", "qkv"]})"
                                     << "run.finetune.targets[1]";
        // cross-key consistency
        QTest::newRow("kv heads") << "/model/num_kv_heads"
                                  << "5"
                                  << "model.num_kv_heads";
        QTest::newRow("heads vs hidden") << "/model/num_heads"
                                         << "30"
                                         << "model.num_heads";
        QTest::newRow("gpus vs tp") << "/run/parallelism/tensor_parallel"
                                    << "3"
                                    << "run.parallelism.gpus";
        QTest::newRow("tp vs heads") << "/run/parallelism"
                                     << R"({"gpus": 5, "tensor_parallel": 5})"
                                     << "run.parallelism.tensor_parallel";
        QTest::newRow("pp vs layers") << "/run/parallelism"
                                      << R"({"gpus": 64, "pipeline_parallel": 64})"
                                      << "run.parallelism.pipeline_parallel";
        QTest::newRow("offload params") << "/run/parallelism"
                                        << R"({"gpus": 8, "offload_params": true})"
                                        << "run.parallelism.offload_params";
        QTest::newRow("format") << "/format"
                                << R"("something.else")"
                                << "format";
        QTest::newRow("version") << "/version"
                                 << "2"
                                 << "version";
    }
    void badValues()
    {
        QFETCH(QString, pointer);
        QFETCH(QString, value);
        QFETCH(QString, key);
        QCOMPARE(errorKey(pointer.toStdString(), json::parse(value.toStdString())), key);
    }

    void missingRequired()
    {
        json doc = { { "format", "vramlab.scenario" }, { "version", 1 },
            { "model", { { "hidden_size", 64 }, { "num_layers", 2 } } } };
        try {
            readScenario(doc);
            QFAIL("a model without vocab_size was accepted");
        } catch (const InputError& e) {
            QCOMPARE(QString::fromStdString(e.keyPath()), QStringLiteral("model.vocab_size"));
            QVERIFY(std::string(e.what()).find("required") != std::string::npos);
        }
        QVERIFY_THROWS_EXCEPTION(InputError, readScenario(json { { "run", json::object() } }));
    }

    void brokenFilesNameTheFile()
    {
        QTemporaryDir dir;
        const QString broken = dir.filePath("broken.json");
        writeText(broken, "{\n  \"model\": {\"preset\": \"gpt2\",,}\n}\n");
        try {
            loadScenarioFile(broken.toStdString());
            QFAIL("broken JSON accepted");
        } catch (const InputError& e) {
            const std::string msg = e.what();
            QVERIFY(msg.find(broken.toStdString()) == 0);
            QVERIFY2(msg.find("line 2") != std::string::npos, msg.c_str());
        }
        QVERIFY_THROWS_EXCEPTION(InputError, loadScenarioFile(dir.filePath("missing.json").toStdString()));
        const QString deep = dir.filePath("deep.json");
        writeText(deep, std::string(100, '[') + std::string(100, ']'));
        QVERIFY_THROWS_EXCEPTION(InputError, loadScenarioFile(deep.toStdString()));
        const QString big = dir.filePath("big.json");
        writeText(big, "\"" + std::string(kMaxScenarioFileBytes + 10, 'x') + "\"");
        QVERIFY_THROWS_EXCEPTION(InputError, loadScenarioFile(big.toStdString()));
        // Found by fuzzing (tests/fuzz/regressions/number-out-of-range.json): 1e999 threw an
        // exception no caller expected.
        const QString huge = dir.filePath("huge.json");
        writeText(huge, R"({"model": {"preset": "gpt2", "dropout": 1e999}})");
        QVERIFY_THROWS_EXCEPTION(InputError, loadScenarioFile(huge.toStdString()));
        const QString nan = dir.filePath("nan.json");
        writeText(nan, R"({"model": {"preset": "gpt2", "dropout": NaN}})");
        QVERIFY_THROWS_EXCEPTION(InputError, loadScenarioFile(nan.toStdString()));
    }

    void atomicSave()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("s.json");
        const Scenario sc = readScenario(base());
        saveScenarioFile(path.toStdString(), sc);
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files).size(), 1); // no temporary left behind
        const Scenario back = loadScenarioFile(path.toStdString());
        QCOMPARE(back.model.numLayers, Count(32));
        // An unwritable target leaves the old file untouched.
        QVERIFY_THROWS_EXCEPTION(InputError, saveScenarioFile(dir.filePath("no/such/dir/s.json").toStdString(), sc));
        QCOMPARE(loadScenarioFile(path.toStdString()).model.numLayers, Count(32));
    }

    // Issue 17: the writer's policy, shared by saves, imports, the autosave and exports.
    void saveThroughASymbolicLink()
    {
        QTemporaryDir dir;
        const Scenario sc = readScenario(base());
        const QString target = dir.filePath("real.json"), link = dir.filePath("link.json");
        writeText(target, "{}");
        QVERIFY(QFile::link(target, link));
        saveScenarioFile(link.toStdString(), sc);
        QVERIFY(QFileInfo(link).isSymLink()); // the link stays a link...
        QCOMPARE(loadScenarioFile(target.toStdString()).model.numLayers, Count(32)); // ...its target gets the content
        // A dangling link: the file it names is created.
        const QString dangling = dir.filePath("dangling.json");
        QVERIFY(QFile::link(QStringLiteral("made.json"), dangling)); // relative to the link's folder
        saveScenarioFile(dangling.toStdString(), sc);
        QVERIFY(QFileInfo(dangling).isSymLink());
        QCOMPARE(loadScenarioFile(dir.filePath("made.json").toStdString()).model.numLayers, Count(32));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::System).size(), 4); // no temporary left
    }

    void readOnlyFileIsRefusedAndUntouched()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("ro.json");
        writeText(path, "old");
        QVERIFY(QFile::setPermissions(
            path, QFile::ReadOwner | QFile::ReadGroup | QFile::ReadOther)); // 0444, refused even for root
        try {
            saveScenarioFile(path.toStdString(), readScenario(base()));
            QFAIL("a read-only file was replaced");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find(path.toStdString() + ": is read-only") == 0, e.what());
        }
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), QByteArray("old"));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files).size(), 1);
    }

    void specialFilesAreRefused_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::newRow("fifo") << "fifo";
        QTest::newRow("folder") << "folder";
        QTest::newRow("device") << "device";
    }
    void specialFilesAreRefused()
    {
        QFETCH(QString, kind);
        QTemporaryDir dir;
        std::string path = dir.filePath("special").toStdString();
        std::string expect;
        if (kind == "fifo") {
            QCOMPARE(::mkfifo(path.c_str(), 0666), 0); // never opened: opening a FIFO would block
            expect = "is a FIFO";
        } else if (kind == "folder") {
            QVERIFY(QDir().mkdir(QString::fromStdString(path)));
            expect = "is a folder";
        } else {
            const std::string link = path;
            QVERIFY(QFile::link("/dev/null", QString::fromStdString(link))); // through a link, as a user might
            expect = "is a device";
        }
        try {
            writeFileAtomically(path, "text");
            QFAIL("a special file was replaced");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find(expect) != std::string::npos, e.what());
        }
        QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::System | QDir::NoDotAndDotDot).size(), 1);
    }

    void staleTemporariesAreRemoved()
    {
        QTemporaryDir dir;
        const pid_t dead = ::fork(); // a pid that surely ran and is gone
        if (dead == 0)
            ::_exit(0);
        QVERIFY(dead > 0);
        ::waitpid(dead, nullptr, 0);
        const QString path = dir.filePath("s.json");
        const QString stale = path + ".tmp-" + QString::number(dead);
        const QString alive = path + ".tmp-1"; // pid 1 always runs: not ours to delete
        const QString other = dir.filePath("other.json.tmp-") + QString::number(dead);
        for (const QString& f : { stale, alive, other })
            writeText(f, "half");
        saveScenarioFile(path.toStdString(), readScenario(base()));
        QVERIFY(!QFile::exists(stale));
        QVERIFY(QFile::exists(alive));
        QVERIFY(QFile::exists(other)); // another file's leftovers wait for its own next save
        QVERIFY(QFile::exists(path));
    }

    void replacedFileKeepsItsPermissions()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("s.json");
        writeText(path, "{}");
        QVERIFY(QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner));
        saveScenarioFile(path.toStdString(), readScenario(base()));
        struct stat st { };
        QCOMPARE(::stat(path.toStdString().c_str(), &st), 0);
        QCOMPARE(st.st_mode & 07777, mode_t(0600));
    }

    // Issue 17: a valid 3.3 MB scenario was saved 2-space indented (16.5 MB), over the
    // reader's limit: what we save we could not open.
    void largeScenarioSavesAndOpensAgain()
    {
        QTemporaryDir dir;
        json doc = base();
        json payload = json::array();
        for (int i = 0; i < 100'000; ++i)
            payload.push_back({ { "k", { 1, 2, { 3, { 4, { 5 } } } } }, { "s", "x" } });
        doc["payload"] = payload; // an unknown key: kept when saved
        const std::string compact = doc.dump();
        QVERIFY(compact.size() > 3'000'000 && compact.size() < kMaxScenarioFileBytes);
        QVERIFY(doc.dump(2).size() > kMaxScenarioFileBytes); // indented, it would not open
        const QString path = dir.filePath("big.json");
        writeText(path, compact);
        const Scenario sc = loadScenarioFile(path.toStdString());
        saveScenarioFile(path.toStdString(), sc);
        QVERIFY(QFileInfo(path).size() <= qint64(kMaxScenarioFileBytes));
        const Scenario back = loadScenarioFile(path.toStdString());
        QVERIFY(back.document["payload"] == payload);
        // Small scenarios stay indented for people.
        const QString small = dir.filePath("small.json");
        saveScenarioFile(small.toStdString(), readScenario(base()));
        QFile f(small);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY(f.readAll().contains("\n  \"model\": {"));
    }

    void scenarioTooLargeEvenCompactIsNotSaved()
    {
        QTemporaryDir dir;
        json doc = base();
        doc["payload"] = std::string(kMaxScenarioFileBytes, 'x');
        const QString path = dir.filePath("s.json");
        try {
            saveScenarioFile(path.toStdString(), readScenario(doc));
            QFAIL("saved a file that could not be opened again");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("could not be opened again") != std::string::npos, e.what());
        }
        QVERIFY(!QFile::exists(path));
    }

    void emptyFileName()
    {
        try {
            writeFileAtomically("", "x");
            QFAIL("wrote to an empty name");
        } catch (const InputError& e) {
            QCOMPARE(std::string(e.what()), std::string("the file name is empty"));
        }
        QVERIFY_THROWS_EXCEPTION(InputError, loadScenarioFile(""));
    }

    // Issue 16, scenario identity: the name says what the settings are and follows them
    // until the user renames it.
    void namesFollowTheSettings()
    {
        Scenario sc;
        sc.model = findPreset("llama-3-8b")->model;
        sc.run.sequenceLength = 4096;
        sc.run.parallelism.gpus = 8;
        sc.run.gpu = findGpu("h100-sxm-80gb");
        QCOMPARE(describeScenario(sc), std::string("Llama 3 8B full fine-tune, 4,096 tokens, on 8x H100 SXM5 80GB"));
        sc.name = describeScenario(sc);
        Scenario qlora = sc;
        qlora.run.finetune.method = FinetuneMethod::Qlora;
        qlora.run.sequenceLength = 8192;
        qlora.run.parallelism.gpus = 1;
        qlora.run.gpu = findGpu("rtx-4090-24gb");
        followSettings(sc, qlora);
        QCOMPARE(qlora.name, std::string("Llama 3 8B QLoRA r16, 8,192 tokens, on 1x GeForce RTX 4090 24GB"));
        // A name the user chose stays.
        Scenario mine = qlora;
        mine.name = "qlora-4090";
        Scenario longer = mine;
        longer.run.sequenceLength = 16384;
        followSettings(mine, longer);
        QCOMPARE(longer.name, std::string("qlora-4090"));
        // An import without _name_or_path is named after its model type and size.
        sc.model.name = "deepseek_v3";
        QVERIFY(describeScenario(sc).starts_with("deepseek_v3 ("));
        sc.model.name = "Qwen/Qwen1.5-MoE-A2.7B";
        QVERIFY(describeScenario(sc).starts_with("Qwen1.5-MoE-A2.7B full fine-tune"));
    }
};

QTEST_APPLESS_MAIN(TestScenarioIo)
#include "tst_scenario_io.moc"
