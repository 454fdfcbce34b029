// SPDX-License-Identifier: MIT
// Exports: every format is valid and carries the numbers; the headless command needs no
// display; bad paths fail cleanly with no half file; window and headless give the same picture.
#include "chart_export.h"
#include "main_window.h"
#include "vramlab/estimator.h"
#include "vramlab/scenario_io.h"

#include <QCoreApplication>
#include <QImage>
#include <QProcess>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace vramlab;

namespace {

const QString kScenario = QStringLiteral(VRAMLAB_SOURCE_DIR "/resources/scenarios/llama-3-8b-8xh100.json");
const QString kServing = QStringLiteral(VRAMLAB_SOURCE_DIR "/resources/scenarios/llama-2-7b-serving.json");
const QString kQlora = QStringLiteral(VRAMLAB_SOURCE_DIR "/resources/scenarios/gemma-3-12b-qlora.json");

struct Run {
    int code = -1;
    QByteArray out, err;
};

/// `vramlab --export ...` with no display at all.
Run headless(const QStringList& args)
{
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char* var : { "DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM" })
        env.remove(QString::fromLatin1(var));
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(VRAMLAB_GUI), args);
    p.waitForFinished(60000);
    return { p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
        p.readAllStandardError() };
}

QByteArray slurp(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

Scenario scenario()
{
    return loadScenarioFile(kScenario.toStdString());
}

std::string kScenarioText()
{
    return slurp(kScenario).toStdString();
}

} // namespace

class TestExport : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void pngAtTwiceTheSize()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("b.png"));
        const Run r
            = headless({ "--export", out, "--chart", "breakdown", "--width", "1200", "--height", "700", kScenario });
        QCOMPARE(r.code, 0);
        QVERIFY2(r.err.isEmpty(), r.err.constData());
        const QByteArray png = slurp(out);
        QVERIFY(png.startsWith("\x89PNG\r\n\x1a\n"));
        const QImage img = QImage::fromData(png, "PNG");
        QCOMPARE(img.size(), QSize(2400, 1400));
    }

    void svgKeepsTextAndNumbers()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("b.svg"));
        QCOMPARE(headless({ "--export", out, kScenario }).code, 0);
        const QByteArray svg = slurp(out);
        QXmlStreamReader xml(svg);
        QString text;
        while (!xml.atEnd()) {
            xml.readNext();
            if (xml.isCharacters())
                text += xml.text();
        }
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
        for (const char* label : { "Weights", "Optimizer states", "Activations", "GiB per GPU" })
            QVERIFY2(text.contains(QLatin1String(label)), label);
        const Report r = estimate(scenario());
        QVERIFY(text.contains(QString::fromStdString(formatBytes(r.peak)))); // "45.07 GiB" written on the chart
    }

    void pdfHasOnePage()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("m.pdf"));
        QCOMPARE(headless({ "--export", out, "--chart", "compare-methods", kQlora }).code, 0);
        const QByteArray pdf = slurp(out);
        QVERIFY(pdf.startsWith("%PDF-"));
        QCOMPARE(pdf.count("/Type /Page\n") + pdf.count("/Type /Page\r") + pdf.count("/Type /Page "), 1);
        QVERIFY(pdf.trimmed().endsWith("%%EOF"));
    }

    void csvColumnsAndValues()
    {
        QTemporaryDir dir;
        const Report r = estimate(scenario());
        const QString table = dir.filePath(QStringLiteral("t.csv"));
        QCOMPARE(headless({ "--export", table, kScenario }).code, 0);
        const QList<QByteArray> rows = slurp(table).trimmed().split('\n');
        QCOMPARE(rows.front(), QByteArray("key,component,bytes,gib,share_percent,formula"));
        QCOMPARE(rows.size(), 1 + 7 + 2);
        QVERIFY(rows[4].startsWith(
            "optimizer_states,Optimizer states," + QByteArray::number(qlonglong(r.bytesOf("optimizer_states")))));
        const QString sweep = dir.filePath(QStringLiteral("s.csv"));
        QCOMPARE(headless({ "--export", sweep, "--chart", "sweep-seq", kScenario }).code, 0);
        const QList<QByteArray> pts = slurp(sweep).trimmed().split('\n');
        QVERIFY(pts.front().startsWith("run.sequence_length,weights,"));
        QCOMPARE(pts.size(), 1 + 64);
    }

    void timelineChartAndData()
    {
        QTemporaryDir dir;
        const Report r = estimate(scenario());
        const StepTimeline t = simulateStep(r.stepInputs, 2);
        const QString csv = dir.filePath(QStringLiteral("t.csv"));
        QCOMPARE(headless({ "--export", csv, "--chart", "timeline", kScenario }).code, 0);
        const QList<QByteArray> rows = slurp(csv).trimmed().split('\n');
        QCOMPARE(rows.size(), int(1 + t.events.size()));
        QVERIFY(rows.front().startsWith("index,phase,micro_batch,layer,weights,"));
        const QString svg = dir.filePath(QStringLiteral("t.svg"));
        QCOMPARE(headless({ "--export", svg, "--chart", "timeline", kScenario }).code, 0);
        const QByteArray text = slurp(svg);
        QVERIFY(text.contains("peak " + QByteArray::fromStdString(formatBytes(r.peak))));
        QVERIFY(text.contains("Temporaries"));
    }

    void reportsCarryTheNumbers()
    {
        QTemporaryDir dir;
        const Report r = estimate(scenario());
        const QString html = dir.filePath(QStringLiteral("r.html"));
        QCOMPARE(headless({ "--export", html, kScenario }).code, 0);
        const QByteArray page = slurp(html);
        QVERIFY(page.startsWith("<!DOCTYPE html>"));
        QCOMPARE(page.count("<svg"), 5); // breakdown, sweep, methods, ZeRO, timeline: inline, self-contained
        QVERIFY(!page.contains("src=\"http"));
        QVERIFY(page.contains(QByteArray::fromStdString(formatCount(r.bytesOf("optimizer_states")))));
        QVERIFY(page.contains("FITS"));
        const QString md = dir.filePath(QStringLiteral("r.md"));
        QCOMPARE(headless({ "--export", md, kScenario }).code, 0);
        const QByteArray text = slurp(md);
        QVERIFY(text.contains("| Optimizer states | 7.48 GiB | "
            + QByteArray::fromStdString(formatCount(r.bytesOf("optimizer_states")))));
        QVERIFY(text.contains("![breakdown](r_files/breakdown.png)"));
        QVERIFY(QImage(dir.filePath(QStringLiteral("r_files/breakdown.png"))).width() == 3200);
    }

    void compareFilesNeedsTwo()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("ab.png"));
        const Run one = headless({ "--export", out, "--chart", "compare-files", kScenario });
        QCOMPARE(one.code, 2);
        QVERIFY(one.err.contains("needs two scenario files"));
        QCOMPARE(headless({ "--export", out, "--chart", "compare-files", kScenario, kQlora }).code, 0);
        QVERIFY(QFile::exists(out));
    }

    void badInputIsOneLineAndNoFile_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QByteArray>("expect");
        QTest::newRow("missing folder") << QStringList { "--export", "/no/such/dir/x.png", kScenario }
                                        << QByteArray("the folder does not exist");
        QTest::newRow("unwritable folder")
            << QStringList { "--export", "/proc/x.png", kScenario } << QByteArray("x.png");
        QTest::newRow("extension") << QStringList { "--export", "@/x.gif", kScenario }
                                   << QByteArray("expected an extension");
        QTest::newRow("chart") << QStringList { "--export", "@/x.png", "--chart", "pie", kScenario }
                               << QByteArray("--chart: expected one of");
        QTest::newRow("width") << QStringList { "--export", "@/x.png", "--width", "5", kScenario }
                               << QByteArray("--width: expected");
        QTest::newRow("theme") << QStringList { "--export", "@/x.png", "--theme", "pink", kScenario }
                               << QByteArray("--theme: expected");
        QTest::newRow("broken scenario") << QStringList { "--export", "@/x.png", "@/broken.json" }
                                         << QByteArray("broken.json: model: required");
        QTest::newRow("timeline of serving") << QStringList { "--export", "@/x.png", "--chart", "timeline", kServing }
                                             << QByteArray("run.mode: expected training");
        QTest::newRow("no scenario") << QStringList { "--export", "@/x.png" }
                                     << QByteArray("expected one or more scenario files");
    }
    void badInputIsOneLineAndNoFile()
    {
        QFETCH(QStringList, args);
        QFETCH(QByteArray, expect);
        QTemporaryDir dir;
        QFile broken(dir.filePath(QStringLiteral("broken.json")));
        QVERIFY(broken.open(QIODevice::WriteOnly));
        broken.write("{\"run\": {}}");
        broken.close();
        for (QString& a : args)
            a.replace(QLatin1Char('@'), dir.path());
        const Run r = headless(args);
        QCOMPARE(r.code, 2);
        QCOMPARE(r.err.count('\n'), 1);
        QVERIFY2(r.err.contains(expect), r.err.constData());
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::NoDotAndDotDot),
            QStringList { QStringLiteral("broken.json") });
    }

    // Issue 17: exports follow the core writer's rules.
    void exportWritesThroughALinkAndRefusesReadOnlyAndFifo()
    {
        QTemporaryDir dir;
        const QString target = dir.filePath(QStringLiteral("real.png")),
                      link = dir.filePath(QStringLiteral("link.png"));
        QVERIFY(QFile::link(target, link)); // dangling until the export
        QCOMPARE(headless({ "--export", link, kScenario }).code, 0);
        QVERIFY(QFileInfo(link).isSymLink());
        QVERIFY(slurp(target).startsWith("\x89PNG"));

        const QString ro = dir.filePath(QStringLiteral("ro.svg"));
        QFile f(ro);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("old");
        f.close();
        QVERIFY(QFile::setPermissions(ro, QFile::ReadOwner | QFile::ReadGroup | QFile::ReadOther));
        const Run r = headless({ "--export", ro, kScenario });
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("is read-only"), r.err.constData());
        QCOMPARE(slurp(ro), QByteArray("old"));

        const QString fifo = dir.filePath(QStringLiteral("pipe.csv"));
        QCOMPARE(::mkfifo(QFile::encodeName(fifo).constData(), 0666), 0);
        const Run p = headless({ "--export", fifo, kScenario }); // refused, not blocked on opening it
        QCOMPARE(p.code, 2);
        QVERIFY2(p.err.contains("is a FIFO"), p.err.constData());
        QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::System | QDir::NoDotAndDotDot).size(), 4);
    }

    void exportRemovesStaleTemporaries()
    {
        QTemporaryDir dir;
        const pid_t dead = ::fork();
        if (dead == 0)
            ::_exit(0);
        QVERIFY(dead > 0);
        ::waitpid(dead, nullptr, 0);
        const QString out = dir.filePath(QStringLiteral("b.csv"));
        const QString stale = out + QStringLiteral(".tmp-") + QString::number(dead);
        QFile f(stale);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.close();
        const QString staleFolder = dir.filePath(QStringLiteral("r_files.tmp-")) + QString::number(dead);
        QVERIFY(QDir().mkpath(staleFolder + QStringLiteral("/x")));
        QCOMPARE(headless({ "--export", out, kScenario }).code, 0);
        QVERIFY(!QFile::exists(stale));
        QCOMPARE(headless({ "--export", dir.filePath(QStringLiteral("r.md")), kScenario }).code, 0);
        QVERIFY(!QFileInfo::exists(staleFolder));
    }

    // Issue 17: a failed .md export left OUT_files/*.png behind.
    void failedMarkdownExportLeavesNothing()
    {
        QTemporaryDir dir;
        const QString md = dir.filePath(QStringLiteral("r.md"));
        QFile f(md);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("old");
        f.close();
        QVERIFY(QFile::setPermissions(md, QFile::ReadOwner | QFile::ReadGroup | QFile::ReadOther));
        const Run r = headless({ "--export", md, kScenario });
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("is read-only"), r.err.constData());
        QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot),
            QStringList { QStringLiteral("r.md") });
        QCOMPARE(slurp(md), QByteArray("old"));

        // The images' folder taken by a file: refused, the file untouched, no report.
        QTemporaryDir dir2;
        const QString files = dir2.filePath(QStringLiteral("r_files"));
        QFile g(files);
        QVERIFY(g.open(QIODevice::WriteOnly));
        g.close();
        const Run t = headless({ "--export", dir2.filePath(QStringLiteral("r.md")), kScenario });
        QCOMPARE(t.code, 2);
        QVERIFY2(t.err.contains("r_files: exists and is not a folder"), t.err.constData());
        QCOMPARE(QDir(dir2.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot),
            QStringList { QStringLiteral("r_files") });

        // A second export replaces the folder as a whole: no image of the first one stays.
        QTemporaryDir dir3;
        const QString md3 = dir3.filePath(QStringLiteral("r.md"));
        QCOMPARE(headless({ "--export", md3, kScenario }).code, 0);
        QFile stray(dir3.filePath(QStringLiteral("r_files/stray.png")));
        QVERIFY(stray.open(QIODevice::WriteOnly));
        stray.close();
        QCOMPARE(headless({ "--export", md3, kServing }).code, 0);
        QVERIFY(!QFile::exists(dir3.filePath(QStringLiteral("r_files/stray.png"))));
        QVERIFY(!QFile::exists(dir3.filePath(QStringLiteral("r_files/timeline.png")))); // serving has no timeline
        QVERIFY(QFile::exists(dir3.filePath(QStringLiteral("r_files/breakdown.png"))));
        QCOMPARE(QDir(dir3.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot),
            (QStringList { QStringLiteral("r.md"), QStringLiteral("r_files") }));
    }

    // Issue 17: names were written raw into the reports (forged links, rows and bold).
    void userStringsCannotForgeReports()
    {
        QTemporaryDir dir;
        const std::string evil = "x | y **b** [l](javascript:alert(1)) <script>";
        nlohmann::json doc = nlohmann::json::parse(kScenarioText());
        doc["name"] = evil;
        doc["model"]["name"] = evil;
        doc["run"]["gpu"] = { { "base", "h100-sxm-80gb" }, { "name", evil } };
        doc["run"][evil] = 1; // an unknown key, named in the warnings
        const QString file = dir.filePath(QStringLiteral("evil.json"));
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray::fromStdString(doc.dump()));
        f.close();
        nlohmann::json plainDoc = doc;
        plainDoc["name"] = plainDoc["model"]["name"] = plainDoc["run"]["gpu"]["name"] = "plain";
        plainDoc["run"].erase(evil);
        plainDoc["run"]["plain"] = 1;
        const QString plain = dir.filePath(QStringLiteral("plain.json"));
        QFile g(plain);
        QVERIFY(g.open(QIODevice::WriteOnly));
        g.write(QByteArray::fromStdString(plainDoc.dump()));
        g.close();

        const QString md = dir.filePath(QStringLiteral("r.md"));
        QCOMPARE(headless({ "--export", md, file }).code, 0);
        const QByteArray text = slurp(md);
        QVERIFY(!text.contains("](javascript:"));
        QVERIFY(!text.contains("**b**"));
        QVERIFY(!text.contains("<script>"));
        int columns = -1;
        for (const QByteArray& line : text.split('\n')) {
            if (!line.startsWith('|')) {
                columns = -1;
                continue;
            }
            const int borders = line.count('|') - line.count("\\|");
            if (columns < 0)
                columns = borders;
            QCOMPARE(borders, columns);
        }

        const QString html = dir.filePath(QStringLiteral("r.html")), plainHtml = dir.filePath(QStringLiteral("p.html"));
        QCOMPARE(headless({ "--export", html, file }).code, 0);
        QCOMPARE(headless({ "--export", plainHtml, plain }).code, 0);
        const QByteArray page = slurp(html), plainPage = slurp(plainHtml);
        QVERIFY(!page.contains("<script"));
        QVERIFY(!page.contains("<strong>"));
        QVERIFY(!page.contains("<b>b</b>"));
        QVERIFY(!page.contains("href=\"javascript"));
        QCOMPARE(page.count("<td>"), plainPage.count("<td>"));
        QCOMPARE(page.count("<tr>"), plainPage.count("<tr>"));
        QCOMPARE(page.count("<b>"), plainPage.count("<b>"));
    }

    // Issue 17: a label from a file name such as "=HYPERLINK(...)" ran as a formula.
    void csvLabelsCannotBeFormulas()
    {
        QTemporaryDir dir;
        const QString evil = dir.filePath(QStringLiteral("=HYPERLINK(1).json"));
        QVERIFY(QFile::copy(kScenario, evil));
        const QString out = dir.filePath(QStringLiteral("ab.csv"));
        QCOMPARE(headless({ "--export", out, "--chart", "compare-files", evil, kQlora }).code, 0);
        const QList<QByteArray> rows = slurp(out).trimmed().split('\n');
        QCOMPARE(rows.size(), 3);
        QVERIFY2(rows[1].startsWith("'=HYPERLINK(1),"), rows[1].constData());
        QVERIFY(rows[2].startsWith("gemma-3-12b-qlora,"));
    }

    void exportArgumentsMustBeUtf8AndNamed()
    {
        QTemporaryDir dir;
        QProcess p;
        p.setWorkingDirectory(dir.path());
        p.start(QStringLiteral("/bin/sh"),
            { "-c", R"sh(exec "$0" --export "$(printf '\377.png')" "$1")sh", QStringLiteral(VRAMLAB_GUI), kScenario });
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 2);
        QVERIFY(p.readAllStandardError().contains("argument 2 \"\\xFF.png\": not valid UTF-8"));
        QVERIFY(QDir(dir.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot).isEmpty());
        const Run empty = headless({ "--export", "", kScenario });
        QCOMPARE(empty.code, 2);
        QVERIFY2(empty.err.contains("the file name is empty"), empty.err.constData());
    }

    void windowAndHeadlessDrawTheSamePicture()
    {
        QTemporaryDir dir;
        MainWindow window;
        QVERIFY(window.openFile(kScenario));
        const QString fromWindow = dir.filePath(QStringLiteral("w.png"));
        QVERIFY(window.exportTo(fromWindow, QSize(1000, 600), false));
        const QString fromCli = dir.filePath(QStringLiteral("c.png"));
        QCOMPARE(headless({ "--export", fromCli, "--width", "1000", "--height", "600", kScenario }).code, 0);
        const QImage a(fromWindow), b(fromCli);
        QCOMPARE(a.size(), QSize(2000, 1200));
        QCOMPARE(a.size(), b.size());
        QCOMPARE(a.convertToFormat(QImage::Format_RGB32), b.convertToFormat(QImage::Format_RGB32));
    }
};

QTEST_MAIN(TestExport)
#include "tst_export.moc"
