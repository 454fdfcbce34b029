// SPDX-License-Identifier: MIT
// vramlab: the desktop explorer. `vramlab FILE.json` opens a scenario (or a Hugging Face
// config.json); --help and --version answer without a display.
#include "headless_export.h"
#include "main_window.h"
#include "vramlab/version.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QSettings>

#include <cstdio>
#include <cstring>

namespace {

const char* const kHelp = R"(usage: vramlab [FILE.json]

VRAM Lab: where GPU memory and compute go when an LLM is trained, fine-tuned or served.
Opens FILE.json (a VRAM Lab scenario or a Hugging Face config.json), or the last session's
scenario, in the desktop explorer.

options:
  -h, --help     this text
  --version      the version

headless export (no display needed):
  vramlab --export OUT --chart breakdown|sweep-seq|sweep-batch|compare-methods|compare-zero|compare-files|timeline
          [--width W --height H --theme light|dark --page slide|a4|letter] SCENARIO.json [MORE.json...]
  OUT's extension picks the format: .png (2x), .svg, .pdf (the chart; --page: a 16:9 slide,
  the default, or an A4 or Letter page), .csv (its data),
  .md (review report + chart images in OUT_files/), .html (self-contained review report).
  Exit 0 when written, 2 with one line on stderr on bad input.
For scripts, see vramlab-cli --help.
)";

/// The first argument that is neither a file nor an option vramlab or Qt knows, or null.
const char* unknownOption(int argc, char** argv)
{
    // QGuiApplication's and QApplication's own options; the first group takes a value.
    static const char* const withValue[]
        = { "-platform", "-platformpluginpath", "-platformtheme", "-plugin", "-qmljsdebugger", "-qwindowgeometry",
              "-qwindowicon", "-qwindowtitle", "-session", "-style", "-stylesheet", "-display", "-geometry" };
    static const char* const flags[] = { "-reverse", "-widgetcount", "-nograb", "-dograb", "-sync" };
    for (int i = 1; i < argc; ++i) {
        const char* arg = argv[i];
        if (arg[0] != '-' || !std::strcmp(arg, "-"))
            continue;
        if (!std::strcmp(arg, "--"))
            return nullptr; // what follows are file names
        const char* a = arg[1] == '-' ? arg + 1 : arg; // Qt takes -style and --style alike
        bool known = false;
        for (const char* o : withValue)
            if (!std::strcmp(a, o) || (!std::strncmp(a, o, std::strlen(o)) && a[std::strlen(o)] == '=')) {
                known = true;
                if (!std::strchr(a, '='))
                    ++i; // its value
            }
        for (const char* o : flags)
            known = known || !std::strcmp(a, o);
        if (!known)
            return arg;
    }
    return nullptr;
}

} // namespace

int main(int argc, char** argv)
{
    // Answered before QApplication exists, so they work with no display at all.
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
            std::fputs(kHelp, stdout);
            return 0;
        }
        if (!std::strcmp(argv[i], "--version")) {
            std::printf("vramlab %s\n", VRAMLAB_VERSION);
            return 0;
        }
    }
    const bool exporting = vramlab::wantsExport(argc, argv);
    if (!exporting) // answered before Qt needs a display: an unknown option is not a platform abort
        if (const char* unknown = unknownOption(argc, argv)) {
            std::fprintf(stderr, "vramlab: unknown option \"%s\" (see vramlab --help)\n", unknown);
            return 2;
        }
    if (exporting) // before Qt turns bytes that are not UTF-8 into U+FFFD in a file name
        if (const int code = vramlab::checkExportArguments(argc, argv))
            return code;
    // An export needs no display: choose the offscreen platform unless one was asked for.
    if (exporting && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") && qEnvironmentVariableIsEmpty("DISPLAY")
        && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    if (exporting) // a command-line tool: only real errors, one line, reach stderr
        qInstallMessageHandler([](QtMsgType type, const QMessageLogContext&, const QString& msg) {
            if (type == QtCriticalMsg || type == QtFatalMsg)
                std::fprintf(stderr, "vramlab: %s\n", qPrintable(msg));
        });
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("VRAM Lab"));
    QApplication::setOrganizationDomain(QStringLiteral("vramlab.invalid"));
    QApplication::setApplicationName(QStringLiteral("vramlab"));
    QApplication::setApplicationDisplayName(QStringLiteral("VRAM Lab"));
    QApplication::setApplicationVersion(QStringLiteral(VRAMLAB_VERSION));

    if (exporting)
        return vramlab::runHeadlessExport(QApplication::arguments());

    QCommandLineParser parser;
    parser.addPositionalArgument(
        QStringLiteral("file"), QStringLiteral("Scenario or Hugging Face config.json to open"));
    parser.process(app);

    vramlab::MainWindow window;
    window.restoreSession();
    if (!parser.positionalArguments().isEmpty())
        window.openRequested(parser.positionalArguments().constFirst());
    window.show();
    return app.exec();
}
