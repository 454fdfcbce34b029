// SPDX-License-Identifier: MIT
// vramlab: the desktop explorer. `vramlab FILE.json` opens a scenario (or a Hugging Face
// config.json); --help and --version answer without a display.
#include "main_window.h"

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
For scripts, see vramlab-cli --help.
)";

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
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("VRAM Lab"));
    QApplication::setOrganizationDomain(QStringLiteral("vramlab.invalid"));
    QApplication::setApplicationName(QStringLiteral("vramlab"));
    QApplication::setApplicationDisplayName(QStringLiteral("VRAM Lab"));
    QApplication::setApplicationVersion(QStringLiteral(VRAMLAB_VERSION));

    QCommandLineParser parser;
    parser.addPositionalArgument(QStringLiteral("file"), QStringLiteral("Scenario or Hugging Face config.json to open"));
    parser.process(app);

    vramlab::MainWindow window;
    window.restoreSession();
    if (!parser.positionalArguments().isEmpty())
        window.openFile(parser.positionalArguments().constFirst());
    window.show();
    return app.exec();
}
