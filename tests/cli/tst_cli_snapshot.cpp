// SPDX-License-Identifier: MIT
// vramlab-cli snapshot: the text, JSON and CSV of a generated PyTorch memory snapshot, the
// comparison with a scenario, and hostile pickles refused in one line with exit 2.
#include "program_run.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

namespace {

using vramlab::test::Run;

Run cli(const QStringList& args)
{
    return vramlab::test::runProgram(QStringLiteral(VRAMLAB_CLI), args);
}
QString snap(const char* name)
{
    return vramlab::test::dataFile("snapshots/") + QString::fromUtf8(name);
}

} // namespace

class TestCliSnapshot : public QObject {
    Q_OBJECT
private slots:
    void textNamesPeaksBlocksAndRules()
    {
        const Run r = cli({ "snapshot", snap("step1_protocol4.pickle") });
        QCOMPARE(r.code, 0);
        QVERIFY(r.err.isEmpty());
        QVERIFY2(
            r.out.contains("peak allocated       31.0 MiB  (32505856 bytes, entry 26, optimizer)"), r.out.constData());
        QVERIFY(r.out.contains("peak reserved        64.0 MiB  (67108864 bytes)"));
        QVERIFY(r.out.contains("    Optimizer states        12.0 MiB\n"));
        QVERIFY(r.out.contains("         6.0 MiB  Temporaries  adam.py:500:_multi_tensor_adam\n"
                               "                  because: a working buffer of the optimizer step"));
        QVERIFY(r.out.contains("because: allocated in adam.py:99:_init_group (the optimizer creating its state)"));
    }

    void jsonAndCsv()
    {
        QTemporaryDir dir;
        const QString csv = dir.filePath(QStringLiteral("curve.csv"));
        const Run r = cli({ "snapshot", snap("step2_protocol5.pickle"), "--json", "--csv", csv, "--scenario",
            vramlab::test::dataFile("scenarios/gpt2-tiny.json") });
        QCOMPARE(r.code, 0);
        const QJsonObject j = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(j.value("format").toString(), QStringLiteral("vramlab.snapshot"));
        const QJsonArray devices = j.value("snapshot").toObject().value("devices").toArray();
        QCOMPARE(devices.size(), 2);
        const QJsonObject d0 = devices.at(0).toObject();
        QCOMPARE(d0.value("peak_allocated_bytes").toInteger(), 34603008);
        QCOMPARE(d0.value("category_bytes_at_peak").toObject().value("activations").toInteger(), 3145728);
        QCOMPARE(d0.value("alive_at_peak").toArray().size(), 12);
        const QJsonObject cmp = j.value("comparison").toObject();
        QCOMPARE(cmp.value("measured_peak_allocated_bytes").toInteger(), 34603008);
        QCOMPARE(cmp.value("categories").toArray().size(), 6);
        QVERIFY(cmp.value("explanations").toArray().size() >= 2);
        QFile f(csv);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = f.readAll().split('\n');
        QCOMPARE(lines.front(), QByteArray("device,event,time_us,allocated_bytes,reserved_bytes,phase,step_fraction"));
        QCOMPARE(lines.at(1), QByteArray("0,-1,1700000000000100,18874368,33554432,unknown,0.000000"));
        // header; device 0: the start, 9 allocs, 1 segment_alloc, 9 free_completed; device 1: 3; the last newline
        QCOMPARE(lines.size(), 1 + 20 + 3 + 1);
    }

    void comparisonText()
    {
        const Run r = cli({ "snapshot", snap("step1_protocol2.pickle"), "--scenario",
            vramlab::test::dataFile("scenarios/gpt2-tiny.json") });
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.contains("measured (device 0) beside predicted (scenario "));
        QVERIFY(r.out.contains("why they differ:\n  - Peak allocated: measured 31.00 MiB (optimizer) against "));
    }

    void hostileFilesExitTwoInOneLine_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("says");
        QTest::newRow("os.system")
            << "hostile/global_reduce.pickle"
            << "byte 20: opcode GLOBAL (0x63): refused: it imports a Python object by name (posix.system)";
        QTest::newRow("STACK_GLOBAL") << "hostile/stack_global.pickle"
                                      << "byte 41: opcode STACK_GLOBAL (0x93): refused";
        QTest::newRow("memo bomb") << "hostile/memo_bomb.pickle"
                                   << "a memo expansion bomb";
        QTest::newRow("wrong type") << "hostile/size_is_a_string.pickle"
                                    << "device_traces[0][3].size: expected an int, got str 'abc'";
        QTest::newRow("missing") << "hostile/no_such_file.pickle"
                                 << "cannot open the file";
    }
    void hostileFilesExitTwoInOneLine()
    {
        QFETCH(QString, file);
        QFETCH(QString, says);
        const Run r = cli({ "snapshot", snap(file.toUtf8().constData()) });
        QCOMPARE(r.code, 2);
        QVERIFY(r.out.isEmpty());
        QCOMPARE(r.err.count('\n'), 1);
        QVERIFY2(r.err.contains(says.toUtf8()), r.err.constData());
    }

    void helpAndUsage()
    {
        const Run r = cli({ "snapshot", "--help" });
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.startsWith("usage: vramlab-cli snapshot FILE.pickle"));
        QCOMPARE(cli({ "snapshot" }).code, 2);
    }
};

QTEST_APPLESS_MAIN(TestCliSnapshot)
#include "tst_cli_snapshot.moc"
