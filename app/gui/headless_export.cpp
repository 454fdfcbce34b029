// SPDX-License-Identifier: MIT
#include "headless_export.h"

#include "chart_export.h"
#include "vramlab/errors.h"
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

int checkExportArguments(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i)
        if (!isValidUtf8(argv[i])) {
            std::fprintf(stderr, "argument %d \"%s\": not valid UTF-8 (file names and values must be UTF-8)\n", i,
                         printableBytes(argv[i]).c_str());
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
    const QCommandLineOption chart(QStringLiteral("chart"), QStringLiteral("Chart"), QStringLiteral("KIND"), QStringLiteral("breakdown"));
    const QCommandLineOption width(QStringLiteral("width"), QStringLiteral("Width"), QStringLiteral("W"), QStringLiteral("1600"));
    const QCommandLineOption height(QStringLiteral("height"), QStringLiteral("Height"), QStringLiteral("H"), QStringLiteral("900"));
    const QCommandLineOption theme(QStringLiteral("theme"), QStringLiteral("Theme"), QStringLiteral("light|dark"), QStringLiteral("light"));
    parser.addOptions({out, chart, width, height, theme});
    parser.addPositionalArgument(QStringLiteral("scenario"), QStringLiteral("Scenario files"));
    if (!parser.parse(arguments))
        return fail(QStringLiteral("vramlab --export: ") + parser.errorText());

    const QString outPath = parser.value(out);
    if (outPath.isEmpty())
        return fail(QStringLiteral("--export: the file name is empty; expected an output file (.png, .svg, .pdf, .csv, .md or .html)"));
    const std::optional<ChartKind> kind = parseChartKind(parser.value(chart));
    if (!kind)
        return fail(QStringLiteral("--chart: expected one of %1, got \"%2\"").arg(chartKindNames().join(QStringLiteral(", ")), parser.value(chart)));
    bool okW = false, okH = false;
    const int w = parser.value(width).toInt(&okW), h = parser.value(height).toInt(&okH);
    if (!okW || w < 100 || w > 10000)
        return fail(QStringLiteral("--width: expected pixels from 100 to 10000, got \"%1\"").arg(parser.value(width)));
    if (!okH || h < 100 || h > 10000)
        return fail(QStringLiteral("--height: expected pixels from 100 to 10000, got \"%1\"").arg(parser.value(height)));
    const QString themeName = parser.value(theme);
    if (themeName != QLatin1String("light") && themeName != QLatin1String("dark"))
        return fail(QStringLiteral("--theme: expected light or dark, got \"%1\"").arg(themeName));
    if (parser.positionalArguments().isEmpty())
        return fail(QStringLiteral("vramlab --export: expected one or more scenario files after the options"));

    QVector<Scenario> scenarios;
    QStringList labels;
    for (const QString& file : parser.positionalArguments()) {
        try {
            scenarios << loadScenarioFile(file.toStdString());
            labels << QFileInfo(file).completeBaseName();
        } catch (const InputError& e) {
            return fail(QString::fromStdString(e.what()));
        }
    }
    QString error;
    if (!exportScenario(*kind, scenarios, labels, outPath, QSize(w, h), exportTheme(themeName == QLatin1String("dark"), QSize(w, h)), &error))
        return fail(error);
    return 0;
}

} // namespace vramlab
