// SPDX-License-Identifier: MIT
// The scenario field table: every key round-trips through the table, the writer and the
// reader; the reader and the writer know exactly the table's keys.
#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/fit.h"
#include "vramlab/lesson.h"
#include "vramlab/presets.h"
#include "vramlab/scenario_fields.h"
#include "vramlab/scenario_io.h"
#include "vramlab/sweep.h"

#include <QtTest>

#include <algorithm>
#include <set>

using namespace vramlab;
using nlohmann::json;

namespace {

/// A scenario in which every field is written: MoE with a gated shared expert, MLA, a
/// parallel block, learned positions, QLoRA, FSDP2, every optional key set.
Scenario richScenario()
{
    Scenario sc;
    sc.name = "every key";
    sc.model = findPreset("llama-3-8b")->model;
    sc.model.maxPositionEmbeddings = 8192;
    sc.model.parallelResidual = true;
    sc.model.moe.numExperts = 8;
    sc.model.moe.topK = 2;
    sc.model.moe.sharedExperts = 1;
    sc.model.moe.sharedExpertFfnHiddenSize = 1024;
    sc.model.moe.sharedExpertGate = true;
    sc.model.moe.expertBias = true;
    sc.model.attentionSinks = true;
    sc.model.clampedSwiGlu = true; // written only when set; training it is refused by validateRun, not the reader
    sc.model.attentionBias = true;
    sc.model.lmHeadBias = true;
    sc.model.moe.sparseMixer = true; // as clamped_swiglu
    sc.model.moe.layerInterval = 2; // written only when not 1; with the hybrid blocks below refused by validateRun
    sc.model.moe.everyExpertEveryToken = true; // written only when set (Llama 4)
    sc.model.chunkedLocalAttention = true; // written only when set (Llama 4)
    sc.model.mrope = true; // written only when set (Qwen2.5-VL, Qwen3.5)
    sc.model.vision = { 1152, 4304, 27, 16, 896, 14, 3 }; // Gemma 3's SigLIP tower
    // Gated DeltaNet mixers in 4 of the blocks (kind and state_dtype are written only for them, when set).
    sc.model.ssm = { 4, 8, 64, 16, 2, 4, true, true, true, false, SsmKind::GatedDeltaNet, DType::Fp32 };
    sc.model.rotaryDim = 32; // written only when set
    sc.model.attentionOutputGate = true; // written only when set
    sc.model.normBias = false; // written only when false (Cohere's weight-only LayerNorm)
    sc.model.attentionFreeLayers = 4;
    sc.model.mlpFreeLayers = 2;
    sc.model.attentionType = AttentionType::Mla;
    sc.model.mla = { 512, 256, 64, 32, 64 };
    sc.run.finetune.method = FinetuneMethod::Qlora;
    sc.run.finetune.quant = Nf4Format::Bitsandbytes; // optional: set, so that it is written
    sc.run.parallelism.sharding = Sharding::Fsdp2;
    sc.run.allocator.expandableSegments = true; // written only when set
    sc.run.parallelism.gpus = 8;
    sc.run.keepLastBlockGathered = true;
    sc.run.parallelism.contextParallel = 2;
    sc.run.gradientDtype = DType::Bf16;
    sc.run.masterWeights = true;
    sc.run.loss = LossKind::Chunked;
    sc.run.lossChunks = 8;
    sc.run.lossChunkTokens = 1024;
    sc.run.lossDtype = DType::Fp32;
    sc.run.optimizerImpl = OptimizerImpl::Fused;
    sc.run.optimizerInBackward = true;
    sc.run.compile = true;
    sc.run.compileLoss = true; // optional: set, so that it is written
    sc.run.sftTokenAccuracy = true; // written only when true
    sc.run.finetune.baseFp32 = true; // optional: set, so that it is written
    sc.run.parallelism.fp8AllGather = true; // written only when set
    sc.run.parallelism.reduceBucketSize = 200'000'000; // DeepSpeed's; written only when set
    sc.run.parallelism.overlapComm = true;
    sc.run.parallelism.stage3PrefetchBucketSize = 15'099'494; // DeepSpeed ZeRO-3's; each written only when set
    sc.run.parallelism.stage3MaxLiveParameters = 1'000'000'000;
    sc.run.parallelism.stage3MaxReuseDistance = 0;
    sc.run.parallelism.stage3ParamPersistenceThreshold = 40'960;
    sc.run.parallelism.pipelineSchedule = PipelineSchedule::Interleaved; // both written only when interleaved
    sc.run.parallelism.virtualStages = 2;
    sc.run.parallelism.asyncTp = true; // written only when true
    sc.run.parallelism.gradientAsBucketView = true; // written only when true
    sc.run.parallelism.noSync = false; // FSDP1's; each optional: set, so that it is written
    sc.run.parallelism.fsdpWrap = FsdpWrap::Blocks;
    sc.run.activationOffloading = true;
    sc.run.finetune.dora = true; // written only when true
    sc.run.finetune.kbitPreparation = KbitPreparation::Peft; // optional: set, so that it is written
    sc.run.precisionAwareOptimizer = true; // written only when true
    sc.run.optimizerStateDtype = DType::Bf16; // optional: set, so that it is written
    sc.run.overheads.commBufferBytes = 300 * kMiB;
    sc.run.gpu = findGpu("h100-sxm-80gb");
    sc.run.checkpointing = { Checkpointing::Kind::Every, 4 };
    return sc;
}

/// Keys written only for Qwen3.5's vision transformer (a SigLIP tower writes image_size instead).
bool qwenVisionKey(std::string_view key)
{
    return key == "model.vision.kind" || key == "model.vision.temporal_patch_size"
        || key == "model.vision.spatial_merge_size" || key == "model.vision.out_hidden_size"
        || key == "model.vision.num_position_embeddings";
}

/// Keys written only for Llama 4's tower.
bool llama4VisionKey(std::string_view key)
{
    return key == "model.vision.projector_input_dim";
}

/// richScenario() with Llama 4 Scout's tower in place of the SigLIP tower.
Scenario llama4VisionScenario()
{
    Scenario sc = richScenario();
    sc.model.vision = { 1408, 5632, 34, 16, 336, 14, 3, VisionKind::Llama4, 0, 0, 4096, 0, 4096 };
    return sc;
}

/// richScenario() with Qwen3.5-27B's vision transformer in place of the SigLIP tower.
Scenario qwenVisionScenario()
{
    Scenario sc = richScenario();
    // image_size stays (not written for this kind) so that switching the kind back to SigLIP writes a valid one.
    sc.model.vision = { 1152, 4304, 27, 16, 896, 16, 3, VisionKind::QwenVit, 2, 2, 5120, 2304 };
    return sc;
}

/// A value of the field other than `v`, inside its range.
FieldValue otherValue(const ScenarioField& f, const FieldValue& v)
{
    switch (f.kind) {
    case FieldKind::Integer: {
        const Count c = std::get<Count>(v);
        return c < Count(f.max) ? c + 1 : c - 1;
    }
    case FieldKind::Real: {
        const double d = std::get<double>(v);
        return d + 0.25 < f.max ? d + 0.25 : (d + f.min) / 2;
    }
    case FieldKind::Boolean:
        return !std::get<bool>(v);
    case FieldKind::Text:
        return std::get<std::string>(v) + " (edited)";
    case FieldKind::Choice:
        for (const ChoiceName& c : f.choices)
            if (!std::holds_alternative<std::string>(v) || c.name != std::get<std::string>(v))
                return std::string(c.name);
        break;
    default:
        break;
    }
    return v;
}

/// Every leaf key of a written scenario, as a key path ("run.parallelism.gpus").
void leafKeys(const json& j, const std::string& path, std::set<std::string>& out)
{
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string key = path.empty() ? it.key() : path + "." + it.key();
        if (it->is_object() && !findField(key))
            leafKeys(*it, key, out);
        else
            out.insert(key);
    }
}

} // namespace

class TestScenarioFields : public QObject {
    Q_OBJECT
private slots:
    void tableIsWellFormed()
    {
        std::set<std::string_view> keys;
        QVERIFY(scenarioFields().size() >= 80);
        for (const ScenarioField& f : scenarioFields()) {
            QVERIFY2(keys.insert(f.key).second, std::string(f.key).c_str());
            QVERIFY2(f.key.starts_with("model.") || f.key.starts_with("run."), std::string(f.key).c_str());
            QVERIFY2(!f.description.empty(), std::string(f.key).c_str());
            switch (f.kind) {
            case FieldKind::Integer:
            case FieldKind::Real:
                QVERIFY2(f.min < f.max, std::string(f.key).c_str());
                [[fallthrough]];
            case FieldKind::Boolean:
            case FieldKind::Text:
                QVERIFY(f.get && f.set);
                break;
            case FieldKind::Choice:
                QVERIFY(f.get && f.set && f.choices.size() >= 2);
                break;
            case FieldKind::Custom:
                QVERIFY(f.read && f.write);
                break;
            case FieldKind::Unmodelled:
                QVERIFY(!json::parse(f.modelledJson).is_discarded());
                break;
            }
        }
        QCOMPARE(fieldParent("run.parallelism.gpus"), std::string_view("run.parallelism"));
        QCOMPARE(fieldName("run.parallelism.gpus"), std::string_view("gpus"));
        QVERIFY(!findField("run.sequence_lenght"));
    }

    // Each field set to another value reads back the same, and so does the saved file.
    void everyFieldRoundTrips_data()
    {
        QTest::addColumn<QString>("key");
        for (const ScenarioField& f : scenarioFields())
            if (f.kind != FieldKind::Custom && f.kind != FieldKind::Unmodelled)
                QTest::newRow(std::string(f.key).c_str()) << QString::fromUtf8(f.key.data(), qsizetype(f.key.size()));
    }
    void everyFieldRoundTrips()
    {
        QFETCH(QString, key);
        const ScenarioField& f = *findField(key.toStdString());
        Scenario sc = qwenVisionKey(f.key) ? qwenVisionScenario()
            : llama4VisionKey(f.key)       ? llama4VisionScenario()
                                           : richScenario();
        const FieldValue before = f.get(sc);
        QVERIFY(!std::holds_alternative<std::monostate>(before));
        const FieldValue after = otherValue(f, before);
        QVERIFY(after != before);
        f.set(sc, after);
        QVERIFY(f.get(sc) == after);
        const json written = scenarioToJson(sc);
        const Scenario back = readScenario(written);
        QVERIFY2(f.get(back) == after, written.dump().c_str());
        QCOMPARE(fieldJson(f, back), fieldJson(f, sc));
        QCOMPARE(scenarioToJson(back), written);
    }

    void customFieldsRoundTrip()
    {
        const Scenario sc = richScenario();
        const Scenario back = readScenario(scenarioToJson(sc));
        for (const ScenarioField& f : scenarioFields())
            // serving: servingRoundTrips(); fsdp_shard_group needs zero_stage 3, which this scenario does not
            // use (tst_context_parallel hsdpShardsWithinItsGroup round-trips it).
            if (f.kind == FieldKind::Custom && f.key != "run.serving" && f.key != "run.parallelism.fsdp_shard_group") {
                QVERIFY2(!fieldJson(f, sc).is_null(), std::string(f.key).c_str());
                QCOMPARE(fieldJson(f, back), fieldJson(f, sc));
            }
        QCOMPARE(back.run.checkpointing.every, Count(4));
        QCOMPARE(back.run.gpu->name, std::string("h100-sxm-80gb"));
        QVERIFY(back.run.keepLastBlockGathered);
    }

    // run.serving is the serving engine's object; run.mode says "serving" beside it.
    void servingRoundTrips()
    {
        const json doc = json::parse("{\"model\": {\"preset\": \"llama-3-8b\"}, \"run\": {\"mode\": \"serving\", "
                                     "\"serving\": {\"engine\": \"vllm\", \"gpu_memory_utilization\": 0.85}}}");
        const Scenario sc = readScenario(doc);
        QVERIFY(sc.run.serving);
        const json written = scenarioToJson(sc);
        QCOMPARE(written["run"]["mode"], json("serving"));
        QCOMPARE(written["run"]["serving"]["gpu_memory_utilization"], json(0.85));
        QCOMPARE(scenarioToJson(readScenario(written)), written);
        // Until the Serving page, the window's report says it is not the engine's budget.
        const std::vector<std::string> warnings = estimate(sc).warnings;
        QVERIFY(std::any_of(warnings.begin(), warnings.end(),
            [](const std::string& w) { return w.starts_with("run.serving: these bars are one request's"); }));
        json alone = doc;
        alone["run"]["mode"] = "inference";
        QVERIFY_THROWS_EXCEPTION(InputError, readScenario(alone));
    }

    // The writer writes the table's keys and nothing else; a dense model drops model.moe.
    void writerKnowsExactlyTheTable()
    {
        std::set<std::string> written;
        leafKeys(scenarioToJson(richScenario()), "", written);
        for (const std::string& k : { "format", "version", "name" })
            QVERIFY(written.erase(k) == 1);
        std::set<std::string> table;
        for (const ScenarioField& f : scenarioFields())
            if (f.kind != FieldKind::Unmodelled && f.key != "run.serving" // a training run
                && f.key != "run.parallelism.fsdp_shard_group" // HSDP only, with zero_stage 3 (see above)
                && !qwenVisionKey(f.key) && !llama4VisionKey(f.key)) // a SigLIP tower here (below: the others)
                table.emplace(f.key);
        QCOMPARE(written, table);
        std::set<std::string> qwen;
        leafKeys(scenarioToJson(qwenVisionScenario()), "", qwen);
        for (const ScenarioField& f : scenarioFields())
            if (qwenVisionKey(f.key))
                QVERIFY2(qwen.count(std::string(f.key)), std::string(f.key).c_str());
        QVERIFY(!qwen.count("model.vision.image_size"));
        std::set<std::string> llama4;
        leafKeys(scenarioToJson(llama4VisionScenario()), "", llama4);
        for (const char* key : { "model.vision.projector_input_dim", "model.vision.out_hidden_size",
                 "model.vision.kind", "model.vision.image_size" })
            QVERIFY2(llama4.count(key), key);
        QVERIFY(!llama4.count("model.vision.temporal_patch_size"));

        Scenario dense = richScenario();
        dense.model.moe = {};
        dense.model.attentionType = AttentionType::Mha;
        const json j = scenarioToJson(dense);
        QVERIFY(!j["model"].contains("moe"));
        QVERIFY(!j["model"].contains("mla"));
    }

    // A MoE file switched to a dense preset must not keep its experts on save.
    void staleObjectsDoNotSurviveASave()
    {
        Scenario sc = readScenario(json::parse(
            R"({"model": {"preset": "llama-3-8b", "moe": {"num_experts": 8, "top_k": 2}}, "run": {"loss": "fused"}})"));
        QCOMPARE(sc.model.moe.numExperts, Count(8));
        sc.model = findPreset("llama-3-8b")->model;
        sc.run.loss.reset();
        const Scenario back = readScenario(scenarioToJson(sc));
        QCOMPARE(back.model.moe.numExperts, Count(0));
        QVERIFY(!back.run.loss);
    }

    void unmodelledKeysAcceptOnlyTheModelledValue_data()
    {
        QTest::addColumn<QString>("key");
        for (const ScenarioField& f : scenarioFields())
            if (f.kind == FieldKind::Unmodelled)
                QTest::newRow(std::string(f.key).c_str()) << QString::fromUtf8(f.key.data(), qsizetype(f.key.size()));
    }
    void unmodelledKeysAcceptOnlyTheModelledValue()
    {
        QFETCH(QString, key);
        const ScenarioField& f = *findField(key.toStdString());
        json doc = { { "model", { { "preset", "llama-3-8b" } } }, { "run", json::object() } };
        const json::json_pointer at("/" + QString(key).replace(QLatin1Char('.'), QLatin1Char('/')).toStdString());
        const json modelled = json::parse(f.modelledJson);
        if (!modelled.is_null()) {
            doc[at] = modelled;
            (void)readScenario(doc);
        }
        doc[at] = "something else";
        try {
            (void)readScenario(doc);
            QFAIL("accepted an unmodelled value");
        } catch (const InputError& e) {
            QCOMPARE(QString::fromStdString(e.keyPath()), key);
            QVERIFY(QString::fromUtf8(e.what()).contains(QStringLiteral("not modelled yet")));
        }
    }

    void choicesAreTheCoresSpellings()
    {
        QCOMPARE(std::string(toString(Precision::MixedBf16)), std::string("mixed-bf16"));
        QCOMPARE(std::string(toString(DType::Nf4NoDq)), std::string("nf4 (no double quantization)"));
        QVERIFY(*parseDType("int4") == DType::Int4);
        try {
            (void)readScenario(json::parse(R"({"model": {"preset": "gpt2"}, "run": {"precision": "fp64"}})"));
            QFAIL("accepted fp64");
        } catch (const InputError& e) {
            QCOMPARE(QString::fromUtf8(e.what()),
                QStringLiteral(
                    "run.precision: expected one of fp32, bf16, fp16, mixed-bf16, mixed-fp16, got \"fp64\""));
        }
    }

    void sweepKeysAreIntegerRunFields()
    {
        for (SweepParam p : sweepParams()) {
            const ScenarioField& f = sweepField(p);
            QVERIFY(f.kind == FieldKind::Integer && f.key.starts_with("run."));
            QVERIFY(parseSweepParam(keyPathOf(p)) == p);
        }
        const Scenario sc = richScenario();
        QCOMPARE(valueOf(withValue(sc, SweepParam::SequenceLength, 12345), SweepParam::SequenceLength), Count(12345));
        RunSpec run = sc.run;
        setValue(run, SweepParam::Gpus, 64);
        QCOMPARE(run.parallelism.gpus, Count(64));
        QVERIFY(run.finetune.method == FinetuneMethod::Qlora);
    }

    // run.safety_margin: one table entry plus one line of model code.
    void safetyMarginShrinksTheUsableMemory()
    {
        Scenario sc;
        sc.model = findPreset("llama-3-8b")->model;
        sc.run.gpu = findGpu("h100-sxm-80gb");
        const Bytes memory = sc.run.gpu->memoryBytes;
        // A file without the key keeps 5 % of the GPU free (issue 16: never plan at zero headroom).
        QCOMPARE(readScenario(json::parse(R"({"format": "vramlab.scenario", "version": 1,
            "model": {"preset": "llama-3-8b"}, "run": {"gpu": "h100-sxm-80gb"}})"))
                     .run.safetyMargin,
            0.05);
        QCOMPARE(estimate(sc).usableBytes, memory - Bytes(std::ceil(0.05 * double(memory)))); // 4,275,973,325 B
        findField("run.safety_margin")->set(sc, 0.1);
        const json j = scenarioToJson(sc);
        QCOMPARE(j["run"]["safety_margin"].get<double>(), 0.1);
        const Scenario back = readScenario(j);
        QCOMPARE(back.run.safetyMargin, 0.1);
        const Report r = estimate(back);
        QCOMPARE(r.usableBytes, memory - Bytes(std::ceil(0.1 * double(memory))));
        QCOMPARE(r.fits, r.peak <= r.usableBytes);
        // The fit solver stops at the margin, and its fitting and failing peaks never print
        // as the same figure.
        Scenario lora = back; // a full fine-tune of 8B does not fit one H100 at any length
        lora.run.finetune.method = FinetuneMethod::Lora;
        const FitResult f = fitMax(lora, SweepParam::SequenceLength);
        QVERIFY(f.value && f.nextReport);
        QVERIFY(f.report->peak <= r.usableBytes && f.nextReport->peak > r.usableBytes);
        QVERIFY(formatBytesApart(f.report->peak, f.nextReport->peak)
            != formatBytesApart(f.nextReport->peak, f.report->peak));
        QCOMPARE(formatBytesApart(24 * kGiB - 1, 24 * kGiB), std::string("23.999999999 GiB"));
        QCOMPARE(formatBytesApart(24 * kGiB, 24 * kGiB - 1), std::string("24.000000000 GiB"));
        QCOMPARE(formatBytesApart(23 * kGiB, 24 * kGiB), std::string("23.00 GiB"));
        try {
            sc.document = json::object();
            json bad = scenarioToJson(sc);
            bad["run"]["safety_margin"] = 0.9;
            (void)readScenario(bad);
            QFAIL("accepted a margin of 90 %");
        } catch (const InputError& e) {
            QCOMPARE(QString::fromUtf8(e.what()),
                QStringLiteral("run.safety_margin: expected a number from 0 to 0.5, got 0.9"));
        }
    }

    // Lessons highlight exact keys: a typo is refused, not silently ignored.
    void lessonHighlightsAreExactKeys()
    {
        json lesson = json::parse("{\"format\": \"vramlab.lesson\", \"version\": 1, \"id\": \"t\", \"title\": \"T\", "
                                  "\"scenario\": {\"model\": {\"preset\": \"llama-2-7b\"}}, "
                                  "\"steps\": [{\"title\": \"A\", \"text\": \"x\"}]}");
        lesson["steps"][0]["highlight"] = { "run.parallelism.zero_stage", "model.preset", "run.gpu", "chart.weights" };
        QCOMPARE(readLesson(lesson).steps[0].highlight.size(), std::size_t(4));
        lesson["steps"][0]["highlight"] = { "run.sequence_lenght" };
        try {
            (void)readLesson(lesson);
            QFAIL("accepted a misspelt key");
        } catch (const InputError& e) {
            QVERIFY(QString::fromUtf8(e.what()).contains(QStringLiteral("run.sequence_lenght")));
        }
    }
};

QTEST_APPLESS_MAIN(TestScenarioFields)
#include "tst_scenario_fields.moc"
