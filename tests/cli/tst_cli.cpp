// SPDX-License-Identifier: MIT
// vramlab-cli as a user runs it: outputs, exit codes, one-line errors with nothing on stdout.
#include "program_run.h"
#include "vramlab/units.h"

#include <algorithm>

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

namespace {

using vramlab::test::Run;

Run cli(const QStringList& args)
{
    return vramlab::test::runProgram(QStringLiteral(VRAMLAB_CLI), args);
}
QString data(const char* name)
{
    return vramlab::test::dataFile(name);
}

/// The JSON object a command wrote to `path`.
QJsonObject jsonFile(const QString& path)
{
    QFile f(path);
    f.open(QIODevice::ReadOnly);
    return QJsonDocument::fromJson(f.readAll()).object();
}

QString writeTemp(QTemporaryDir& dir, const char* name, const QByteArray& text)
{
    const QString path = dir.filePath(QString::fromUtf8(name));
    QFile f(path);
    f.open(QIODevice::WriteOnly);
    f.write(text);
    return path;
}

const QByteArray kLlamaH100 = R"({"format": "vramlab.scenario", "version": 1, "name": "llama 8b",
  "model": {"preset": "llama-3-8b"},
  "run": {"sequence_length": 4096, "micro_batch_size": 1, "gradient_accumulation_steps": 8, "attention": "flash",
          "checkpointing": "full", "parallelism": {"gpus": 8, "zero_stage": 3}, "gpu": "h100-sxm-80gb"}})";

} // namespace

class TestCli : public QObject {
    Q_OBJECT
private slots:
    // The key reference is the field table itself: every key, the values it takes, its unit.
    // Quick questions: scenario keys as options, no file needed (issue 16's example, verbatim).
    void quickQuestionWithoutAFile()
    {
        const Run q = cli({ "estimate", "--preset", "llama-3-8b", "--gpu", "rtx-4090", "--method", "qlora", "--seq",
            "8192", "--checkpointing", "full", "--json" });
        QCOMPARE(q.code, 0);
        const QJsonObject r = QJsonDocument::fromJson(q.out).object();
        QCOMPARE(r["params"].toObject()["total"].toInteger(), qint64(8030261248)); // Llama 3 8B, published count
        QCOMPARE(r["gpu"].toObject()["name"].toString(), QStringLiteral("rtx-4090-24gb"));
        // The same question as a file gives the same bytes.
        QTemporaryDir dir;
        const QString file = writeTemp(dir, "quick.json",
            R"({"format": "vramlab.scenario", "version": 1, "name": "q", "model": {"preset": "llama-3-8b"},
            "run": {"gpu": "rtx-4090-24gb", "finetune": {"method": "qlora"}, "sequence_length": 8192,
                    "checkpointing": "full"}})");
        const QJsonObject viaFile = QJsonDocument::fromJson(cli({ "estimate", file, "--json" }).out).object();
        QCOMPARE(r["peak_bytes"].toInteger(), viaFile["peak_bytes"].toInteger());
        // A key amends a file; full key paths work too.
        const QJsonObject amended
            = QJsonDocument::fromJson(cli({ "estimate", file, "--run.sequence_length", "4096", "--json" }).out)
                  .object();
        QVERIFY(amended["peak_bytes"].toInteger() < viaFile["peak_bytes"].toInteger());
        // Bad values are the reader's errors, attributed to the command line; a missing value is named.
        const Run bad = cli({ "estimate", "--preset", "llama-3-8b", "--gpu", "a100" });
        QCOMPARE(bad.code, 2);
        QVERIFY(bad.err.contains("command line: run.gpu: expected a catalog name"));
        const Run missing = cli({ "estimate", "--preset", "llama-3-8b", "--seq" });
        QCOMPARE(missing.code, 2);
        QVERIFY(missing.err.contains("--seq: expected a value for run.sequence_length"));
        QCOMPARE(cli({ "estimate", "--seq", "4096" }).code, 2); // no model at all
    }

    void keysListsTheFieldTable()
    {
        const Run text = cli({ "keys" });
        QCOMPARE(text.code, 0);
        QVERIFY(text.out.contains("run.safety_margin  (number: 0 to 0.5, of GPU memory)"));
        QVERIFY(text.out.contains("run.precision  (choice: fp32 | bf16 | fp16 | mixed-bf16 | mixed-fp16)"));
        QVERIFY(text.out.contains("run.finetune.quant_block_size  (refused: only 64 (not modelled yet))"));
        QVERIFY(text.out.contains("run.parallelism.pipeline_schedule  (choice: 1F1B | interleaved-1F1B)"));
        const Run j = cli({ "keys", "--json" });
        QCOMPARE(j.code, 0);
        const QJsonArray keys = QJsonDocument::fromJson(j.out).array();
        QVERIFY(keys.size() >= 80);
        QCOMPARE(keys.first().toObject()["key"].toString(), QStringLiteral("model.preset"));
        QCOMPARE(cli({ "keys", "extra" }).code, 2);
    }

    void estimateJsonMatchesReference()
    {
        const Run r = cli({ "estimate", data("scenarios/llama-tiny.json"), "--json" });
        QCOMPARE(r.code, 0);
        QVERIFY(r.err.isEmpty());
        const QJsonObject o = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(o["format"].toString(), QStringLiteral("vramlab.report"));
        QCOMPARE(o["version"].toInt(), 1);
        QCOMPARE(o["params"].toObject()["total"].toInteger(), qint64(1'897'728));
        const QJsonObject b = o["per_gpu_bytes"].toObject();
        QCOMPARE(b["activations"].toInteger(), qint64(10'681'660));
        QCOMPARE(b["weights"].toInteger(), qint64(3'795'456));
        QCOMPARE(b["optimizer_states"].toInteger(), qint64(7'590'912));
        qint64 sum = 0;
        for (const char* k :
            { "weights", "master_weights", "gradients", "optimizer_states", "activations", "kv_cache", "overhead" })
            sum += b[QLatin1String(k)].toInteger();
        QCOMPARE(b["total"].toInteger(), sum);
        QVERIFY(o["components"].toArray().size() == 7);
        QVERIFY(!o["components"].toArray()[0].toObject()["formula"].toString().isEmpty());
    }

    void estimateTable()
    {
        QTemporaryDir dir;
        const Run r = cli({ "estimate", writeTemp(dir, "s.json", kLlamaH100) });
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.contains("Optimizer states"));
        QVERIFY(r.out.contains("FITS on NVIDIA H100"));
        QVERIFY(r.out.contains("8,030,261,248"));
        // A formula longer than any fixed buffer (torchtitan's compiled loss cites its source) is printed whole,
        // and every component keeps a line of its own.
        const Run titan = cli({ "estimate", "--preset", "llama-3-8b", "--framework", "torchtitan", "--run.fp8", "true",
            "--compile", "true", "--run.compile_loss", "true", "--checkpointing", "selective-op", "--gpus", "8",
            "--zero", "3", "--run.parallelism.sharding", "fsdp2" });
        QCOMPARE(titan.code, 0);
        const QList<QByteArray> lines = titan.out.split('\n');
        const auto row = std::find_if(
            lines.begin(), lines.end(), [](const QByteArray& l) { return l.startsWith("  Activations"); });
        QVERIFY(row != lines.end());
        QVERIFY2(row->size() > 512 && row->endsWith("9dec370ad26b5f8e9a7333a0e36165018262644b]"), row->constData());
        QVERIFY(
            std::any_of(lines.begin(), lines.end(), [](const QByteArray& l) { return l.startsWith("  Overhead"); }));
    }

    /// A peak that is a lower bound is no "FITS": the fp32 norms of a Hugging Face QLoRA run without autocast
    /// are not modelled (estimator.cpp), so the verdict says the peak is at least this, in the text and in --json.
    void lowerBoundIsNoFits()
    {
        const QStringList args { "--preset", "llama-3-8b", "--gpu", "rtx-4090", "--method", "qlora", "--seq", "1024",
            "--framework", "hf-transformers", "--precision", "bf16" };
        const Run text = cli(QStringList { "estimate" } + args);
        QCOMPARE(text.code, 0);
        QVERIFY2(text.out.contains("MAY NOT FIT on NVIDIA GeForce RTX 4090 24GB: at least "), text.out.constData());
        QVERIFY(!text.out.contains("FITS on"));
        const Run j = cli(QStringList { "estimate", "--json" } + args);
        QCOMPARE(j.code, 0);
        const QJsonObject o = QJsonDocument::fromJson(j.out).object();
        QCOMPARE(o["fits"].toBool(), true);
        QVERIFY(o["lower_bound"].toString().contains("without autocast"));
        // The same run as plain eager PyTorch (no PEFT preparation): a plain verdict, no lower bound.
        const Run plain = cli({ "estimate", "--json", "--preset", "llama-3-8b", "--gpu", "rtx-4090", "--method",
            "qlora", "--seq", "2048" });
        QCOMPARE(plain.code, 0);
        QVERIFY(QJsonDocument::fromJson(plain.out).object()["lower_bound"].isNull());
    }

    void estimateAcceptsTheAddedGpus_data()
    {
        QTest::addColumn<QString>("gpu");
        QTest::addColumn<QString>("display");
        QTest::newRow("rtx-3090-24gb") << "rtx-3090-24gb"
                                       << "NVIDIA GeForce RTX 3090 24GB";
        QTest::newRow("rtx-3090-ti-24gb") << "rtx-3090-ti-24gb"
                                          << "NVIDIA GeForce RTX 3090 Ti 24GB";
        QTest::newRow("rtx-4080-16gb") << "rtx-4080-16gb"
                                       << "NVIDIA GeForce RTX 4080 16GB";
        QTest::newRow("rtx-5090-32gb") << "rtx-5090-32gb"
                                       << "NVIDIA GeForce RTX 5090 32GB";
        QTest::newRow("rtx-a6000-48gb") << "rtx-a6000-48gb"
                                        << "NVIDIA RTX A6000 48GB";
        QTest::newRow("rtx-6000-ada-48gb") << "rtx-6000-ada-48gb"
                                           << "NVIDIA RTX 6000 Ada Generation 48GB";
        QTest::newRow("a40-48gb") << "a40-48gb"
                                  << "NVIDIA A40 48GB";
        QTest::newRow("l40-48gb") << "l40-48gb"
                                  << "NVIDIA L40 48GB";
        QTest::newRow("t4-16gb") << "t4-16gb"
                                 << "NVIDIA T4 16GB";
        QTest::newRow("h100-nvl-94gb") << "h100-nvl-94gb"
                                       << "NVIDIA H100 NVL 94GB";
        QTest::newRow("mi250-gcd-64gb") << "mi250-gcd-64gb"
                                        << "AMD Instinct MI250 (one GCD) 64GB";
    }
    void estimateAcceptsTheAddedGpus()
    {
        QFETCH(QString, gpu);
        QFETCH(QString, display);
        QTemporaryDir dir;
        const QByteArray scenario
            = "{\"model\": {\"preset\": \"gpt2\"}, \"run\": {\"sequence_length\": 512, \"gpu\": \"" + gpu.toUtf8()
            + "\"}}";
        const Run table = cli({ "estimate", writeTemp(dir, "s.json", scenario) });
        QCOMPARE(table.code, 0);
        QVERIFY(table.err.isEmpty());
        QVERIFY2(table.out.contains("FITS on " + display.toUtf8()), table.out.constData());
        const Run json = cli({ "estimate", writeTemp(dir, "s.json", scenario), "--json" });
        QCOMPARE(json.code, 0);
        QVERIFY(QJsonDocument::fromJson(json.out).isObject());
    }

    void sweepCsv()
    {
        QTemporaryDir dir;
        const Run r = cli({ "sweep", writeTemp(dir, "s.json", kLlamaH100), "--param", "run.sequence_length", "--from",
            "1024", "--to", "8192", "--points", "8", "--csv" });
        QCOMPARE(r.code, 0);
        const QList<QByteArray> lines = r.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 9);
        QVERIFY(lines[0].startsWith("run.sequence_length,weights,"));
        QVERIFY(lines[1].startsWith("1024,"));
        QVERIFY(lines[8].startsWith("8192,"));
        // Activations grow with the sequence.
        QVERIFY(lines[8].split(',')[5].toLongLong() > lines[1].split(',')[5].toLongLong());
    }

    // Without --csv or --json the table is for people: units, separators, yes/no.
    void sweepTableHasUnits()
    {
        QTemporaryDir dir;
        const QString file = writeTemp(dir, "s.json", kLlamaH100);
        const QStringList args { "sweep", file, "--param", "run.sequence_length", "--from", "1024", "--to", "65536",
            "--points", "3", "--log" };
        const Run r = cli(args);
        QCOMPARE(r.code, 0);
        const QList<QByteArray> lines = r.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 4);
        QVERIFY2(lines[0].simplified().startsWith("run.sequence_length weights master_weights"), lines[0].constData());
        QVERIFY2(lines[0].endsWith("fits"), lines[0].constData());
        QVERIFY2(lines[3].simplified().startsWith("65,536 "), lines[3].constData());
        // Each size is the CSV's bytes, written with units; the columns line up.
        const QList<QByteArray> csv = cli(args + QStringList { "--csv" }).out.trimmed().split('\n');
        for (int i = 1; i < 4; ++i) {
            const QList<QByteArray> cells = lines[i].simplified().split(' ');
            QCOMPARE(lines[i].size(), lines[0].size() - 4 + cells.back().size()); // "fits" vs yes/no
            QCOMPARE(QByteArray(cells[cells.size() - 3] + ' ' + cells[cells.size() - 2]),
                QByteArray::fromStdString(vramlab::formatBytes(csv[i].split(',')[9].toLongLong())));
            QVERIFY(cells.back() == "yes" || cells.back() == "no");
        }
        QVERIFY(lines[1].endsWith("yes"));
        QVERIFY(lines[3].endsWith("no"));
    }

    void sweepJson()
    {
        // Written point by point (not through a JSON document): it parses, each point's
        // total is the sum of its components, and the numbers are the CSV's.
        QTemporaryDir dir;
        const QString file = writeTemp(dir, "s.json", kLlamaH100);
        const QStringList args { "sweep", file, "--param", "run.sequence_length", "--from", "1024", "--to", "8192",
            "--points", "8" };
        const Run r = cli(args + QStringList { "--json" });
        QCOMPARE(r.code, 0);
        const QJsonObject o = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(o["format"].toString(), QStringLiteral("vramlab.sweep"));
        QCOMPARE(o["version"].toInt(), 1);
        QCOMPARE(o["param"].toString(), QStringLiteral("run.sequence_length"));
        const QJsonArray points = o["points"].toArray();
        QCOMPARE(points.size(), 8);
        const QList<QByteArray> csv = cli(args + QStringList { "--csv" }).out.trimmed().split('\n');
        for (int i = 0; i < points.size(); ++i) {
            const QJsonObject p = points[i].toObject();
            const QJsonObject bytes = p["per_gpu_bytes"].toObject();
            qint64 sum = 0;
            for (auto it = bytes.begin(); it != bytes.end(); ++it)
                if (it.key() != QStringLiteral("total"))
                    sum += it.value().toInteger();
            QCOMPARE(bytes["total"].toInteger(), sum);
            QVERIFY(p["fits"].isBool());
            QVERIFY(p["flops_per_step"].toDouble() > 0);
            const QList<QByteArray> cells = csv[i + 1].split(',');
            QCOMPARE(p["value"].toInteger(), cells[0].toLongLong());
            QCOMPARE(bytes["activations"].toInteger(), cells[5].toLongLong());
            QCOMPARE(p["peak_bytes"].toInteger(), cells[9].toLongLong());
        }
        // One point is an array of one.
        const Run one = cli({ "sweep", file, "--from", "512", "--points", "1", "--json" });
        QCOMPARE(one.code, 0);
        QCOMPARE(QJsonDocument::fromJson(one.out).object()["points"].toArray().size(), 1);
    }

    void fitFindsTheBoundary()
    {
        QTemporaryDir dir;
        const QString file = writeTemp(dir, "s.json", kLlamaH100);
        const Run r = cli({ "fit", file, "--max", "micro_batch_size", "--json" });
        QCOMPARE(r.code, 0);
        const QJsonObject o = QJsonDocument::fromJson(r.out).object();
        const qint64 usable = o["usable_bytes"].toInteger();
        QVERIFY(o["value"].toInteger() > 1);
        QVERIFY(o["peak_bytes"].toInteger() <= usable);
        QCOMPARE(o["next_value"].toInteger(), o["value"].toInteger() + 1);
        QVERIFY(o["next_peak_bytes"].toInteger() > usable);

        const Run g = cli({ "fit", file, "--min-gpus", "--json" });
        QCOMPARE(g.code, 0);
        const QJsonObject go = QJsonDocument::fromJson(g.out).object();
        QVERIFY(go["value"].toInteger() >= 2);
        QVERIFY(go["next_peak_bytes"].toInteger() > go["usable_bytes"].toInteger());
    }

    void serveEstimateAndServingFits()
    {
        // resources/scenarios/llama-3.1-8b-vllm-rtx3090.json: vLLM 0.6.4 (rule 3) on the catalog's
        // RTX 3090 (24576 MiB) with the default 512 MiB of non-torch memory.
        const QString file = QStringLiteral(VRAMLAB_SOURCE_DIR "/resources/scenarios/llama-3.1-8b-vllm-rtx3090.json");
        const Run r = cli({ "serve-estimate", file, "--json" });
        QCOMPARE(r.code, 0);
        const QJsonObject s = QJsonDocument::fromJson(r.out).object()["serving"].toObject();
        QCOMPARE(s["engine"].toString(), QStringLiteral("vllm"));
        QCOMPARE(s["gpu_blocks"].toInteger(), qint64(2074));
        QCOMPARE(s["kv_cache_tokens"].toInteger(), qint64(2074 * 16));
        QCOMPARE(s["weights_bytes"].toInteger(), qint64(16094076928));
        QCOMPARE(s["log_lines"].toArray().at(2).toString(), QStringLiteral("# GPU blocks: 2074, # CPU blocks: 2048"));
        QCOMPARE(s["speed"].toObject()["decode_bound"].toString(), QStringLiteral("bandwidth-bound"));
        // estimate on a serving scenario prints the same report.
        const Run e = cli({ "estimate", file, "--json" });
        QCOMPARE(e.code, 0);
        QCOMPARE(QJsonDocument::fromJson(e.out).object()["serving"].toObject()["gpu_blocks"].toInteger(), qint64(2074));
        const Run t = cli({ "serve-estimate", file });
        QVERIFY(t.out.contains("Memory profiling results: total_gpu_memory=24.00GiB"));

        const Run c = cli({ "fit", file, "--max", "context", "--concurrency", "1", "--json" });
        QCOMPARE(c.code, 0);
        QCOMPARE(QJsonDocument::fromJson(c.out).object()["value"].toInteger(), qint64(27152));
        const Run n = cli({ "fit", file, "--max", "concurrency", "--context", "100000" });
        QCOMPARE(n.code, 3); // nothing fits: the engine would not start
        QVERIFY(n.out.contains("larger than the maximum number of tokens that can be stored in KV cache"));
        const QString gguf = QStringLiteral(VRAMLAB_SOURCE_DIR "/resources/scenarios/qwen2.5-32b-llamacpp-q4km.json");
        const Run g = cli({ "fit", gguf, "--max", "gpu_layers", "--json" });
        QCOMPARE(g.code, 0);
        QCOMPARE(QJsonDocument::fromJson(g.out).object()["value"].toInteger(), qint64(65));
        // A training option is refused for a serving fit, naming it.
        const Run bad = cli({ "fit", file, "--max", "micro_batch_size" });
        QCOMPARE(bad.code, 2);
        QVERIFY(bad.err.contains("--max"));
        // Training-only commands refuse a serving scenario, naming the file and the key.
        const Run sweep
            = cli({ "sweep", file, "--param", "run.batch_size", "--from", "1", "--to", "4", "--points", "2" });
        QCOMPARE(sweep.code, 2);
        QVERIFY(sweep.err.contains("llama-3.1-8b-vllm-rtx3090.json: run.mode:"));
        QCOMPARE(cli({ "timeline", file }).code, 2);
        // plan on a serving scenario is the serving planner: the deployments of 2 GPUs for 4
        // requests of 8,192 tokens, ranked by TPOT.
        const Run plan = cli({ "plan", file, "--gpus", "2", "--concurrency", "4", "--context", "8192", "--json" });
        QCOMPARE(plan.code, 0);
        const QJsonObject p = QJsonDocument::fromJson(plan.out).object();
        QCOMPARE(p["format"].toString(), QStringLiteral("vramlab.serving_plan"));
        const QJsonArray top = p["top"].toArray();
        QVERIFY(!top.isEmpty());
        QCOMPARE(top[0].toObject()["tensor_parallel"].toInteger() * top[0].toObject()["pipeline_parallel"].toInteger()
                * top[0].toObject()["data_parallel"].toInteger(),
            qint64(2));
        QVERIFY(top[0].toObject()["requests_held"].toInteger() >= 4);
        QCOMPARE(cli({ "plan", file, "--gpus", "1", "--concurrency", "100000", "--context", "8192" }).code, 3);
    }

    void timelineJsonAndCsv()
    {
        QTemporaryDir dir;
        const QString file = writeTemp(dir, "l.json", kLlamaH100);
        const Run est = cli({ "estimate", file, "--json" });
        const QJsonObject report = QJsonDocument::fromJson(est.out).object();
        const qint64 peak = report["peak_bytes"].toInteger();
        // Full checkpointing leaves the loss's fp32 logit gradients (4096 x 128,256 x 8 B) as the peak.
        QCOMPARE(report["peak_phase"].toString(), QStringLiteral("loss"));
        QCOMPARE(report["peak_micro_batch"].toInt(), 1);
        QVERIFY(report["peak_layer"].isNull());
        for (int step : { 1, 2 }) {
            const Run r = cli({ "timeline", file, "--json", "--step", QString::number(step) });
            QCOMPARE(r.code, 0);
            const QJsonObject o = QJsonDocument::fromJson(r.out).object();
            QCOMPARE(o["format"].toString(), QStringLiteral("vramlab.timeline"));
            QCOMPARE(o["step"].toInt(), step);
            QCOMPARE(o["layers"].toInt(), 32);
            QCOMPARE(o["micro_batches"].toInt(), 8);
            const QJsonArray events = o["events"].toArray();
            qint64 highest = 0;
            for (const QJsonValue& e : events) {
                const QJsonObject b = e.toObject()["bytes"].toObject();
                qint64 sum = 0;
                for (const QString& k : b.keys())
                    sum += b[k].toInteger();
                QCOMPARE(sum, e.toObject()["total"].toInteger());
                highest = std::max(highest, sum);
            }
            QCOMPARE(o["peak_bytes"].toInteger(), highest);
            if (step == 2)
                QCOMPARE(highest, peak); // the estimate's peak_bytes is step 2's
            else
                QVERIFY(highest <= peak);
        }
        const Run csv = cli({ "timeline", file, "--csv" });
        QCOMPARE(csv.code, 0);
        QVERIFY(csv.out.startsWith("index,phase,micro_batch,layer,weights,master_weights,gradients,optimizer_states,"
                                   "activations,temporaries,overhead,total,what\n"));
        const Run text = cli({ "timeline", file });
        QVERIFY(text.out.contains("<- peak"));
    }

    void planRanksSetups()
    {
        QTemporaryDir dir;
        const QString file = writeTemp(dir, "l.json", kLlamaH100);
        const Run r = cli({ "plan", file, "--gpus", "8", "--global-batch", "64", "--top", "5", "--json" });
        QCOMPARE(r.code, 0);
        const QJsonObject o = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(o["format"].toString(), QStringLiteral("vramlab.plan"));
        QCOMPARE(o["global_batch"].toInt(), 64);
        const QJsonArray top = o["top"].toArray();
        QCOMPARE(top.size(), 5);
        double last = 0;
        for (const QJsonValue& v : top) {
            const QJsonObject c = v.toObject();
            QVERIFY(c["fits"].toBool());
            QVERIFY(c["peak_bytes"].toInteger() <= qint64(85'520'809'984));
            QVERIFY(c["step_seconds"].toDouble() >= last);
            last = c["step_seconds"].toDouble();
            const int dp = 8 / (c["tensor_parallel"].toInt() * c["pipeline_parallel"].toInt());
            QCOMPARE(c["micro_batch_size"].toInt() * c["gradient_accumulation_steps"].toInt() * dp, 64);
        }
        QVERIFY(top[0].toObject()["why"].toString().startsWith("fastest"));
        const Run text = cli({ "plan", file, "--gpus", "8", "--top", "3" });
        QCOMPARE(text.code, 0);
        QVERIFY(text.out.contains(" 1. ") && text.out.contains(" 3. ") && !text.out.contains(" 4. "));
    }

    void presetsAndVersion()
    {
        const Run p = cli({ "presets" });
        QCOMPARE(p.code, 0);
        QVERIFY(p.out.contains("deepseek-v3"));
        QVERIFY(p.out.contains("671,026,419,200"));
        const Run v = cli({ "--version" });
        QCOMPARE(v.code, 0);
        QVERIFY(v.out.startsWith("vramlab-cli "));
        const Run h = cli({ "--help" });
        QCOMPARE(h.code, 0);
        QVERIFY(h.out.contains("estimate FILE"));
    }

    /// import-deepspeed: Trainer's ZeRO-3 config onto a scenario (stdout or a new file, never over the scenario
    /// it started from); each mapped key on stderr; a refusal names the config file and its key (exit 2).
    void importDeepSpeed()
    {
        QTemporaryDir dir;
        const QString scenario = writeTemp(dir, "s.json", kLlamaH100);
        const QByteArray before = kLlamaH100; // what writeTemp wrote
        const QString ds = data("deepspeed/hf-trainer-zero3.json");
        const QString out = dir.filePath("ds.json");
        const Run r = cli({ "import-deepspeed", ds, "--into", scenario, "-o", out });
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.startsWith("wrote " + out.toUtf8()));
        QVERIFY2(r.err.contains("zero_optimization.stage3_prefetch_bucket_size = auto (Hugging Face: 15,099,494)"),
            r.err.constData());
        const QJsonObject run = jsonFile(out)["run"].toObject();
        QCOMPARE(run["framework"].toString(), QStringLiteral("deepspeed"));
        QCOMPARE(run["parallelism"].toObject()["reduce_bucket_size"].toInteger(), qint64(4096 * 4096));
        QCOMPARE(cli({ "estimate", out }).code, 0);
        // -o naming the scenario itself is refused before anything is read or written.
        const Run same = cli({ "import-deepspeed", ds, "--into", scenario, "-o", scenario });
        QCOMPARE(same.code, 2);
        QVERIFY(same.err.contains("-o"));
        QFile f(scenario);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), before);
        const Run lamb
            = cli({ "import-deepspeed", data("deepspeed/dsexamples-bing-bert-lamb.json"), "--into", scenario });
        QCOMPARE(lamb.code, 2);
        QVERIFY2(lamb.err.contains("dsexamples-bing-bert-lamb.json") && lamb.err.contains("optimizer.type"),
            lamb.err.constData());
    }

    /// torchtitan's own llama3_8b.toml@9dec370 into an 8-GPU scenario: Llama 3 8B under FSDP2 on all 8.
    void importTorchtitan()
    {
        QTemporaryDir dir;
        const QString scenario = writeTemp(dir, "s.json", kLlamaH100);
        const QString toml = data("torchtitan/llama3_8b.toml");
        const QString out = dir.filePath("titan.json");
        const Run r = cli({ "import-torchtitan", toml, "--into", scenario, "-o", out });
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.startsWith("wrote " + out.toUtf8()));
        QVERIFY2(r.err.contains("activation_checkpoint.mode = selective (op) -> run.checkpointing = selective-op"),
            r.err.constData());
        QVERIFY(r.err.contains("left out: optimizer.lr"));
        const QJsonObject doc = jsonFile(out);
        QCOMPARE(doc["run"].toObject()["framework"].toString(), QStringLiteral("torchtitan"));
        QCOMPARE(doc["model"].toObject()["preset"].toString(), QStringLiteral("llama-3-8b"));
        QCOMPARE(cli({ "estimate", out }).code, 0);
        const Run same = cli({ "import-torchtitan", toml, "--into", scenario, "-o", scenario });
        QCOMPARE(same.code, 2);
        const Run debug = cli({ "import-torchtitan", data("torchtitan/debug_model.toml"), "--into", scenario });
        QCOMPARE(debug.code, 2);
        QVERIFY2(debug.err.contains("debug_model.toml") && debug.err.contains("model.flavor"), debug.err.constData());
    }

    /// import-trl: the run as trl sft reads its YAML; a hostile YAML (a Python tag) is refused naming the line.
    void importTrl()
    {
        QTemporaryDir dir;
        const QString scenario = writeTemp(dir, "s.json", kLlamaH100);
        const QString out = dir.filePath("trl.json");
        const Run r = cli({ "import-trl", data("trl/qlora-llama3-8b.yaml"), "--into", scenario, "-o", out });
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.startsWith("wrote " + out.toUtf8()));
        QVERIFY2(r.err.contains("optim = paged_adamw_8bit -> run.optimizer = adamw-8bit, optimizer_impl paged-8bit"),
            r.err.constData());
        QVERIFY(r.err.contains("left out: learning_rate"));
        const QJsonObject run = jsonFile(out)["run"].toObject();
        QCOMPARE(run["framework"].toString(), QStringLiteral("hf-transformers"));
        QCOMPARE(run["finetune"].toObject()["method"].toString(), QStringLiteral("qlora"));
        QCOMPARE(run["parallelism"].toObject()["gpus"].toInt(), 8); // the scenario's: the YAML has no num_processes
        QCOMPARE(cli({ "estimate", out }).code, 0);
        QCOMPARE(cli({ "import-trl", data("trl/qlora-llama3-8b.yaml"), "--into", scenario, "-o", scenario }).code, 2);
        const QString hostile
            = writeTemp(dir, "evil.yaml", "max_length: !!python/object/apply:os.system [\"touch x\"]\n");
        const Run bad = cli({ "import-trl", hostile, "--into", scenario });
        QCOMPARE(bad.code, 2);
        QVERIFY2(bad.err.contains("evil.yaml: line 1:") && bad.err.contains("tags"), bad.err.constData());
    }

    /// import-axolotl: axolotl v0.13.0's own QLoRA example; its LoRA-kernels example is refused naming the key.
    void importAxolotl()
    {
        QTemporaryDir dir;
        const QString scenario = writeTemp(dir, "s.json", kLlamaH100);
        const QString out = dir.filePath("axolotl.json");
        const Run r = cli({ "import-axolotl", data("axolotl/llama-3-qlora.yml"), "--into", scenario, "-o", out });
        QCOMPARE(r.code, 0);
        QVERIFY2(r.err.contains("optimizer = paged_adamw_32bit -> run.optimizer = adamw, optimizer_impl paged-32bit"),
            r.err.constData());
        QVERIFY(r.err.contains("left out: wandb_project") || r.err.contains("left out: datasets"));
        const QJsonObject run = jsonFile(out)["run"].toObject();
        QCOMPARE(run["finetune"].toObject()["method"].toString(), QStringLiteral("qlora"));
        QCOMPARE(run["finetune"].toObject()["kbit_preparation"].toString(), QStringLiteral("none"));
        QCOMPARE(cli({ "estimate", out }).code, 0);
        const Run kernels = cli({ "import-axolotl", data("axolotl/llama-3-lora-1b-kernels.yml"), "--into", scenario });
        QCOMPARE(kernels.code, 2);
        QVERIFY2(kernels.err.contains("lora-1b-kernels.yml: lora_mlp_kernel:"), kernels.err.constData());
    }

    void importHf()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath("qwen.json");
        const Run r = cli({ "import-hf", data("hf/qwen2.5-7b.json"), "-o", out });
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.endsWith("(qwen2), 7,615,616,512 parameters\n"), r.out.constData()); // says what it wrote
        QVERIFY(r.out.startsWith("wrote " + out.toUtf8()));
        const Run e = cli({ "estimate", out, "--json" });
        QCOMPARE(e.code, 0);
        QCOMPARE(
            QJsonDocument::fromJson(e.out).object()["params"].toObject()["total"].toInteger(), qint64(7'615'616'512));
        // Issue 19: Qwen1.5-MoE-A2.7B was written as 1,855,703,040 parameters; the checkpoint
        // holds 28,631,568,384 bf16 bytes (model.safetensors.index.json) = 14,315,784,192.
        const QString moe = dir.filePath("moe.json");
        const Run w = cli({ "import-hf", data("hf/qwen1.5-moe-a2.7b.json"), "-o", moe });
        QCOMPARE(w.code, 0);
        // Qwen publishes "2.7B activated": 4 of 60 routed experts + the shared expert per token.
        QVERIFY2(w.out.endsWith("14,315,784,192 parameters (2,689,173,504 active per token)\n"), w.out.constData());
        const Run m = cli({ "estimate", moe, "--json" });
        QCOMPARE(m.code, 0);
        QCOMPARE(
            QJsonDocument::fromJson(m.out).object()["params"].toObject()["total"].toInteger(), qint64(14'315'784'192));
        // gpt-oss: an inference scenario (its training is not modelled), and a warning that the MXFP4
        // experts are held in the scenario's precision.
        const QString oss = dir.filePath("oss.json");
        const Run g = cli({ "import-hf", data("hf/gpt-oss-20b.json"), "-o", oss });
        QCOMPARE(g.code, 0);
        QVERIFY2(g.out.contains("(gpt_oss), 20,914,757,184 parameters"), g.out.constData());
        QVERIFY2(g.err.contains("warning: quantization_config") && g.err.contains("MXFP4"), g.err.constData());
        const Run ge = cli({ "estimate", oss, "--json" });
        QCOMPARE(ge.code, 0);
        QCOMPARE(
            QJsonDocument::fromJson(ge.out).object()["params"].toObject()["total"].toInteger(), qint64(20'914'757'184));
    }

    // A hybrid Mamba-2 model: import-hf counts it and writes a vLLM serving scenario; the shipped example
    // serves it with the engine's own lines; its concurrency fit counts both kinds of blocks.
    void hybridModel()
    {
        QTemporaryDir dir;
        const Run imp
            = cli({ "import-hf", QStringLiteral(VRAMLAB_SOURCE_DIR "/tests/data/hf/nemotron-h-8b-base-8k.json"), "-o",
                dir.filePath(QStringLiteral("nemotron.json")) });
        QCOMPARE(imp.code, 0);
        QVERIFY2(imp.out.contains("8,100,852,736 parameters"), imp.out.constData());
        QVERIFY(imp.out.contains("served by vLLM"));
        const QString file
            = QStringLiteral(VRAMLAB_SOURCE_DIR "/resources/scenarios/nemotron-nano-9b-v2-vllm-h100.json");
        const Run t = cli({ "serve-estimate", file });
        QCOMPARE(t.code, 0);
        QVERIFY(t.out.contains("Setting attention block size to 1312 tokens"));
        QVERIFY(t.out.contains("of which Mamba-2 states"));
        // Gated DeltaNet (Qwen3.6-35B-A3B, served without its vision tower): a Gated DeltaNet state per sequence of
        // 30 x (3 x 8,192 x 2 B + 32 x 128 x 128 x 4 B) and a block of 16 x cdiv(2,146,304, 16 x 2,048) tokens.
        const Run q = cli({ "serve-estimate",
            QStringLiteral(VRAMLAB_SOURCE_DIR "/resources/scenarios/qwen3.6-35b-a3b-fp8-vllm-h100.json") });
        QCOMPARE(q.code, 0);
        QVERIFY2(q.out.contains("Setting attention block size to 1056 tokens"), q.out.constData());
        QVERIFY(q.out.contains("of which Gated DeltaNet states") && q.out.contains("61.41 MiB a sequence"));
        const Run q35 = cli({ "import-hf", QStringLiteral(VRAMLAB_SOURCE_DIR "/tests/data/hf/qwen3.5-27b.json"), "-o",
            dir.filePath(QStringLiteral("qwen35.json")) });
        QCOMPARE(q35.code, 0);
        QVERIFY2(q35.out.contains("27,356,728,560 parameters"), q35.out.constData());
        const Run j = cli({ "estimate", file, "--json" });
        QCOMPARE(j.code, 0);
        const QJsonObject rank
            = QJsonDocument::fromJson(j.out).object()["serving"].toObject()["ranks"].toArray().first().toObject();
        QCOMPARE(rank["state_bytes_per_sequence"].toInteger(), qint64(27) * 5'316'608); // fp32 scan state
        const Run fit = cli({ "fit", file, "--max", "concurrency", "--context", "32768", "--json" });
        QCOMPARE(fit.code, 0);
        QVERIFY(QJsonDocument::fromJson(fit.out).object()["value"].toInteger() > 0);
        // Training is refused, naming the key and the reason.
        const Run train = cli({ "timeline", file });
        QCOMPARE(train.code, 2);
    }

    void validate()
    {
        const Run ok = cli({ "validate", data("scenarios/gpt2-tiny.json") });
        QCOMPARE(ok.code, 0);
        QVERIFY(ok.out.contains("valid"));
        // Every shipped scenario validates, the hybrid serving ones by their engine's budget.
        const QDir shipped(QStringLiteral(VRAMLAB_SOURCE_DIR "/resources/scenarios"));
        const QStringList files = shipped.entryList({ QStringLiteral("*.json") }, QDir::Files);
        QVERIFY(files.size() >= 7);
        for (const QString& f : files) {
            const Run r = cli({ "validate", shipped.filePath(f) });
            QVERIFY2(r.code == 0, qPrintable(f + QStringLiteral(": ") + r.err));
        }
    }

    void badInput_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QByteArray>("file");
        QTest::addColumn<QByteArray>("expectInError");
        QTest::newRow("zero stage") << QStringList { "estimate",
            "@" } << QByteArray(R"({"model": {"preset": "gpt2"}, "run": {"parallelism": {"zero_stage": 5}}})")
                                    << QByteArray("run.parallelism.zero_stage: expected an integer from 0 to 3, got 5");
        QTest::newRow("broken json") << QStringList { "estimate", "@", "--json" } << QByteArray("{\"model\": ")
                                     << QByteArray("not valid JSON at line 1");
        QTest::newRow("missing key") << QStringList { "validate", "@" }
                                     << QByteArray(R"({"model": {"hidden_size": 8}})")
                                     << QByteArray("model.vocab_size: required");
        QTest::newRow("bad sweep param") << QStringList { "sweep", "@", "--param",
            "run.nope" } << QByteArray(R"({"model": {"preset": "gpt2"}, "run": {"sequence_length": 512}})")
                                         << QByteArray("--param: expected one of");
        QTest::newRow("fit without gpu") << QStringList { "fit", "@", "--max",
            "micro_batch_size" } << QByteArray(R"({"model": {"preset": "gpt2"}, "run": {"sequence_length": 512}})")
                                         << QByteArray("run.gpu: required");
        QTest::newRow("timeline step") << QStringList { "timeline", "@", "--step",
            "3" } << QByteArray(R"({"model": {"preset": "gpt2"}, "run": {"sequence_length": 512}})")
                                       << QByteArray("--step: expected an integer from 1 to 2");
        QTest::newRow("timeline inference")
            << QStringList { "timeline", "@" }
            << QByteArray(R"({"model": {"preset": "gpt2"}, "run": {"mode": "inference"}})")
            << QByteArray("run.mode: expected training");
        QTest::newRow("plan without gpu")
            << QStringList { "plan", "@", "--gpus", "8" }
            << QByteArray(R"({"model": {"preset": "gpt2"}, "run": {"sequence_length": 512}})")
            << QByteArray("run.gpu: required to plan");
        QTest::newRow("plan batch")
            << QStringList { "plan", "@", "--gpus", "8", "--global-batch", "3", "--max-tp", "1", "--max-pp", "1" }
            << QByteArray(R"({"model": {"preset": "gpt2"}, "run": {"sequence_length": 512, "gpu": "h100-sxm-80gb"}})")
            << QByteArray("--global-batch: expected a multiple");
        QTest::newRow("missing file") << QStringList { "estimate", "/no/such/file.json" } << QByteArray()
                                      << QByteArray("/no/such/file.json: cannot open");
        QTest::newRow("unknown option") << QStringList { "estimate", "@",
            "--jsn" } << QByteArray(R"({"model": {"preset": "gpt2"}, "run": {"sequence_length": 512}})")
                                        << QByteArray("--jsn: unknown option");
        // import-hf refuses what it cannot account for, and applies the scenario reader's limits (issues 17, 19).
        QTest::newRow("hf unknown model_type")
            << QStringList { "import-hf", "@" } << QByteArray(R"({"model_type": "bert", "vocab_size": 30522})")
            << QByteArray("model_type: model_type \"bert\" is not a family VRAM Lab models");
        QTest::newRow("hf unknown key") << QStringList { "import-hf",
            "@" } << QByteArray(R"({"model_type": "llama", "vocab_size": 100, "hidden_size": 64, "num_hidden_layers": 2,
                                               "num_attention_heads": 4, "intermediate_size": 128, "my_key": 1})")
                                        << QByteArray("my_key: model_type \"llama\": cannot account for my_key");
        QTest::newRow("hf hidden beyond reader")
            << QStringList { "import-hf", "@" }
            << QByteArray(R"({"model_type": "llama", "vocab_size": 100, "hidden_size": 1000000000,
                                                        "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128})")
            << QByteArray(": hidden_size: expected an integer from 1 to 1,000,000");
        QTest::newRow("hf top-k above experts")
            << QStringList { "import-hf", "@" }
            << QByteArray(R"({"model_type": "mixtral", "vocab_size": 100, "hidden_size": 64, "num_hidden_layers": 2,
                                                       "num_attention_heads": 4, "intermediate_size": 128, "num_local_experts": 8, "num_experts_per_tok": 9})")
            << QByteArray(": num_experts_per_tok: expected at most model.moe.num_experts (8)");
        QTest::newRow("too large") << QStringList { "estimate",
            "@" } << QByteArray(R"({"model": {"vocab_size": 1000, "hidden_size": 1000000, "num_layers": 100000,
                                          "num_heads": 100000, "ffn_hidden_size": 10000000},
                                          "run": {"sequence_length": 100000000, "attention": "eager"}})")
                                   << QByteArray("too large");
    }
    void badInput()
    {
        QFETCH(QStringList, args);
        QFETCH(QByteArray, file);
        QFETCH(QByteArray, expectInError);
        QTemporaryDir dir;
        const QString path = writeTemp(dir, "bad.json", file);
        for (QString& a : args)
            if (a == QLatin1String("@"))
                a = path;
        const Run r = cli(args);
        QCOMPARE(r.code, 2);
        QVERIFY2(r.out.isEmpty(), r.out.constData());
        QCOMPARE(r.err.count('\n'), 1);
        QVERIFY2(r.err.contains(expectInError), r.err.constData());
        if (!file.isEmpty() && !expectInError.startsWith("--")) // option errors name the option, not the file
            QVERIFY2(r.err.startsWith(path.toUtf8()), r.err.constData());
    }

    // Issue 17: a full disk (here /dev/full) cut the output and still exited 0.
    void failedWriteToStandardOutputExits1_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::newRow("estimate") << QStringList { "estimate", data("scenarios/llama-tiny.json") };
        QTest::newRow("estimate --json") << QStringList { "estimate", data("scenarios/llama-tiny.json"), "--json" };
        QTest::newRow("timeline --json") << QStringList { "timeline", data("scenarios/llama-tiny.json"), "--json" };
        QTest::newRow("timeline") << QStringList { "timeline", data("scenarios/llama-tiny.json") };
        QTest::newRow("import-hf") << QStringList { "import-hf", data("hf/qwen2.5-7b.json") };
        QTest::newRow("presets") << QStringList { "presets" };
        QTest::newRow("--help") << QStringList { "--help" };
    }
    void failedWriteToStandardOutputExits1()
    {
        QFETCH(QStringList, args);
        if (!QFile::exists(QStringLiteral("/dev/full")))
            QSKIP("no /dev/full here");
        QProcess p;
        p.setStandardOutputFile(QStringLiteral("/dev/full"));
        p.start(QStringLiteral(VRAMLAB_CLI), args);
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        QCOMPARE(p.exitCode(), 1);
        const QByteArray err = p.readAllStandardError();
        QVERIFY2(
            err.endsWith("vramlab-cli: cannot write to standard output: No space left on device\n"), err.constData());
    }

    // Issue 17: "-o $'\xff.json'" wrote a file and exited 0; arguments must be UTF-8.
    void argumentsThatAreNotUtf8AreRefused()
    {
        QTemporaryDir dir;
        QProcess p;
        p.setWorkingDirectory(dir.path());
        // QProcess takes QStrings; the shell passes the raw byte 0xFF.
        p.start(QStringLiteral("/bin/sh"),
            { "-c", R"sh(exec "$0" import-hf "$1" -o "$(printf '\377.json')")sh", QStringLiteral(VRAMLAB_CLI),
                data("hf/qwen2.5-7b.json") });
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 2);
        const QByteArray err = p.readAllStandardError();
        QCOMPARE(err.count('\n'), 1);
        QVERIFY2(err.contains("argument 4 \"\\xFF.json\": not valid UTF-8"), err.constData());
        QVERIFY(QDir(dir.path()).entryList(QDir::Files | QDir::NoDotAndDotDot).isEmpty());
    }

    void emptyFileNameSaysSo()
    {
        const Run out = cli({ "import-hf", data("hf/qwen2.5-7b.json"), "-o", "" });
        QCOMPARE(out.code, 2);
        QVERIFY2(out.err.contains("-o: the file name is empty"), out.err.constData());
        QVERIFY(out.out.isEmpty());
        const Run in = cli({ "estimate", "" });
        QCOMPARE(in.code, 2);
        QVERIFY2(in.err.contains("the file name is empty"), in.err.constData());
    }

    void unknownCommand()
    {
        const Run r = cli({ "frobnicate" });
        QCOMPARE(r.code, 2);
        QVERIFY(r.out.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
