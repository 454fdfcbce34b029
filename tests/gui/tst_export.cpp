// SPDX-License-Identifier: MIT
// Exports: every format is valid and carries the numbers; the headless command needs no
// display; bad paths fail cleanly with no half file; window and headless give the same picture.
#include "chart_export.h"
#include "headless_run.h"
#include "main_window.h"
#include "plan_page.h"
#include "plan_view.h"
#include "qcustomplot_include.h"
#include "serving_page.h"
#include "vramlab/chart_data.h"
#include "vramlab/estimator.h"
#include "vramlab/planner.h"
#include "vramlab/scenario_io.h"
#include "vramlab/serving_model.h"

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
using namespace vramlab::test;

namespace {

const QString kScenario = QStringLiteral(VRAMLAB_SOURCE_DIR "/resources/scenarios/llama-3-8b-8xh100.json");
const QString kServing = QStringLiteral(VRAMLAB_SOURCE_DIR "/resources/scenarios/llama-2-7b-serving.json");
const QString kQlora = QStringLiteral(VRAMLAB_SOURCE_DIR "/resources/scenarios/gemma-3-12b-qlora.json");

Scenario scenario()
{
    return loadScenarioFile(kScenario.toStdString());
}

/// vLLM issue 10517's published case (Llama 3.1 8B, RTX 3090, max_model_len 20000) as a
/// scenario file in `dir`.
QString servingCase(const QTemporaryDir& dir)
{
    const std::string file
        = VRAMLAB_SOURCE_DIR "/tests/data/published/serving/scenarios/vllm-i10517-llama31-8b-rtx3090-len20000.json";
    const std::string text = parseJsonText(readTextFile(file), file).at("runs").at(0).at("scenario").dump(2);
    const QString path = dir.filePath(QStringLiteral("i10517.json"));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(text.data(), qint64(text.size())) != qint64(text.size()))
        return QString();
    return path;
}

/// The CSV's cell `column` of the rows whose cell `keyColumn` is `key` (no quoted commas before them).
QStringList csvCells(const QByteArray& csv, int keyColumn, const QString& key, int column)
{
    QStringList out;
    for (const QByteArray& line : csv.split('\n')) {
        const QStringList cells = QString::fromUtf8(line).split(QLatin1Char(','));
        if (cells.size() > std::max(keyColumn, column) && cells[keyColumn] == key)
            out << cells[column];
    }
    return out;
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

    void gpt2SweepPictureAndDataAgree_data()
    {
        QTest::addColumn<QString>("scenario");
        QTest::addColumn<QByteArray>("first");
        QTest::addColumn<QByteArray>("last");
        QTest::addColumn<double>("to");
        // Learned positions: the sweep stops at max_position_embeddings in both formats.
        QTest::newRow("gpt2-tiny (64 positions)") << QStringLiteral(VRAMLAB_TEST_DATA_DIR "/scenarios/gpt2-tiny.json")
                                                  << QByteArray("8,") << QByteArray("64,") << 64.0;
        QTest::newRow("gpt2 preset (1024 positions)")
            << QStringLiteral("@/gpt2.json") << QByteArray("128,") << QByteArray("1024,") << 1024.0;
    }
    void gpt2SweepPictureAndDataAgree()
    {
        QFETCH(QString, scenario);
        QFETCH(QByteArray, first);
        QFETCH(QByteArray, last);
        QFETCH(double, to);
        QTemporaryDir dir;
        QFile gpt2(dir.filePath(QStringLiteral("gpt2.json")));
        QVERIFY(gpt2.open(QIODevice::WriteOnly));
        gpt2.write(
            "{\"format\": \"vramlab.scenario\", \"version\": 1, \"name\": \"gpt2\", \"model\": {\"preset\": \"gpt2\"}, "
            "\"run\": {\"mode\": \"training\", \"sequence_length\": 1024, \"gpu\": \"h100-sxm-80gb\"}}");
        gpt2.close();
        scenario.replace(QLatin1Char('@'), dir.path());
        const QString png = dir.filePath(QStringLiteral("g.png")), csv = dir.filePath(QStringLiteral("g.csv"));
        const Run picture = headless({ "--export", png, "--chart", "sweep-seq", scenario });
        const Run data = headless({ "--export", csv, "--chart", "sweep-seq", scenario });
        QVERIFY2(picture.err.isEmpty(), picture.err.constData());
        QVERIFY2(data.err.isEmpty(), data.err.constData());
        QCOMPARE(picture.code, 0);
        QCOMPARE(data.code, 0);
        const QList<QByteArray> rows = slurp(csv).trimmed().split('\n');
        QVERIFY(rows[1].startsWith(first));
        QVERIFY(rows.back().startsWith(last));
        // The picture spans the same values, and its axis is named, not an error message.
        const Scenario sc = loadScenarioFile(scenario.toStdString());
        const ExportedChart chart(
            ChartKind::SweepSequence, { sc }, {}, QSize(800, 500), exportTheme(false, QSize(800, 500)));
        QCOMPARE(chart.plot()->xAxis->range().lower, rows[1].split(',').front().toDouble());
        QCOMPARE(chart.plot()->xAxis->range().upper, to);
        QCOMPARE(chart.plot()->xAxis->label(), QStringLiteral("sequence length (tokens)"));
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
        // Responsive and printable: a title heading, charts that scale to the page, numbers
        // that do not wrap, captions in words, print rules for the printer's paper.
        QVERIFY(page.contains("<h1>"));
        QVERIFY(page.contains("figure svg { width: 100%; height: auto; }"));
        QVERIFY(page.contains(
            "<td class=\"num\">" + QByteArray::fromStdString(formatCount(r.bytesOf("optimizer_states"))) + "</td>"));
        QVERIFY(page.contains("<td class=\"num\">7.48 GiB</td>"));
        QVERIFY(page.contains("<figcaption>Memory against sequence length</figcaption>"));
        QVERIFY(page.contains("@media print"));
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

    void servingTabExportsItsBudgetChart()
    {
        QTemporaryDir dir;
        const QString file = servingCase(dir);
        QVERIFY(!file.isEmpty());
        MainWindow window;
        QVERIFY(window.openFile(file));
        QCOMPARE(window.tabs()->currentWidget(), static_cast<QWidget*>(window.servingPage()));
        QCOMPARE(window.currentChart(nullptr, nullptr), ChartKind::ServingBudget);
        const Scenario sc = loadScenarioFile(file.toStdString());
        const ServingEstimate e = servingEstimate(sc.model, sc.run);

        // CSV: the budget's segments, the KV cache to the byte.
        const QString csv = dir.filePath(QStringLiteral("serving.csv"));
        QVERIFY2(window.exportTo(csv, QSize(800, 500), false), qPrintable(window.lastError()));
        const QByteArray data = slurp(csv);
        QVERIFY(data.startsWith("bar,segment,label,bytes,gib,capacity_bytes\n"));
        QVERIFY(!data.contains("formula")); // not the breakdown's CSV
        // The rank's label is the first cell: count columns from the segment key.
        QStringList kv;
        for (const QByteArray& line : data.split('\n'))
            if (line.contains(",kv_cache,KV cache,"))
                kv << QString::fromUtf8(line.mid(line.indexOf(",kv_cache,KV cache,") + 19))
                          .section(QLatin1Char(','), 0, 0);
        QCOMPARE(kv.size(), int(e.ranks.size()));
        QCOMPARE(kv.at(int(e.limitingRank)).toLongLong(), qlonglong(e.limiting().kvCacheBytes));
        QVERIFY(e.limiting().kvCacheBytes > 0);

        // PNG at twice the requested size, SVG titled with the scenario and the engine's verdict.
        const QString png = dir.filePath(QStringLiteral("serving.png"));
        QVERIFY2(window.exportTo(png, QSize(900, 560), false), qPrintable(window.lastError()));
        QCOMPARE(QImage(png).size(), QSize(1800, 1120));
        const QString svg = dir.filePath(QStringLiteral("serving.svg"));
        QVERIFY(window.exportTo(svg, QSize(900, 560), false));
        const QByteArray svgText = slurp(svg);
        QVERIFY(svgText.contains(QByteArray::fromStdString(sc.name)));
        QVERIFY(svgText.contains("STARTS"));
        QVERIFY(svgText.contains("KV cache"));

        // The same picture from the command line.
        const QString cli = dir.filePath(QStringLiteral("cli.png"));
        const Run r
            = headless({ "--export", cli, "--chart", "serving-budget", "--width", "900", "--height", "560", file });
        QCOMPARE(r.code, 0);
        QCOMPARE(QImage(png).convertToFormat(QImage::Format_RGB32), QImage(cli).convertToFormat(QImage::Format_RGB32));
        // The review report says what the engine does, the budget chart first among its charts.
        const QString html = dir.filePath(QStringLiteral("review.html"));
        QVERIFY(window.exportTo(html, QSize(900, 560), false));
        const QByteArray htmlText = slurp(html);
        QVERIFY(htmlText.contains("<h2>Serving: vllm"));
        QVERIFY(htmlText.contains("(" + QByteArray::number(qlonglong(e.kvCacheBytes)) + " bytes)"));
        QVERIFY(htmlText.contains("<figcaption>Serving memory budget</figcaption>"));
        // The concurrency curve is a chart kind of its own.
        const QString curve = dir.filePath(QStringLiteral("curve.csv"));
        QCOMPARE(headless({ "--export", curve, "--chart", "serving-concurrency", file }).code, 0);
        QVERIFY(slurp(curve).startsWith("context_tokens,max_concurrency,startup_fails,current\n"));
        QCOMPARE(csvCells(slurp(curve), 0, QStringLiteral("20000"), 3), QStringList { QStringLiteral("true") });
    }

    void servingTabOfATrainingScenarioSaysSo()
    {
        QTemporaryDir dir;
        MainWindow window;
        QVERIFY(window.openFile(kScenario));
        window.tabs()->setCurrentWidget(window.servingPage());
        const QString out = dir.filePath(QStringLiteral("x.png"));
        QVERIFY(!window.exportTo(out, QSize(800, 500), false));
        QVERIFY(!QFile::exists(out)); // never the breakdown instead
        QVERIFY2(window.lastError().startsWith(QStringLiteral("Not exported: ")), qPrintable(window.lastError()));
        QVERIFY2(window.lastError().contains(QStringLiteral("serving")), qPrintable(window.lastError()));
        QVERIFY(!window.exportTo(dir.filePath(QStringLiteral("x.csv")), QSize(800, 500), false));
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("x.csv"))));
    }

    void planTabExportsItsTable()
    {
        QTemporaryDir dir;
        MainWindow window;
        QVERIFY(window.openFile(kScenario));
        window.tabs()->setCurrentWidget(window.planPage());
        QCOMPARE(window.currentChart(nullptr, nullptr), ChartKind::Plan);
        const Scenario sc = scenario();
        PlanRequest req;
        req.gpus = sc.run.parallelism.gpus;
        const PlanResult expected = plan(sc, req);
        QVERIFY(!expected.top.empty());

        const QString csv = dir.filePath(QStringLiteral("plan.csv"));
        QVERIFY2(window.exportTo(csv, QSize(800, 500), false), qPrintable(window.lastError()));
        const QByteArray data = slurp(csv);
        QVERIFY(data.startsWith("rank,zero_stage,tensor_parallel,"));
        QCOMPARE(data, QByteArray::fromStdString(planCsv(window.planView()->result())));
        // The first row's peak, counted from the end (the summary and why may hold commas).
        const QList<QByteArray> rows = data.split('\n');
        QCOMPARE(rows.size(), int(expected.top.size()) + 2); // header, rows, the final newline
        QVERIFY(rows[1].startsWith("1,"));
        QVERIFY(rows[1].contains("," + QByteArray::number(qlonglong(expected.top[0].peak)) + ",true,"));

        const QString md = dir.filePath(QStringLiteral("plan.md"));
        QVERIFY(window.exportTo(md, QSize(800, 500), false));
        QVERIFY(slurp(md).startsWith("| # | Setup | Peak (GiB) |"));
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("plan_files")))); // not the review report

        // A picture of a table: refused in words, nothing written.
        const QString png = dir.filePath(QStringLiteral("plan.png"));
        QVERIFY(!window.exportTo(png, QSize(800, 500), false));
        QVERIFY(!QFile::exists(png));
        QVERIFY2(window.lastError().contains(QStringLiteral(".csv or .md")), qPrintable(window.lastError()));

        // The command line writes the same default plan.
        const QString cli = dir.filePath(QStringLiteral("cli.csv"));
        QCOMPARE(headless({ "--export", cli, "--chart", "plan", kScenario }).code, 0);
        QCOMPARE(slurp(cli), data);
    }

    void textTabsSayWhatTheyCannotExport()
    {
        QTemporaryDir dir;
        MainWindow window;
        QVERIFY(window.openFile(kScenario));
        window.tabs()->setCurrentWidget(window.page(QStringLiteral("explainPage")));
        const QString png = dir.filePath(QStringLiteral("e.png"));
        QVERIFY(!window.exportTo(png, QSize(800, 500), false));
        QVERIFY(!QFile::exists(png));
        QVERIFY2(
            window.lastError().contains(QStringLiteral("the Explain tab is text")), qPrintable(window.lastError()));
        const QString html = dir.filePath(QStringLiteral("e.html"));
        QVERIFY(window.exportTo(html, QSize(800, 500), false)); // the review report, with every formula
        QVERIFY(window.lastError().isEmpty());
        QVERIFY(slurp(html).startsWith("<!DOCTYPE html>"));
        window.tabs()->setCurrentWidget(window.page(QStringLiteral("probePage")));
        const QString csv = dir.filePath(QStringLiteral("p.csv"));
        QVERIFY(!window.exportTo(csv, QSize(800, 500), false));
        QVERIFY(!QFile::exists(csv));
        QVERIFY2(window.lastError().contains(QStringLiteral("Probe")), qPrintable(window.lastError()));
    }

    // File > Export proposes the folder of the last export (slides go to one folder).
    void exportRemembersTheFolder()
    {
        QTemporaryDir dir;
        MainWindow window;
        QVERIFY(window.openFile(kScenario));
        QVERIFY(QFileInfo(window.suggestedExportPath(ChartKind::Breakdown)).absolutePath() != dir.path());
        QVERIFY(window.exportTo(dir.filePath(QStringLiteral("slide.png")), QSize(800, 500), false));
        const QString next = window.suggestedExportPath(ChartKind::SweepSequence);
        QCOMPARE(QFileInfo(next).absolutePath(), dir.path());
        QVERIFY2(next.endsWith(QStringLiteral("-sweep-seq.png")), qPrintable(next));
        MainWindow again; // and after a restart
        QCOMPARE(QFileInfo(again.suggestedExportPath(ChartKind::Breakdown)).absolutePath(), dir.path());
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
