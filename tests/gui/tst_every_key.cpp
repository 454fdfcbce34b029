// SPDX-License-Identifier: MIT
// Every key a scenario file may set is a control of the parameter panel (issue "every key is
// read, validated, written back, editable in the GUI"): the field table has no key without a
// descriptor but the exempt ones below; each rarely used control writes its value into the
// file and moves the peak the way the model says; an optional key goes back to unset; and
// loading a scenario into the panel writes nothing it did not have.
#include "parameter_descriptors.h"
#include "parameter_panel.h"
#include "scenario_document.h"

#include "vramlab/estimator.h"
#include "vramlab/scenario_fields.h"
#include "vramlab/scenario_io.h"

#include <QDir>
#include <QLabel>
#include <QLineEdit>
#include <QSettings>
#include <QToolButton>
#include <QtTest>

using namespace vramlab;
using nlohmann::json;

namespace {

QString sourcePath(const QString& rel)
{
    return QStringLiteral(VRAMLAB_SOURCE_DIR "/") + rel;
}

/// A shipped scenario (resources/scenarios/...) or a published run's "scenario" object.
Scenario load(const QString& rel)
{
    const json doc = parseJsonText(readTextFile(sourcePath(rel).toStdString()), rel.toStdString());
    return readScenario(doc.contains("scenario") ? doc.at("scenario") : doc);
}

/// The file's value at a key ("run.parallelism.sharding"), or null when it is left out.
json written(const Scenario& s, const QString& key)
{
    const json doc = scenarioToJson(s);
    const json::json_pointer at("/" + QString(key).replace(QLatin1Char('.'), QLatin1Char('/')).toStdString());
    return doc.contains(at) ? doc.at(at) : json();
}

const QString kLlama = QStringLiteral("resources/scenarios/llama-3-8b-8xh100.json");
const QString kServing = QStringLiteral("resources/scenarios/llama-2-7b-serving.json");
const QString kQlora = QStringLiteral("resources/scenarios/gemma-3-12b-qlora.json");
const QString kChunked
    = QStringLiteral("tests/data/published/training/torchtune-llama3.2-3b-full-packed-compile-chunkedce-ac.json");
const QString kLitgpt = QStringLiteral("tests/data/published/training/litgpt-phi-1.5-lora-r8-mb1-bf16-true.json");

/// Keys of the field table with no control of their own, each with the reason.
const QHash<QString, QString>& exempt()
{
    static const QHash<QString, QString> keys = [] {
        QHash<QString, QString> k;
        // The model's finer shapes: the preset, a config.json import and the shape controls set them.
        const QString shape = QStringLiteral("a model shape: set by the preset or a config.json import");
        for (const char* key : { "model.name", "model.head_dim", "model.mlp", "model.norm", "model.position",
                 "model.max_position_embeddings", "model.bias", "model.qkv_bias", "model.qk_norm",
                 "model.qk_norm_full_width", "model.post_norms", "model.norm_bias", "model.norm_after_sublayers",
                 "model.norm_scale_fp32", "model.attention_sinks", "model.clamped_swiglu", "model.attention_bias",
                 "model.lm_head_bias", "model.moe.sparse_mixer", "model.moe.every_expert_every_token",
                 "model.vision.hidden_size", "model.vision.intermediate_size", "model.vision.num_layers",
                 "model.vision.num_heads", "model.vision.image_size", "model.vision.patch_size",
                 "model.vision.channels", "model.ssm.layers", "model.ssm.num_heads", "model.ssm.head_dim",
                 "model.ssm.state_size", "model.ssm.groups", "model.ssm.conv_kernel", "model.ssm.bias",
                 "model.ssm.conv_bias", "model.ssm.gated_norm", "model.ssm.parallel", "model.ssm.kind",
                 "model.ssm.state_dtype", "model.rotary_dim", "model.attention_output_gate", "model.vision.kind",
                 "model.vision.temporal_patch_size", "model.vision.spatial_merge_size", "model.vision.out_hidden_size",
                 "model.vision.projector_input_dim", "model.vision.num_position_embeddings", "model.attention_layers",
                 "model.mlp_layers", "model.tied_embeddings", "model.dropout", "model.sliding_window",
                 "model.global_layer_interval", "model.chunked_local_attention", "model.mrope", "model.attention_type",
                 "model.moe.num_experts", "model.moe.top_k", "model.moe.shared_experts",
                 "model.moe.expert_ffn_hidden_size", "model.moe.first_dense_layers", "model.moe.layer_interval",
                 "model.moe.router_bias", "model.moe.expert_bias", "model.moe.shared_expert_ffn_hidden_size",
                 "model.moe.shared_expert_gate", "model.mla.q_lora_rank", "model.mla.kv_lora_rank",
                 "model.mla.qk_nope_head_dim", "model.mla.qk_rope_head_dim", "model.mla.v_head_dim",
                 "model.parallel_residual", "model.shared_attention_norm" })
            k.insert(QLatin1String(key), shape);
        // The engine's object: its flags are the run.serving.* controls (tst_serving_page).
        k.insert(QStringLiteral("run.serving"), QStringLiteral("an object: its flags are run.serving.* controls"));
        // Unmodelled keys accept only the one modelled value: there is nothing to choose.
        const QString unmodelled = QStringLiteral("unmodelled: the file accepts only the modelled value");
        k.insert(QStringLiteral("run.finetune.quant_block_size"), unmodelled);
        return k;
    }();
    return keys;
}

/// The control's value that leaves its optional key unset ("Framework default", "auto").
QVariant unsetValue(const ParamDescriptor& d)
{
    if (d.kind == ParamDescriptor::Kind::Choice)
        return QStringLiteral("default");
    return d.kind == ParamDescriptor::Kind::Real ? QVariant(d.min - 1)
                                                 : QVariant::fromValue<qlonglong>(qlonglong(d.min) - 1);
}

} // namespace

class TestEveryKey : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
    }

    void everyKeyHasAControl()
    {
        for (const ScenarioField& f : scenarioFields()) {
            const QString key = QString::fromUtf8(f.key.data(), qsizetype(f.key.size()));
            const bool control = findDescriptor(key) != nullptr;
            if (exempt().contains(key))
                QVERIFY2(!control, qPrintable(key + ": exempt but it has a control; drop the exemption"));
            else
                QVERIFY2(control, qPrintable(key + ": a key of the scenario file without a control in the panel"));
        }
        for (auto it = exempt().cbegin(); it != exempt().cend(); ++it) // no stale exemption
            QVERIFY2(findField(it.key().toStdString()), qPrintable(it.key() + ": not a key any more"));
    }

    /// A control whose lowest step means "unset" must still reach every value the file accepts: with its minimum
    /// above the field's, a file's stage3_prefetch_bucket_size 0 (no prefetch) showed as "5e7 (default)".
    void unsetStepIsBelowEveryAcceptedValue()
    {
        for (const ScenarioField& f : scenarioFields()) {
            const ParamDescriptor* d = findDescriptor(QString::fromUtf8(f.key.data(), qsizetype(f.key.size())));
            if (!d || d->unsetText.isEmpty() || (f.kind != FieldKind::Integer && f.kind != FieldKind::Real))
                continue;
            QVERIFY2(d->min <= f.min,
                qPrintable(d->key
                    + QStringLiteral(": the control starts at %1, the file accepts %2 (shown as unset)")
                          .arg(d->min)
                          .arg(f.min)));
        }
    }

    void newControlWritesAndMovesThePeak_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("setup"); ///< a control set first ("run.finetune.method=lora"), or empty
        QTest::addColumn<QString>("key");
        QTest::addColumn<QVariant>("value");
        QTest::addColumn<QString>("json"); ///< what the file then says at the key
        QTest::addColumn<int>("peak"); ///< -1 lower, 0 the same, +1 higher
        QTest::addColumn<int>("time"); ///< the step time: -1 shorter, 0 the same, +1 longer
        const auto row = [](const char* name, const QString& file, const char* setup, const char* key,
                             const QVariant& v, const char* text, int peak, int time = 0) {
            QTest::newRow(name) << file << QString::fromLatin1(setup) << QString::fromLatin1(key) << v
                                << QString::fromLatin1(text) << peak << time;
        };
        const auto n = [](qlonglong v) { return QVariant::fromValue<qlonglong>(v); };
        const QString nf4
            = QStringLiteral("tests/data/published/training/litgpt-llama2-7b-lora-r8-mb1-bf16-true-bnb-nf4-dq.json");
        const QString optInBackward = QStringLiteral(
            "tests/data/published/training/torchtune-llama3.2-3b-full-packed-compile-chunkedce-ac-optinbwd.json");
        row("fp8", kLlama, "", "run.fp8", true, "true", -1, -1);
        const QString titan = QStringLiteral(
            "tests/data/published/training/torchtitan-llama3.1-8b-fsdp8-selective-op-fsdp-compile-float8.json");
        row("compile_loss", titan, "", "run.compile_loss", QStringLiteral("true"), "true", -1);
        row("fp8_all_gather", titan, "", "run.parallelism.fp8_all_gather", true, "true", -1);
        row("gradient_dtype", kLlama, "", "run.gradient_dtype", QStringLiteral("bf16"), "\"bf16\"", -1, -1);
        row("master_weights", kLlama, "", "run.master_weights", QStringLiteral("false"), "false", -1);
        // LitGPT's chunks as the bare module returns them (16-bit) instead of Fabric's fp32 copies.
        row("loss_dtype", kLitgpt, "", "run.loss_dtype", QStringLiteral("bf16"), "\"bf16\"", -1);
        row("loss_chunks_fewer", optInBackward, "", "run.loss_chunks", n(1), "1", +1);
        row("loss_chunks_more", optInBackward, "", "run.loss_chunks", n(64), "64", -1);
        row("loss_chunks_tokens", kLitgpt, "", "run.loss_chunks_tokens", n(1024), "1024", +1);
        row("optimizer_impl", kChunked, "", "run.optimizer_impl", QStringLiteral("foreach"), "\"foreach\"", +1);
        row("optimizer_in_backward", kChunked, "", "run.optimizer_in_backward", true, "true", -1);
        row("alpha", kQlora, "", "run.finetune.alpha", 64.0, "64.0", 0);
        row("dropout", kLlama, "run.finetune.method=lora", "run.finetune.dropout", 0.1, "0.1", +1);
        row("targets", kQlora, "", "run.finetune.targets", QStringLiteral("q, k, v, o, gate, up, down"),
            "[\"q\",\"k\",\"v\",\"o\",\"gate\",\"up\",\"down\"]", +1, +1);
        row("double_quant", kQlora, "", "run.finetune.double_quant", false, "false", +1);
        // A 16-bit head weighs more, but LitGPT's widest dequantization (fp16 and bf16 copies of the head) goes.
        row("quantize_lm_head", nf4, "", "run.finetune.quantize_lm_head", false, "false", -1);
        // PEFT's preparation over TRL's default: the embedding and head in fp32 too (Gemma 3 12B, 1024 tokens).
        row("base_fp32", kLlama, "run.finetune.method=lora", "run.finetune.base_fp32", QStringLiteral("true"), "true",
            +1);
        // SFTTrainer's fp32 copy of the logits at the end of forward ties with the loss backward's two fp32 gradients.
        row("sft_token_accuracy", kQlora, "run.framework=hf-transformers", "run.sft_token_accuracy", true, "true", 0);
        row("kbit_preparation", kQlora, "run.framework=hf-transformers", "run.finetune.kbit_preparation",
            QStringLiteral("peft"), "\"peft\"", +1);
        // DDP's buckets as views: the second copy of every gradient goes (Llama 3 8B on 8 GPUs without ZeRO).
        row("gradient_as_bucket_view", kLlama, "run.parallelism.zero_stage=0",
            "run.parallelism.gradient_as_bucket_view", true, "true", -1);
        row("cuda_context", kLlama, "", "run.overheads.cuda_context_bytes", 1024.0, "1073741824", +1);
        row("workspace", kLlama, "", "run.overheads.workspace_bytes", 64.5, "67633152", +1);
        row("comm_buffers", kLlama, "", "run.overheads.comm_buffer_bytes", 1024.0, "1073741824", +1);
        row("allocator_rounding", kLlama, "", "run.overheads.allocator_rounding", false, "false", -1);
        row("fragmentation", kLlama, "", "run.overheads.fragmentation", 0.25, "0.25", +1);
        // FSDP2 drops the bf16 shard (1.87 GiB on 8 GPUs) but keeps its root, the embedding and the LM head
        // (1.05B of Llama 3's 8.03B parameters), gathered in bf16 all forward and backward (1.96 GiB).
        row("sharding", kLlama, "", "run.parallelism.sharding", QStringLiteral("fsdp2"), "\"fsdp2\"", +1);
        row("reshard_after_forward", kLlama, "", "run.parallelism.reshard_after_forward",
            QStringLiteral("all but last block"), "\"all but last block\"", +1);
        row("fsdp_shard_group", kLlama, "", "run.parallelism.fsdp_shard_group", n(2), "2", +1);
        // FSDP1 instead of DeepSpeed's ZeRO-3: the root (embedding, LM head) stays gathered from forward to backward.
        row("sharding_fsdp1", kLlama, "", "run.parallelism.sharding", QStringLiteral("fsdp1"), "\"fsdp1\"", +1);
        // FSDP1's no_sync over 8 micro-batches: every gradient whole (2 B x 8B) instead of fp32 shards over 8 GPUs.
        row("no_sync", kLlama, "run.parallelism.sharding=fsdp1", "run.parallelism.no_sync", QStringLiteral("true"),
            "true", +1);
        // DeepSpeed ZeRO-3 keeps its gradient bucket from setup: 2e9 elements instead of 5e8 is 3 GB more.
        row("reduce_bucket_size", kLlama, "run.framework=deepspeed", "run.parallelism.reduce_bucket_size",
            n(2'000'000'000), "2000000000", +1);
        // ZeRO-3's single bucket does not double with overlap_comm (stage3.py@e2dc3eeb:537-540).
        row("overlap_comm", kLlama, "run.framework=deepspeed", "run.parallelism.overlap_comm", QStringLiteral("false"),
            "false", 0);
        row("bf16_tflops", kLlama, "", "run.gpu.bf16_tflops", 2000.0, "2000.0", 0, -1);
        row("fp8_tflops", kLlama, "run.fp8=true", "run.gpu.fp8_tflops", 4000.0, "4000.0", 0, -1);
        row("memory_bandwidth", kServing, "", "run.gpu.memory_bandwidth_gbs", 8000.0, "8000.0", 0, -1);
        row("interconnect", kLlama, "", "run.gpu.interconnect_gbs", 100.0, "100.0", 0, +1);
        row("host_link", kLlama, "run.parallelism.offload_optimizer=true", "run.gpu.host_link_gbs", 16.0, "16.0", 0,
            +1);
    }
    void newControlWritesAndMovesThePeak()
    {
        QFETCH(QString, file);
        QFETCH(QString, setup);
        QFETCH(QString, key);
        QFETCH(QVariant, value);
        QFETCH(QString, json);
        QFETCH(int, peak);
        QFETCH(int, time);
        const ParamDescriptor* d = findDescriptor(key);
        QVERIFY2(d, qPrintable(key));
        Scenario before = load(file);
        if (!setup.isEmpty()) {
            const QString setKey = setup.section(QLatin1Char('='), 0, 0), v = setup.section(QLatin1Char('='), 1);
            const ParamDescriptor* s = findDescriptor(setKey);
            QVERIFY2(s, qPrintable(setKey));
            s->set(
                before, s->kind == ParamDescriptor::Kind::Toggle ? QVariant(v == QLatin1String("true")) : QVariant(v));
        }
        QVERIFY2(d->applies(before), "the control must apply where it is tried");
        Scenario after = before;
        d->set(after, value);
        QCOMPARE(QString::fromStdString(written(after, key).dump()), json);
        QVERIFY(written(before, key) != written(after, key));
        const Report a = estimate(before), b = estimate(after);
        qInfo("%s: peak %lld -> %lld bytes, step %.4f -> %.4f s", qPrintable(key), qlonglong(a.peak), qlonglong(b.peak),
            a.flops.stepTimeS, b.flops.stepTimeS);
        QCOMPARE((b.peak > a.peak) - (b.peak < a.peak), peak);
        QCOMPARE((b.flops.stepTimeS > a.flops.stepTimeS) - (b.flops.stepTimeS < a.flops.stepTimeS), time);
    }

    void expertParallelSplitsTheExperts()
    {
        Scenario s = load(kLlama);
        findDescriptor(QStringLiteral("model.preset"))->set(s, QStringLiteral("mixtral-8x7b"));
        findDescriptor(QStringLiteral("run.parallelism.zero_stage"))->set(s, QVariant::fromValue<qlonglong>(1));
        const ParamDescriptor* ep = findDescriptor(QStringLiteral("run.parallelism.expert_parallel"));
        QVERIFY(ep->applies(s));
        Scenario split = s;
        ep->set(split, QVariant::fromValue<qlonglong>(8));
        QCOMPARE(written(split, ep->key), json(8));
        const Report a = estimate(s), b = estimate(split);
        qInfo("expert_parallel 8: peak %lld -> %lld bytes", qlonglong(a.peak), qlonglong(b.peak));
        QVERIFY(b.peak < a.peak); // each GPU holds one of the 8 experts
    }

    void optionalKeyGoesBackToUnset_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("key");
        QTest::addColumn<QVariant>("value");
        const auto n = [](qlonglong v) { return QVariant::fromValue<qlonglong>(v); };
        QTest::newRow("gradient_dtype") << kLlama << QStringLiteral("run.gradient_dtype") << QVariant("bf16");
        QTest::newRow("master_weights") << kLlama << QStringLiteral("run.master_weights") << QVariant("false");
        QTest::newRow("loss_dtype") << kChunked << QStringLiteral("run.loss_dtype") << QVariant("fp32");
        QTest::newRow("loss_chunks") << kLitgpt << QStringLiteral("run.loss_chunks") << n(4);
        QTest::newRow("loss_chunks_tokens") << kChunked << QStringLiteral("run.loss_chunks_tokens") << n(256);
        QTest::newRow("optimizer_impl") << kLlama << QStringLiteral("run.optimizer_impl") << QVariant("foreach");
        QTest::newRow("kbit_preparation")
            << kQlora << QStringLiteral("run.finetune.kbit_preparation") << QVariant("none");
        QTest::newRow("comm_buffer") << kLlama << QStringLiteral("run.overheads.comm_buffer_bytes") << QVariant(0.0);
        QTest::newRow("fsdp_shard_group") << kLlama << QStringLiteral("run.parallelism.fsdp_shard_group") << n(4);
        QTest::newRow("reshard") << kLlama << QStringLiteral("run.parallelism.reshard_after_forward")
                                 << QVariant("all but last block");
    }
    void optionalKeyGoesBackToUnset()
    {
        QFETCH(QString, file);
        QFETCH(QString, key);
        QFETCH(QVariant, value);
        const ParamDescriptor& d = *findDescriptor(key);
        Scenario s = load(file);
        // The key the file has set (loss_chunks_tokens beside loss_chunks) goes first.
        for (const char* other : { "run.loss_chunks", "run.loss_chunks_tokens" })
            if (key.startsWith(QLatin1String("run.loss_chunks")) && key != QLatin1String(other))
                findDescriptor(QLatin1String(other))->set(s, unsetValue(*findDescriptor(QLatin1String(other))));
        const json original = scenarioToJson(s);
        QVERIFY2(written(s, key).is_null(), "the file leaves the key out");
        d.set(s, value);
        QVERIFY2(!written(s, key).is_null(), qPrintable(key + ": set"));
        QVERIFY(d.get(s) != unsetValue(d));
        d.set(s, unsetValue(d));
        QVERIFY2(written(s, key).is_null(), qPrintable(key + ": still in the file after going back to default"));
        QCOMPARE(QString::fromStdString(scenarioToJson(s).dump()), QString::fromStdString(original.dump()));
        QCOMPARE(
            d.get(s), d.kind == ParamDescriptor::Kind::Choice ? QVariant(QStringLiteral("default")) : unsetValue(d));
    }

    void loadingWritesNothingBack_data()
    {
        QTest::addColumn<QString>("file");
        for (const QString& dir :
            { QStringLiteral("resources/scenarios"), QStringLiteral("tests/data/published/training") })
            for (const QString& name : QDir(sourcePath(dir)).entryList({ QStringLiteral("*.json") }, QDir::Files)) {
                const QString file = dir + QLatin1Char('/') + name;
                // A run the reader refuses (a key not modelled yet; tst_published checks it) has nothing to load.
                if (!parseJsonText(readTextFile(sourcePath(file).toStdString()), name.toStdString())
                         .contains("expected_refusal"))
                    QTest::newRow(qPrintable(name)) << file;
            }
    }
    void loadingWritesNothingBack()
    {
        QFETCH(QString, file);
        const Scenario loaded = load(file);
        const std::string original = scenarioToJson(loaded).dump(1);
        // Each control's value written back as the panel would on an edit to the same value.
        // The run's controls. Not the model's, which make a custom model on any edit (the preset
        // rebuilds the shapes, a shape drops the preset), nor the serving engine's flags, which show
        // the engine's value of an unset flag and start from its defaults on a new engine: only a
        // user's edit writes them, and the panel below shows that loading writes none of them.
        for (const ParamDescriptor& d : parameterDescriptors()) {
            if (d.key.startsWith(QLatin1String("model.")) || d.key.startsWith(QLatin1String("run.serving.")))
                continue;
            Scenario s = loaded;
            try {
                d.set(s, d.get(loaded));
            } catch (const std::exception& e) {
                QFAIL(qPrintable(file + ": " + d.key + ": " + QString::fromUtf8(e.what())));
            }
            QVERIFY2(scenarioToJson(s).dump(1) == original, qPrintable(file + ": " + d.key + " changed the file"));
        }
        // And the panel itself, opened on it: refreshing the controls edits nothing.
        ScenarioDocument doc;
        doc.reset(loaded);
        ParameterPanel panel(&doc);
        QVERIFY(!doc.isModified());
        QCOMPARE(QString::fromStdString(scenarioToJson(doc.scenario()).dump(1)), QString::fromStdString(original));
    }

    void targetsTypedBadlyShowTheError()
    {
        ScenarioDocument doc;
        doc.reset(load(kQlora));
        ParameterPanel panel(&doc);
        auto* line = qobject_cast<QLineEdit*>(panel.editor(QStringLiteral("run.finetune.targets")));
        QVERIFY(line);
        QCOMPARE(line->text(), QStringLiteral("q, k, v, o"));
        for (const QString& typed : { QStringLiteral("q, nonsense"), QStringLiteral(" , ") }) {
            line->setText(typed);
            emit line->editingFinished();
            QVERIFY2(doc.errorKey().startsWith(QLatin1String("run.finetune.targets")), qPrintable(doc.error()));
            QVERIFY(!panel.label(QStringLiteral("run.finetune.targets"))->styleSheet().isEmpty()); // marked red
        }
        auto* header = panel.findChild<QToolButton*>(QStringLiteral("section:Fine-tuning details"));
        QVERIFY(header && !header->isChecked()); // closed by default
        QVERIFY2(header->styleSheet().contains(QLatin1String("color")), "a closed section says it holds the error");
        line->setText(QStringLiteral("q,v"));
        emit line->editingFinished();
        QVERIFY2(doc.error().isEmpty(), qPrintable(doc.error()));
        QVERIFY(!header->styleSheet().contains(QLatin1String("color")));
        QCOMPARE(written(doc.scenario(), QStringLiteral("run.finetune.targets")), json({ "q", "v" }));
    }
};

QTEST_MAIN(TestEveryKey)
#include "tst_every_key.moc"
