// SPDX-License-Identifier: MIT
#include "headless_export.h"

#include "chart_export.h"
#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/scenario_io.h"
#include "vramlab/text_escape.h"

#include <QCommandLineParser>
#include <QFileInfo>
#include <QGuiApplication>

#include <cstdio>
#include <cstring>

namespace vramlab {

bool wantsExport(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i)
        if (!std::strcmp(argv[i], "--export") || !std::strncmp(argv[i], "--export=", 9))
            return true;
    return false;
}

namespace {

constexpr int kMaxExportSide = 4096;

/// An argument echoed in an error: one line, cut to a sane length.
QString shown(const QString& value)
{
    return QString::fromStdString(printableText(value.toStdString(), 80));
}

} // namespace

int checkExportArguments(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i)
        if (!isValidUtf8(argv[i])) {
            std::fprintf(stderr, "argument %d \"%s\": not valid UTF-8 (file names and values must be UTF-8)\n", i,
                printableText(argv[i]).c_str());
            return 2;
        }
    return 0;
}

int runHeadlessExport(const QStringList& arguments)
{
    auto fail = [](const QString& message) {
        std::fprintf(stderr, "%s\n", qPrintable(message));
        return 2;
    };
    QCommandLineParser parser;
    const QCommandLineOption out(QStringLiteral("export"), QStringLiteral("Output file"), QStringLiteral("OUT"));
    const QCommandLineOption chart(
        QStringLiteral("chart"), QStringLiteral("Chart"), QStringLiteral("KIND"), QStringLiteral("breakdown"));
    const QCommandLineOption width(
        QStringLiteral("width"), QStringLiteral("Width"), QStringLiteral("W"), QStringLiteral("1600"));
    const QCommandLineOption height(
        QStringLiteral("height"), QStringLiteral("Height"), QStringLiteral("H"), QStringLiteral("900"));
    const QCommandLineOption theme(
        QStringLiteral("theme"), QStringLiteral("Theme"), QStringLiteral("light|dark"), QStringLiteral("light"));
    const QCommandLineOption page(QStringLiteral("page"), QStringLiteral("PDF page"),
        pdfPageNames().join(QLatin1Char('|')), pdfPageName(PdfPage::Slide));
    parser.addOptions({ out, chart, width, height, theme, page });
    parser.addPositionalArgument(QStringLiteral("scenario"), QStringLiteral("Scenario files"));
    if (!parser.parse(arguments))
        return fail(QStringLiteral("vramlab --export: ") + parser.errorText());

    const QString outPath = parser.value(out);
    if (outPath.isEmpty())
        return fail(QStringLiteral(
            "--export: the file name is empty; expected an output file (.png, .svg, .pdf, .csv, .md or .html)"));
    const std::optional<ChartKind> kind = parseChartKind(parser.value(chart).toStdString());
    if (!kind) {
        QStringList names;
        for (const std::string_view name : chartKindNames())
            names << QString::fromLatin1(name.data(), qsizetype(name.size()));
        return fail(QStringLiteral("--chart: expected one of %1, got \"%2\"")
                        .arg(names.join(QStringLiteral(", ")), shown(parser.value(chart))));
    }
    bool okW = false, okH = false;
    const int w = parser.value(width).toInt(&okW), h = parser.value(height).toInt(&okH);
    // 4096 points a side (a PNG is drawn at 2x: 8192 pixels): larger only costs seconds and gigabytes.
    if (!okW || w < 100 || w > kMaxExportSide)
        return fail(QStringLiteral("--width: expected pixels from 100 to %1, got \"%2\"")
                        .arg(QString::number(kMaxExportSide), shown(parser.value(width))));
    if (!okH || h < 100 || h > kMaxExportSide)
        return fail(QStringLiteral("--height: expected pixels from 100 to %1, got \"%2\"")
                        .arg(QString::number(kMaxExportSide), shown(parser.value(height))));
    const QString themeName = parser.value(theme);
    if (themeName != QLatin1String("light") && themeName != QLatin1String("dark"))
        return fail(QStringLiteral("--theme: expected light or dark, got \"%1\"").arg(shown(themeName)));
    const std::optional<PdfPage> pdfPage = parsePdfPage(parser.value(page));
    if (!pdfPage)
        return fail(QStringLiteral("--page: expected %1 (the PDF's page), got \"%2\"")
                        .arg(pdfPageNames().join(QStringLiteral(", ")), shown(parser.value(page))));
    if (parser.positionalArguments().isEmpty())
        return fail(QStringLiteral("vramlab --export: expected one or more scenario files after the options"));

    QVector<Scenario> scenarios;
    QStringList labels;
    for (const QString& file : parser.positionalArguments()) {
        try {
            scenarios << loadScenarioFile(file.toStdString());
            labels << QFileInfo(file).completeBaseName();
            // A chart of a configuration that cannot run would say so in pixels and exit 0:
            // refuse it as the CSV path does.
            (void)estimate(scenarios.back());
        } catch (const InputError& e) {
            return fail(QString::fromStdString(e.withFile(file.toStdString()).what()));
        } catch (const SizeOverflow& e) {
            return fail(file + QStringLiteral(": the configuration is too large: ") + QString::fromUtf8(e.what()));
        }
    }
    QString error;
    if (!exportScenario(*kind, scenarios, labels, outPath, QSize(w, h),
            exportTheme(themeName == QLatin1String("dark"), QSize(w, h)), &error, *pdfPage))
        return fail(error);
    return 0;
}

} // namespace vramlab
