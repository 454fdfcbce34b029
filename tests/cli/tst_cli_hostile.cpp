// SPDX-License-Identifier: MIT
// vramlab-cli against hostile input and past its stated limits: one short, printable error
// line, exit 2, never a hang; no verdict without a GPU; plan rows that name every setting.
#include "program_run.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>

namespace {

using vramlab::test::Run;

Run cli(const QStringList& args)
{
    return vramlab::test::runProgram(QStringLiteral(VRAMLAB_CLI), args);
}

QString writeTemp(const QTemporaryDir& dir, const char* name, const QByteArray& text)
{
    const QString path = dir.filePath(QString::fromUtf8(name));
    QFile f(path);
    if (f.open(QIODevice::WriteOnly))
        f.write(text);
    return path;
}

} // namespace

class TestCliHostile : public QObject {
    Q_OBJECT
private slots:
    void errorsArePrintableAndShort()
    {
        QTemporaryDir dir;
        const QByteArray huge(3'000'000, 'x');
        const QByteArray head
            = R"({"format":"vramlab.scenario","version":1,"model":{"preset":"gpt2"},"run":{"precision":)";
        const QString big = writeTemp(dir, "big.json", head + '"' + huge + "\"}}");
        Run r = cli({ "estimate", big });
        QCOMPARE(r.code, 2);
        QVERIFY(r.out.isEmpty());
        QVERIFY2(r.err.size() < 2000, QByteArray::number(r.err.size()).constData()); // was a 3 MB line
        QCOMPARE(r.err.count('\n'), 1);
        const QString esc = writeTemp(dir, "esc.json", head + "\"\\u001b[31mred\\nnext\"}}");
        r = cli({ "estimate", esc });
        QCOMPARE(r.code, 2);
        QVERIFY(!r.err.contains('\x1b'));
        QVERIFY2(r.err.contains("\\u001b[31mred\\nnext"), r.err.constData());
        QCOMPARE(r.err.count('\n'), 1);
    }

    void nonRegularFilesAreRefusedWithoutHanging()
    {
        QTemporaryDir dir;
        const QByteArray fifo = dir.filePath(QStringLiteral("pipe.json")).toLocal8Bit();
        QCOMPARE(::mkfifo(fifo.constData(), 0600), 0);
        QElapsedTimer t;
        t.start();
        const Run r = cli({ "estimate", QString::fromLocal8Bit(fifo) });
        QCOMPARE(r.code, 2);
        QVERIFY(r.err.contains("not a regular file"));
        QVERIFY(t.elapsed() < 20000);
        QCOMPARE(cli({ "estimate", dir.path() }).code, 2);
    }

    void duplicateKeysAreRefused()
    {
        QTemporaryDir dir;
        const QString dup = writeTemp(dir, "dup.json",
            R"({"format":"vramlab.scenario","version":1,"model":{"preset":"gpt2"},"run":{"micro_batch_size":1,"micro_batch_size":64}})");
        const Run r = cli({ "estimate", dup });
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("run.micro_batch_size: the key appears twice"), r.err.constData());
    }

    void presetsTakesNoArguments()
    {
        const Run r = cli({ "presets", "x" });
        QCOMPARE(r.code, 2);
        QVERIFY(r.out.isEmpty());
        QCOMPARE(cli({ "presets" }).code, 0);
    }

    void noVerdictWithoutAGpu()
    {
        QTemporaryDir dir;
        const QString noGpu = writeTemp(dir, "nogpu.json",
            R"({"format":"vramlab.scenario","version":1,"model":{"preset":"llama-3-70b"},"run":{"sequence_length":8192}})");
        Run r = cli({ "estimate", noGpu, "--json" });
        QCOMPARE(r.code, 0);
        const QJsonObject o = QJsonDocument::fromJson(r.out).object();
        QVERIFY(o.contains("fits") && o["fits"].isNull());
        QVERIFY(o["usable_bytes"].isNull());
        r = cli({ "sweep", noGpu, "--param", "run.micro_batch_size", "--from", "1", "--to", "2", "--points", "2",
            "--csv" });
        QCOMPARE(r.code, 0);
        // An empty fits cell; lower_bound is the peak's own (no GPU needed).
        QVERIFY2(r.out.split('\n').at(1).endsWith(",,false"), r.out.constData());
    }

    void timelineRefusesPastItsEventLimit()
    {
        QTemporaryDir dir;
        const QString deep = writeTemp(dir, "deep.json",
            R"({"format":"vramlab.scenario","version":1,"model":{"preset":"gpt2","num_layers":100000},"run":{"sequence_length":1024,"gpu":"h100-sxm-80gb"}})");
        QElapsedTimer t;
        t.start();
        const Run r = cli({ "timeline", deep, "--json" });
        QCOMPARE(r.code, 2);
        QVERIFY(r.out.isEmpty());
        QVERIFY2(r.err.contains("the timeline records at most 200,000 events"), r.err.constData());
        QVERIFY(t.elapsed() < 20000); // 4.6 s of JSON before, on this 2-core machine
    }

    void fewestGpusWhenNothingFitsSaysSo()
    {
        // Llama-3-70B without ZeRO keeps its 140 GB of bf16 weights on every GPU: no count of 24 GB cards fits.
        QTemporaryDir dir;
        const QString file = writeTemp(
            dir, "70b-4090.json", R"({"format":"vramlab.scenario","version":1,"model":{"preset":"llama-3-70b"},
            "run":{"sequence_length":4096,"parallelism":{"gpus":8,"zero_stage":0},"gpu":"rtx-4090-24gb"}})");
        Run r = cli({ "fit", file, "--min-gpus" });
        QCOMPARE(r.code, 3); // answered: nothing fits
        QVERIFY2(r.out.startsWith("nothing fits on"), r.out.constData());
        QVERIFY(r.out.contains("even 1,000,000 GPUs leave"));
        QVERIFY(!r.out.contains("= 0 needs"));
        r = cli({ "fit", file, "--min-gpus", "--json" });
        QCOMPARE(r.code, 3);
        const QJsonObject o = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(o["fits"].toBool(true), false);
        QVERIFY(o["next_peak_bytes"].toDouble() > 24e9);
    }

    void everyCommandHasItsOwnHelp_data()
    {
        QTest::addColumn<QString>("command");
        for (const char* c :
            { "estimate", "sweep", "fit", "timeline", "plan", "presets", "gpus", "import-hf", "validate" })
            QTest::newRow(c) << QString::fromLatin1(c);
    }
    void everyCommandHasItsOwnHelp()
    {
        QFETCH(QString, command);
        const Run r = cli({ command, "--help" });
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.startsWith("usage: vramlab-cli " + command.toUtf8() + ' '), r.out.constData());
        QVERIFY(r.err.isEmpty());
    }

    void gpusListsTheCatalog()
    {
        const Run r = cli({ "gpus" });
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.contains("h100-sxm-80gb"));
        QVERIFY(r.out.contains("79.65 GiB")); // 81,559 MiB as the driver reports an H100 SXM
        const Run j = cli({ "gpus", "--json" });
        QCOMPARE(j.code, 0);
        const QJsonArray arr = QJsonDocument::fromJson(j.out).array();
        QVERIFY(arr.size() >= 12);
        bool h100 = false;
        for (const QJsonValue& v : arr)
            if (v.toObject()["name"].toString() == QStringLiteral("h100-sxm-80gb")) {
                h100 = true;
                QCOMPARE(v.toObject()["memory_bytes"].toInteger(), qint64(81559) * 1024 * 1024);
                QCOMPARE(v.toObject()["bf16_tflops"].toDouble(), 989.4);
            }
        QVERIFY(h100);
        QCOMPARE(cli({ "gpus", "x" }).code, 2);
    }

    void planRowsNameEverySetting()
    {
        QTemporaryDir dir;
        const QString seventy
            = writeTemp(dir, "70b.json", R"({"format":"vramlab.scenario","version":1,"model":{"preset":"llama-3-70b"},
            "run":{"sequence_length":4096,"gradient_accumulation_steps":4,"parallelism":{"gpus":8,"zero_stage":3},"gpu":"h100-sxm-80gb"}})");
        const Run r = cli({ "plan", seventy, "--top", "50" });
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains("+ sequence parallel"), r.out.constData());
        const QRegularExpression tensorParallel(QStringLiteral("TP [2-8]\\b"));
        for (const QString& line : QString::fromUtf8(r.out).split(QLatin1Char('\n')))
            if (line.contains(tensorParallel))
                QVERIFY2(line.contains(QStringLiteral("sequence parallel")), qPrintable(line));
        const Run j = cli({ "plan", seventy, "--json", "--top", "50" });
        QCOMPARE(j.code, 0);
        QVERIFY(j.out.contains("\"sequence_parallel\": true"));
    }
};

QTEST_GUILESS_MAIN(TestCliHostile)
#include "tst_cli_hostile.moc"
