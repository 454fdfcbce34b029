// SPDX-License-Identifier: MIT
// vramlab-probe as CI runs it, without a GPU: exit 3 with one line naming why, exit 2 on
// bad input (checked before any device is touched), nothing half-written on stdout.
#include "program_run.h"

#include <QTemporaryDir>
#include <QtTest>

namespace {

using vramlab::test::Run;

Run probe(const QStringList& args)
{
    return vramlab::test::runProgram(QStringLiteral(VRAMLAB_PROBE), args);
}
QString data(const char* name)
{
    return vramlab::test::dataFile(name);
}

bool oneLine(const QByteArray& text)
{
    return text.endsWith('\n') && text.count('\n') == 1;
}

} // namespace

class TestProbeCli : public QObject {
    Q_OBJECT
    bool m_gpu = false;

private slots:
    void initTestCase() { m_gpu = probe({ "info" }).code == 0; }

    void infoWithoutGpuExits3WithOneLine()
    {
        if (m_gpu)
            QSKIP("a usable GPU is present: `vramlab-probe info` succeeded");
        for (const QStringList& args : { QStringList { "info" }, QStringList { "info", "--json" } }) {
            const Run r = probe(args);
            QCOMPARE(r.code, 3);
            QVERIFY(r.out.isEmpty());
            QVERIFY2(oneLine(r.err), r.err.constData());
            QVERIFY2(r.err.startsWith("vramlab-probe: no usable GPU: "), r.err.constData());
        }
    }

    void fitAndBenchWithoutGpuExit3()
    {
        if (m_gpu)
            QSKIP("a usable GPU is present");
        for (const char* cmd : { "fit", "bench" }) {
            const Run r = probe({ cmd, data("scenarios/llama-tiny.json"), "--json" });
            QCOMPARE(r.code, 3);
            QVERIFY(r.out.isEmpty());
            QVERIFY2(oneLine(r.err) && r.err.startsWith("vramlab-probe: no usable GPU: "), r.err.constData());
        }
    }

    void badInputExits2BeforeTouchingTheDevice_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message"); // in the one line on stderr
        QTemporaryDir dir;
        QTest::newRow("missing file") << QStringList { "fit", "/nonexistent/s.json" }
                                      << "/nonexistent/s.json: cannot open the file";
        QTest::newRow("no scenario") << QStringList { "fit" } << "SCENARIO.json: expected a scenario file";
        QTest::newRow("unknown option") << QStringList { "bench", data("scenarios/llama-tiny.json"), "--fast" }
                                        << "--fast: expected a known option";
        QTest::newRow("bad dtype") << QStringList { "bench", data("scenarios/llama-tiny.json"), "--dtype", "int9" }
                                   << "--dtype: expected one of fp32, tf32, bf16, fp16, fp8, got \"int9\"";
        QTest::newRow("bad samples") << QStringList { "bench", data("scenarios/llama-tiny.json"), "--samples", "0" }
                                     << "--samples: expected an integer from 1 to 1000";
        QTest::newRow("bad margin") << QStringList { "fit", data("scenarios/llama-tiny.json"), "--margin-mib", "lots" }
                                    << "--margin-mib: expected an integer from 0 to 1073741824, got \"lots\"";
        QTest::newRow("unknown command") << QStringList { "measure" } << "unknown command \"measure\"";
        QTest::newRow("info takes no file") << QStringList { "info", "x.json" } << "x.json: expected a known option";
    }
    void badInputExits2BeforeTouchingTheDevice()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const Run r = probe(args);
        QCOMPARE(r.code, 2);
        QVERIFY(r.out.isEmpty());
        QVERIFY2(oneLine(r.err), r.err.constData());
        QVERIFY2(QString::fromUtf8(r.err).contains(message), r.err.constData());
    }

    void invalidScenarioNamesFileAndKey()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("bad.json");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(
            R"({"format": "vramlab.scenario", "version": 1, "model": {"preset": "llama-3-8b", "num_kv_heads": 3}})");
        f.close();
        for (const char* cmd : { "fit", "bench" }) {
            const Run r = probe({ cmd, path });
            QCOMPARE(r.code, 2);
            QVERIFY2(oneLine(r.err), r.err.constData());
            QVERIFY2(r.err.startsWith(
                         path.toUtf8() + ": model.num_kv_heads: expected a divisor of model.num_heads (32), got 3"),
                r.err.constData());
        }
    }

    void helpAndVersion()
    {
        const Run help = probe({ "--help" });
        QCOMPARE(help.code, 0);
        QVERIFY(help.out.contains("fit SCENARIO.json"));
        QCOMPARE(probe({}).code, 2);
        const Run v = probe({ "--version" });
        QCOMPARE(v.code, 0);
        QVERIFY(v.out.startsWith("vramlab-probe "));
    }
};

QTEST_GUILESS_MAIN(TestProbeCli)
#include "tst_probe_cli.moc"
