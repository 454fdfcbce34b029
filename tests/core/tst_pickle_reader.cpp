// SPDX-License-Identifier: MIT
// The restricted pickle reader: plain data across protocols 0-5, and every opcode that
// would import, call or build refused with the file, the byte offset and the opcode.
// The hostile files come from tests/data/snapshots/make_snapshots.py.
#include "vramlab/pickle_reader.h"

#include <QtTest>

#include <string>

using namespace vramlab;

namespace {

std::string dataPath(const char* name)
{
    return std::string(VRAMLAB_TEST_DATA_DIR) + "/snapshots/" + name;
}

/// The refusal of parsing `bytes` (the test fails when there is none).
PickleError refusal(const std::string& bytes, const PickleLimits& limits = {})
{
    try {
        parsePickle(bytes, "t.pickle", limits);
    } catch (const PickleError& e) {
        return e;
    }
    return PickleError("t.pickle", 999999, -2, "accepted");
}

PickleError fileRefusal(const char* name)
{
    try {
        readPickleFile(dataPath(name));
    } catch (const PickleError& e) {
        return e;
    }
    return PickleError(name, 999999, -2, "accepted");
}

std::string bytes(const char* s, std::size_t n)
{
    return std::string(s, n);
}

} // namespace

class TstPickleReader : public QObject {
    Q_OBJECT
private slots:
    void plainDataProtocol3()
    {
        // {'a': [1, -2, 300, 70000, 2**40, True, None, 1.5, 'x', b'yz'], 'b': (1, 2)} by pickle.dumps(..., protocol=3)
        const std::string p = bytes("\x80\x03}q\x00(X\x01\x00\x00\x00"
                                    "aq\x01]q\x02(K\x01J\xfe\xff\xff\xffM,"
                                    "\x01Jp\x11\x01\x00\x8a\x06\x00\x00\x00\x00\x00\x01\x88NG\x3f\xf8\x00\x00\x00\x00"
                                    "\x00\x00X\x01\x00\x00\x00xq\x03"
                                    "C\x02yzq\x04"
                                    "eX\x01\x00\x00\x00"
                                    "bq\x05K\x01K\x02\x86q\x06u.",
            84);
        const PickleDocument doc = parsePickle(p, "t.pickle");
        QCOMPARE(doc.protocol(), 3);
        const PickleView root = doc.root();
        QVERIFY(root.isDict());
        QCOMPARE(root.size(), std::size_t(2));
        const PickleView a = *root.get("a");
        QCOMPARE(a.size(), std::size_t(10));
        QCOMPARE(*a.at(0).integer(), int64_t(1));
        QCOMPARE(*a.at(1).integer(), int64_t(-2));
        QCOMPARE(*a.at(2).integer(), int64_t(300));
        QCOMPARE(*a.at(3).integer(), int64_t(70000));
        QCOMPARE(*a.at(4).integer(), int64_t(1) << 40);
        QCOMPARE(*a.at(5).boolean(), true);
        QVERIFY(!a.at(5).integer()); // a bool is not an int here
        QVERIFY(a.at(6).isNone());
        QCOMPARE(*a.at(7).number(), 1.5);
        QCOMPARE(std::string(*a.at(8).string()), std::string("x"));
        QVERIFY(a.at(9).kind() == PickleKind::Binary);
        QCOMPARE(a.at(9).node().text, std::string("yz"));
        const PickleView b = *root.get("b");
        QVERIFY(b.kind() == PickleKind::Tuple);
        QCOMPARE(*b.at(1).integer(), int64_t(2));
        QCOMPARE(doc.depth(), std::size_t(2));
    }

    void protocol0TextForms()
    {
        // Python 3's protocol 0: UNICODE with \u escapes, INT booleans, LONG with L, FLOAT, PUT/GET.
        const std::string p = "(dp0\nVk\\u00e9y\np1\n(lp2\nI01\naI-7\naL12345678901234L\naF0.25\nag1\nas.";
        const PickleDocument doc = parsePickle(p, "t.pickle");
        const PickleView v = *doc.root().get("k\xc3\xa9y");
        QCOMPARE(v.size(), std::size_t(5));
        QCOMPARE(*v.at(0).boolean(), true);
        QCOMPARE(*v.at(1).integer(), int64_t(-7));
        QCOMPARE(*v.at(2).integer(), int64_t(12345678901234));
        QCOMPARE(*v.at(3).number(), 0.25);
        QCOMPARE(std::string(*v.at(4).string()), std::string("k\xc3\xa9y")); // the memo gives the key back
        // Python 2's STRING with escapes reads as bytes; sets, POP and DUP are plain data too.
        const PickleDocument s
            = parsePickle(bytes("(S'a\\'b\\x41'\np0\n\x8f(K\x01K\x02\x90\x32\x30t.", 27), "t.pickle");
        QCOMPARE(s.root().size(), std::size_t(2));
        QCOMPARE(s.root().at(0).node().text, std::string("a'bA"));
        QVERIFY(s.root().at(1).kind() == PickleKind::Set);
        QCOMPARE(s.root().at(1).size(), std::size_t(2));
    }

    void sharedValuesAreStoredOnce()
    {
        // x = ['a']; 20 times x = [x, x]; pickle.dumps(x, protocol=2): 3 x 2^20 - 1 values as a tree, 22 stored.
        const std::string q
            = bytes("\x80\x02]q\x00(]q\x01(]q\x02(]q\x03(]q\x04(]q\x05(]q\x06(]q\x07(]q\x08(]q\x09(]q\x0a(]q\x0b(]"
                    "q\x0c(]q\x0d(]q\x0e(]q\x0f(]q\x10(]q\x11(]q\x12(]q\x13(]q\x14X\x01\x00\x00\x00"
                    "aq\x15"
                    "ah\x14"
                    "eh\x13"
                    "eh\x12"
                    "eh\x11"
                    "eh\x10"
                    "eh\x0f"
                    "eh\x0e"
                    "eh\x0d"
                    "eh\x0c"
                    "eh\x0b"
                    "eh\x0a"
                    "eh\x09"
                    "eh\x08"
                    "eh\x07"
                    "eh\x06"
                    "eh\x05"
                    "eh\x04"
                    "eh\x03"
                    "eh\x02"
                    "eh\x01"
                    "e.",
                155);
        const PickleDocument doc = parsePickle(q, "t.pickle");
        QCOMPARE(doc.nodes().size(), std::size_t(22));
        QCOMPARE(doc.expandedValues(), uint64_t(3 * (1u << 20) - 1));
        QCOMPARE(doc.depth(), std::size_t(21));
        PickleLimits tight;
        tight.maxExpandedValues = 1'000'000;
        const PickleError e = refusal(q, tight);
        QCOMPARE(e.offset(), uint64_t(q.size() - 1)); // at STOP, where the whole is known
        QVERIFY(QByteArray(e.what()).contains("expansion bomb"));
    }

    void refusedOpcodesNameOffsetAndOpcode_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<qulonglong>("offset");
        QTest::addColumn<int>("opcode");
        QTest::addColumn<QString>("name");
        QTest::newRow("GLOBAL+REDUCE (os.system)") << "hostile/global_reduce.pickle" << 20ull << 0x63 << "GLOBAL";
        QTest::newRow("GLOBAL protocol 0") << "hostile/global_protocol0.pickle" << 18ull << 0x63 << "GLOBAL";
        QTest::newRow("STACK_GLOBAL (os.system)") << "hostile/stack_global.pickle" << 41ull << 0x93 << "STACK_GLOBAL";
        QTest::newRow("BUILD") << "hostile/build.pickle" << 4ull << 0x62 << "BUILD";
        QTest::newRow("INST") << "hostile/inst.pickle" << 1ull << 0x69 << "INST";
        QTest::newRow("OBJ") << "hostile/obj.pickle" << 4ull << 0x6f << "OBJ";
        QTest::newRow("NEWOBJ") << "hostile/newobj.pickle" << 4ull << 0x81 << "NEWOBJ";
        QTest::newRow("NEWOBJ_EX") << "hostile/newobj_ex.pickle" << 5ull << 0x92 << "NEWOBJ_EX";
        QTest::newRow("EXT1") << "hostile/ext1.pickle" << 2ull << 0x82 << "EXT1";
        QTest::newRow("EXT2") << "hostile/ext2.pickle" << 2ull << 0x83 << "EXT2";
        QTest::newRow("EXT4") << "hostile/ext4.pickle" << 2ull << 0x84 << "EXT4";
        QTest::newRow("PERSID") << "hostile/persid.pickle" << 0ull << 0x50 << "PERSID";
        QTest::newRow("BINPERSID") << "hostile/binpersid.pickle" << 4ull << 0x51 << "BINPERSID";
        QTest::newRow("NEXT_BUFFER") << "hostile/next_buffer.pickle" << 2ull << 0x97 << "NEXT_BUFFER";
        QTest::newRow("READONLY_BUFFER") << "hostile/readonly_buffer.pickle" << 3ull << 0x98 << "READONLY_BUFFER";
    }
    void refusedOpcodesNameOffsetAndOpcode()
    {
        QFETCH(QString, file);
        QFETCH(qulonglong, offset);
        QFETCH(int, opcode);
        QFETCH(QString, name);
        const PickleError e = fileRefusal(file.toUtf8().constData());
        QCOMPARE(e.offset(), uint64_t(offset));
        QCOMPARE(e.opcode(), opcode);
        const QByteArray msg(e.what());
        QVERIFY2(msg.contains(file.toUtf8()), msg.constData());
        QVERIFY2(
            msg.contains(("byte " + QString::number(offset) + ": opcode " + name + " (").toUtf8()), msg.constData());
        QVERIFY2(msg.contains("refused: "), msg.constData());
        if (name.contains("GLOBAL"))
            QVERIFY2(msg.contains("(posix.system)"), msg.constData());
    }

    void bombsAndForgedLengths_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<qulonglong>("offset");
        QTest::addColumn<QString>("says");
        QTest::newRow("lists 5,000 deep") << "hostile/deep_lists.pickle" << 5202ull << "nested more than 200 deep";
        QTest::newRow("5,000 MARKs") << "hostile/deep_marks.pickle" << 202ull << "MARKs nested more than 200 deep";
        QTest::newRow("2^41 values via the memo") << "hostile/memo_bomb.pickle" << 294ull << "expansion bomb";
        QTest::newRow("a list that holds itself") << "hostile/cycle.pickle" << 8ull << "a cycle";
        QTest::newRow("cut in a frame") << "hostile/truncated.pickle" << 2ull
                                        << "a frame of 5144 bytes, but only 2566 are left";
        QTest::newRow("cut in a string") << "hostile/truncated_protocol2.pickle" << 998ull << "only 1 are left";
        QTest::newRow("4 GiB string") << "hostile/huge_binunicode.pickle" << 2ull << "a string of 4294967295 bytes";
        QTest::newRow("2^62 string") << "hostile/huge_binunicode8.pickle" << 2ull
                                     << "a string of 4611686018427387904 bytes";
        QTest::newRow("1 TiB frame") << "hostile/huge_frame.pickle" << 2ull << "a frame of 1099511627776 bytes";
        QTest::newRow("1 GiB integer") << "hostile/huge_long4.pickle" << 2ull << "an integer of 1073741824 bytes";
        QTest::newRow("2^64") << "hostile/wide_long1.pickle" << 2ull << "an integer of 9 bytes";
        QTest::newRow("empty") << "hostile/empty.pickle" << 0ull << "the file is empty";
    }
    void bombsAndForgedLengths()
    {
        QFETCH(QString, file);
        QFETCH(qulonglong, offset);
        QFETCH(QString, says);
        const PickleError e = fileRefusal(file.toUtf8().constData());
        QCOMPARE(e.offset(), uint64_t(offset));
        QVERIFY2(QByteArray(e.what()).contains(says.toUtf8()), e.what());
    }

    void malformedStreams()
    {
        QCOMPARE(refusal("\x80\x06N.").offset(), uint64_t(0)); // protocol 6
        QVERIFY(QByteArray(refusal(bytes("\x80\x02N", 3)).what()).contains("ends before the pickle's STOP"));
        QVERIFY(
            QByteArray(refusal(bytes("\x80\x02NN.", 5)).what()).contains("expected one value on the stack, found 2"));
        QVERIFY(QByteArray(refusal(bytes("\x80\x02h\x05.", 5)).what()).contains("memo entry 5 was never stored"));
        QVERIFY(QByteArray(refusal(bytes("\x80\x02K\x01K\x02"
                                         "a.",
                                       7))
                               .what())
                    .contains("works on a list, but the value below is a int"));
        QVERIFY(
            QByteArray(refusal(bytes("\x80\x02X\x02\x00\x00\x00\xff\xfe.", 10)).what()).contains("not valid UTF-8"));
        QVERIFY(QByteArray(refusal("Vbad\\ud800\n.").what()).contains("Unicode scalar value"));
        QVERIFY(QByteArray(refusal(bytes("\x80\x02\xff.", 4)).what()).contains("0xff is not a pickle opcode"));
        // Protocol 2 writes bytes as a call of _codecs.encode: refused like any import.
        const PickleError codecs
            = refusal(bytes("\x80\x02"
                            "c_codecs\x0a"
                            "encode\x0aq\x00X\x02\x00\x00\x00yzq\x01X\x06\x00\x00\x00latin1q\x02\x86q\x03Rq\x04.",
                49));
        QCOMPARE(codecs.offset(), uint64_t(2));
        QVERIFY2(QByteArray(codecs.what()).contains("(_codecs.encode)"), codecs.what());
        QCOMPARE(refusal(bytes("\x80\x02\xff.", 4)).offset(), uint64_t(2));
        PickleLimits few;
        few.maxValues = 3;
        QVERIFY(QByteArray(refusal(bytes("\x80\x02(NNNNl.", 9), few).what()).contains("more than 3 values"));
    }
};

QTEST_APPLESS_MAIN(TstPickleReader)
#include "tst_pickle_reader.moc"
