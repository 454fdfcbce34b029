// SPDX-License-Identifier: MIT
#pragma once
// The main() shared by vramlab-cli and vramlab-probe: --help, --version, one command per
// run, and bad input as one line on stderr with exit 2. Header only (no library of its own).

#include "vramlab/errors.h"

#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

namespace vramlab {

/// Runs `dispatch(command, rest)`, which returns the exit code or nullopt for an unknown
/// command. InputError and SizeOverflow exit 2, any other exception 1, each as one line.
template <typename Dispatch>
int commandMain(const char* tool, const char* usage, const char* version, int argc, char** argv, Dispatch dispatch)
{
    const std::vector<std::string> words(argv + 1, argv + argc);
    if (words.empty() || words[0] == "--help" || words[0] == "-h" || words[0] == "help") {
        std::fputs(usage, words.empty() ? stderr : stdout);
        return words.empty() ? 2 : 0;
    }
    if (words[0] == "--version") {
        std::printf("%s %s\n", tool, version);
        return 0;
    }
    const std::vector<std::string> rest(words.begin() + 1, words.end());
    try {
        if (const std::optional<int> code = dispatch(words[0], rest))
            return *code;
        std::fprintf(stderr, "%s: unknown command \"%s\" (see %s --help)\n", tool, words[0].c_str(), tool);
        return 2;
    } catch (const InputError& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 2;
    } catch (const SizeOverflow& e) {
        std::fprintf(stderr, "the configuration is too large: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: internal error: %s\n", tool, e.what());
        return 1;
    }
}

} // namespace vramlab
