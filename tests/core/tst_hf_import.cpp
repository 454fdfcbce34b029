// SPDX-License-Identifier: MIT
// Hugging Face config.json import: every family gives its preset's exact count.
#include "vramlab/errors.h"
#include "vramlab/hf_import.h"
#include "vramlab/parameter_tensors.h"
#include "vramlab/presets.h"
#include "vramlab/scenario_io.h"

#include <QtTest>

using namespace vramlab;

namespace {
nlohmann::json load(const QString& name)
{
    const std::string path = std::string(VRAMLAB_TEST_DATA_DIR) + "/hf/" + name.toStdString();
    return parseJsonText(readTextFile(path), path);
}
} // namespace

class TestHfImport : public QObject {
    Q_OBJECT
private slots:
    void families_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QString>("modelType");
        QTest::newRow("llama") << "llama-3-8b.json" << "llama-3-8b" << "llama";
        QTest::newRow("mistral") << "mistral-7b.json" << "mistral-7b" << "mistral";
        QTest::newRow("mixtral") << "mixtral-8x7b.json" << "mixtral-8x7b" << "mixtral";
        QTest::newRow("qwen2") << "qwen2.5-7b.json" << "qwen2.5-7b" << "qwen2";
        QTest::newRow("gemma3") << "gemma-3-12b.json" << "gemma-3-12b" << "gemma3_text";
        QTest::newRow("gpt2") << "gpt2.json" << "gpt2" << "gpt2";
        QTest::newRow("phi3") << "phi-3-mini.json" << "phi-3-mini" << "phi3";
        QTest::newRow("deepseek_v3") << "deepseek-v3.json" << "deepseek-v3" << "deepseek_v3";
    }

    void families()
    {
        QFETCH(QString, file);
        QFETCH(QString, preset);
        QFETCH(QString, modelType);
        const HfImport imp = importHfConfig(load(file));
        QCOMPARE(QString::fromStdString(imp.modelType), modelType);
        const ParameterCount got = countParameters(imp.model);
        const ParameterCount want = countParameters(findPreset(preset.toStdString())->model);
        QCOMPARE(got.total, want.total);
        QCOMPARE(got.active, want.active);
        QVERIFY2(imp.warnings.empty(), imp.warnings.empty() ? "" : imp.warnings.front().c_str());
    }

    void gemmaPatternAndWindow()
    {
        const HfImport imp = importHfConfig(load("gemma-3-12b.json"));
        QCOMPARE(imp.model.slidingWindow, Count(1024));
        QCOMPARE(imp.model.globalLayers(), Count(8));
        QCOMPARE(imp.model.headDim, Count(256));
        QVERIFY(imp.model.qkNorm && imp.model.postNorms && imp.model.tiedEmbeddings);
    }

    void unknownKeysWarned()
    {
        nlohmann::json cfg = load("llama-3-8b.json");
        cfg["my_custom_thing"] = 3;
        const HfImport imp = importHfConfig(cfg);
        QCOMPARE(imp.warnings.size(), size_t(1));
        QVERIFY(imp.warnings.front().find("my_custom_thing") != std::string::npos);
    }

    void missingKeysNamed()
    {
        nlohmann::json cfg = load("llama-3-8b.json");
        cfg.erase("intermediate_size");
        try {
            importHfConfig(cfg);
            QFAIL("a config without intermediate_size was accepted");
        } catch (const InputError& e) {
            QCOMPARE(QString::fromStdString(e.keyPath()), QStringLiteral("intermediate_size"));
        }
        // Found by fuzzing (tests/fuzz/regressions/hf-name-not-a-string.json): a non-string
        // _name_or_path made json::value() throw type_error.
        cfg = load("qwen2.5-7b.json");
        cfg["_name_or_path"] = nlohmann::json::array({"Qwen2ForCausalLM"});
        QVERIFY_THROWS_EXCEPTION(InputError, importHfConfig(cfg));
        cfg = load("gemma-3-12b.json");
        cfg["text_config"].erase("model_type");
        cfg["model_type"] = 3;
        QVERIFY_THROWS_EXCEPTION(InputError, importHfConfig(cfg));
        cfg = load("gpt2.json");
        cfg["model_type"] = "bert";
        QVERIFY_THROWS_EXCEPTION(InputError, importHfConfig(cfg));
        cfg.erase("model_type");
        QVERIFY_THROWS_EXCEPTION(InputError, importHfConfig(cfg));
    }

    void scenarioRoundTrip()
    {
        const HfImport imp = importHfConfig(load("mistral-7b.json"));
        const Scenario sc = scenarioFromHf(imp, "imported");
        const Scenario back = readScenario(scenarioToJson(sc));
        QCOMPARE(countParameters(back.model).total, Count(7'241'732'096));
        QCOMPARE(back.model.slidingWindow, Count(4096));
        QCOMPARE(back.run.sequenceLength, Count(4096));
    }
};

QTEST_APPLESS_MAIN(TestHfImport)
#include "tst_hf_import.moc"
