// SPDX-License-Identifier: MIT
// Issue 16's slides: a PDF is a 16:9 slide or an A4/Letter page titled with the chart; an
// SVG names a generic font family after each font and is titled with the chart.
#include "chart_export.h"
#include "export_dialog.h"
#include "headless_run.h"
#include "main_window.h"
#include "pdf_page.h"
#include "svg_fonts.h"
#include "vramlab/scenario_io.h"

#include <QFontDatabase>
#include <QRegularExpression>
#include <QSettings>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>

using namespace vramlab;
using namespace vramlab::test;

namespace {

const QString kScenario = QStringLiteral(VRAMLAB_SOURCE_DIR "/resources/scenarios/llama-3-8b-8xh100.json");

/// The page's MediaBox [0 0 w h] in points.
QSizeF mediaBox(const QByteArray& pdf)
{
    static const QRegularExpression box(QStringLiteral(R"(/MediaBox\s*\[\s*0\s+0\s+([\d.]+)\s+([\d.]+)\s*\])"));
    const QRegularExpressionMatch m = box.match(QString::fromLatin1(pdf));
    return m.hasMatch() ? QSizeF(m.captured(1).toDouble(), m.captured(2).toDouble()) : QSizeF();
}

/// A PDF text string entry of the Info dictionary ("/Title (...)"): literal string, backslash
/// escapes, PDFDocEncoding or UTF-16BE after a byte order mark.
QString infoString(const QByteArray& pdf, const QByteArray& key)
{
    const qsizetype at = pdf.indexOf(key + " (");
    if (at < 0)
        return QString();
    QByteArray raw;
    for (qsizetype i = at + key.size() + 2; i < pdf.size() && pdf[i] != ')'; ++i)
        raw += pdf[i] == '\\' ? pdf[++i] : pdf[i];
    if (!raw.startsWith("\xfe\xff"))
        return QString::fromLatin1(raw);
    QString out;
    for (qsizetype i = 2; i + 1 < raw.size(); i += 2)
        out += QChar(char16_t((uchar(raw[i]) << 8) | uchar(raw[i + 1])));
    return out;
}

QString expectedTitle()
{
    return QString::fromStdString(loadScenarioFile(kScenario.toStdString()).name) + QStringLiteral(": memory per GPU");
}

} // namespace

class TestExportPages : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void pdfPages_data()
    {
        QTest::addColumn<QStringList>("options");
        QTest::addColumn<QSize>("chart");
        QTest::addColumn<QSizeF>("page"); // empty: a 16:9 slide as tall as the chart
        QTest::newRow("slide by default") << QStringList {} << QSize(1200, 700) << QSizeF();
        QTest::newRow("slide") << QStringList { "--page", "slide" } << QSize(1000, 900) << QSizeF();
        QTest::newRow("a4 wide chart") << QStringList { "--page", "a4" } << QSize(1200, 700) << QSizeF(842, 595);
        QTest::newRow("a4 tall chart") << QStringList { "--page", "a4" } << QSize(600, 900) << QSizeF(595, 842);
        QTest::newRow("letter wide chart")
            << QStringList { "--page", "letter" } << QSize(1600, 900) << QSizeF(792, 612);
        QTest::newRow("letter tall chart") << QStringList { "--page", "letter" } << QSize(500, 800) << QSizeF(612, 792);
    }
    void pdfPages()
    {
        QFETCH(QStringList, options);
        QFETCH(QSize, chart);
        QFETCH(QSizeF, page);
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("p.pdf"));
        const auto [code, printed, err]
            = headless(QStringList { "--export", out, "--width", QString::number(chart.width()), "--height",
                           QString::number(chart.height()) }
                + options + QStringList { kScenario });
        QCOMPARE(code, 0);
        QVERIFY2(err.isEmpty(), err.constData());
        const QByteArray pdf = slurp(out);
        QVERIFY(pdf.startsWith("%PDF-"));
        const QSizeF box = mediaBox(pdf);
        QVERIFY2(!box.isEmpty(), "no MediaBox");
        if (page.isEmpty()) {
            QVERIFY2(qAbs(box.width() / box.height() - 16.0 / 9.0) < 0.005,
                qPrintable(QStringLiteral("%1 x %2").arg(box.width()).arg(box.height())));
            QCOMPARE(qRound(box.height()), chart.height());
        } else {
            QCOMPARE(qRound(box.width()), qRound(page.width()));
            QCOMPARE(qRound(box.height()), qRound(page.height()));
        }
        QCOMPARE(infoString(pdf, "/Title"), expectedTitle());
        QCOMPARE(infoString(pdf, "/Creator"), QStringLiteral("VRAM Lab"));
    }

    // Paper keeps the chart's shape inside half-inch margins, centred.
    void paperPlacementKeepsMarginsAndAspect()
    {
        for (PdfPage p : { PdfPage::A4, PdfPage::Letter })
            for (QSizeF chart : { QSizeF(1600, 900), QSizeF(600, 900), QSizeF(1000, 1000) }) {
                const PdfPlacement place = pdfPlacement(p, chart);
                const QRectF paper(QPointF(0, 0), place.pagePoints);
                QVERIFY(paper.adjusted(35.9, 35.9, -35.9, -35.9).contains(place.target));
                QVERIFY(qAbs(place.target.width() / place.target.height() - chart.width() / chart.height()) < 1e-9);
                QVERIFY(qAbs(place.target.center().x() - paper.center().x()) < 1e-9);
                QVERIFY(qAbs(place.target.center().y() - paper.center().y()) < 1e-9);
                // Touches the margins on one side: as large as it can be.
                QVERIFY(qAbs(place.target.left() - 36) < 1e-6 || qAbs(place.target.top() - 36) < 1e-6);
            }
        const PdfPlacement slide = pdfPlacement(PdfPage::Slide, QSizeF(1600, 900));
        QCOMPARE(slide.target, QRectF(0, 0, 1600, 900)); // a 16:9 chart fills its slide
    }

    void badPageIsOneLineAndExit2()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("p.pdf"));
        const auto [code, printed, err] = headless({ "--export", out, "--page", "a5", kScenario });
        QCOMPARE(code, 2);
        QCOMPARE(err.count('\n'), 1);
        QVERIFY2(err.contains("--page: expected slide, a4, letter"), err.constData());
        QVERIFY(err.contains("\"a5\""));
        QVERIFY(!QFile::exists(out));
    }

    // The dialog offers the page for a PDF only, and File > Export remembers the last one.
    void dialogOffersAndRemembersThePage()
    {
        QSettings().remove(QStringLiteral("exportPdfPage"));
        ExportDialog png(QStringLiteral("breakdown"), QStringLiteral("/tmp/x.png"), false);
        QVERIFY(!png.offersPage());
        png.setPath(QStringLiteral("/tmp/x.PDF"));
        QVERIFY(png.offersPage());
        QCOMPARE(png.pdfPage(), PdfPage::Slide);
        ExportDialog letter(QStringLiteral("breakdown"), QStringLiteral("/tmp/x.pdf"), false, PdfPage::Letter);
        QCOMPARE(letter.pdfPage(), PdfPage::Letter);

        QTemporaryDir dir;
        MainWindow window;
        QVERIFY(window.openFile(kScenario));
        const QString out = dir.filePath(QStringLiteral("w.pdf"));
        QVERIFY2(window.exportTo(out, QSize(1000, 600), false, PdfPage::A4), qPrintable(window.lastError()));
        QCOMPARE(mediaBox(slurp(out)), QSizeF(842, 595));
        QCOMPARE(QSettings().value(QStringLiteral("exportPdfPage")).toString(), QStringLiteral("a4"));
    }

    void svgFontsEndWithAGenericFamily()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("b.svg"));
        const auto [code, printed, err] = headless({ "--export", out, kScenario });
        QCOMPARE(code, 0);
        const QByteArray svg = slurp(out);
        QXmlStreamReader xml(svg);
        int families = 0, texts = 0;
        QString title, group; // the family of the group a text is drawn in
        static const QRegularExpression css(QStringLiteral(R"(^'([^']+)', (sans-serif|monospace)$)"));
        while (!xml.atEnd()) {
            xml.readNext();
            if (!xml.isStartElement())
                continue;
            if (xml.name() == QLatin1String("title") && title.isEmpty())
                title = xml.readElementText();
            if (xml.name() == QLatin1String("text")) {
                ++texts; // text names a real family ("DejaVu Sans"), not fontconfig's "Sans Serif" alias
                QVERIFY2(QFontDatabase::hasFamily(css.match(group).captured(1)), qPrintable(group));
            }
            const QString family = xml.attributes().value(QLatin1String("font-family")).toString();
            if (family.isEmpty())
                continue;
            ++families;
            QVERIFY2(css.match(family).hasMatch(), qPrintable(family));
            if (xml.name() == QLatin1String("g"))
                group = family;
        }
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
        QVERIFY(families > 0 && texts > 0);
        QCOMPARE(title, expectedTitle());
    }

    // A scenario's name is the title: markup in it stays text (Qt writes the title unescaped).
    void svgTitleIsTextWhateverTheName()
    {
        Scenario sc = loadScenarioFile(kScenario.toStdString());
        sc.name = "x & y <script> \"q\"";
        const ExportedChart chart(
            ChartKind::Breakdown, { sc }, {}, QSize(800, 500), exportTheme(false, QSize(800, 500)));
        QXmlStreamReader xml(chart.svg());
        QString title;
        while (!xml.atEnd() && title.isEmpty())
            if (xml.readNext() == QXmlStreamReader::StartElement && xml.name() == QLatin1String("title"))
                title = xml.readElementText();
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
        QCOMPARE(title, QStringLiteral("x & y <script> \"q\": memory per GPU"));
        QCOMPARE(chart.title(), title);
    }

    // The rewrite: quotes and entities survive, a list that ends with a generic family is kept.
    void svgFontRewrite_data()
    {
        QTest::addColumn<QByteArray>("in");
        QTest::addColumn<QByteArray>("out");
        QTest::newRow("bare") << QByteArray(R"(<text font-family="DejaVu Sans">)")
                              << QByteArray(R"(<text font-family="'DejaVu Sans', sans-serif">)");
        QTest::newRow("single quoted attribute") << QByteArray(R"(<g font-family='Noto Sans' x="1">)")
                                                 << QByteArray(R"(<g font-family="'Noto Sans', sans-serif" x="1">)");
        QTest::newRow("entities") << QByteArray(R"(<g font-family="A&amp;B &quot;C&quot; D's">)")
                                  << QByteArray(R"(<g font-family="'A&amp;B &quot;C&quot; D\'s', sans-serif">)");
        QTest::newRow("already generic") << QByteArray(R"(<g font-family="'X', serif">)")
                                         << QByteArray(R"(<g font-family="'X', serif">)");
        QTest::newRow("generic alone") << QByteArray(R"(<g font-family="monospace">)")
                                       << QByteArray(R"(<g font-family="monospace">)");
        QTest::newRow("text is not an attribute") << QByteArray(R"(<text x="1">a font-family='X' b</text>)")
                                                  << QByteArray(R"(<text x="1">a font-family='X' b</text>)");
    }
    void svgFontRewrite()
    {
        QFETCH(QByteArray, in);
        QFETCH(QByteArray, out);
        QCOMPARE(withGenericFontFamilies(in), out);
    }
};

QTEST_MAIN(TestExportPages)
#include "tst_export_pages.moc"
