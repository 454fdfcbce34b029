// SPDX-License-Identifier: MIT
#pragma once
// The main() shared by vramlab-cli and vramlab-probe: --help, --version, one command per
// run, bad input as one line on stderr with exit 2, and a failed write to standard output
// (a full disk, /dev/full, a closed pipe) as exit 1. Header only (no library of its own).

#include "vramlab/errors.h"
#include "vramlab/text_escape.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace vramlab {

/// A write to stdout that failed, with its errno: the command stops there.
class StandardOutputError : public std::runtime_error {
public:
    explicit StandardOutputError(int err)
        : std::runtime_error(std::strerror(err))
        , m_errno(err)
    {
    }
    int error() const noexcept { return m_errno; }

private:
    int m_errno;
};

/// Writes `text` to stdout; throws StandardOutputError (with the reason, which a later
/// fflush no longer knows) when it fails.
inline void writeStandardOutput(std::string_view text)
{
    errno = 0;
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::ferror(stdout))
        throw StandardOutputError(errno != 0 ? errno : EIO);
}

/// Flushes and closes stdout; on failure (or an earlier failed write, `writeErrno`) says
/// so on stderr in one line and returns 1, else `code`. Without this `timeline --json >
/// file` on a full disk exited 0 with the file cut.
inline int finishStandardOutput(const char* tool, int code, int writeErrno = 0)
{
    int err = writeErrno;
    errno = 0;
    if (std::fflush(stdout) != 0 && err == 0)
        err = errno != 0 ? errno : EIO;
    if (std::ferror(stdout) && err == 0)
        err = EIO;
    errno = 0;
    if (std::fclose(stdout) != 0 && err == 0)
        err = errno != 0 ? errno : EIO;
    if (err == 0)
        return code;
    std::fprintf(stderr, "%s: cannot write to standard output: %s\n", tool, std::strerror(err));
    return code != 0 ? code : 1;
}

/// Arguments are file names and values that end up in files and messages: refuse bytes
/// that are not UTF-8 rather than write a name no one typed. Throws InputError.
inline void checkArgumentsAreUtf8(const std::vector<std::string>& words)
{
    for (size_t i = 0; i < words.size(); ++i)
        if (!isValidUtf8(words[i]))
            throw InputError("argument " + std::to_string(i + 1) + " \"" + printableText(words[i]) + "\"",
                "not valid UTF-8 (file names and values must be UTF-8)");
}

/// Runs `dispatch(command, rest)`, which returns the exit code or nullopt for an unknown
/// command. InputError and SizeOverflow exit 2, any other exception 1, each as one line.
template <typename Dispatch>
int runCommand(
    const char* tool, const char* usage, const char* version, int argc, char** argv, Dispatch dispatch, int& writeErrno)
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
        checkArgumentsAreUtf8(words);
        if (const std::optional<int> code = dispatch(words[0], rest))
            return *code;
        std::fprintf(stderr, "%s: unknown command \"%s\" (see %s --help)\n", tool, words[0].c_str(), tool);
        return 2;
    } catch (const StandardOutputError& e) {
        writeErrno = e.error(); // reported once, by finishStandardOutput()
        return 1;
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

/// runCommand(), then the check that everything written to stdout reached it.
template <typename Dispatch>
int commandMain(const char* tool, const char* usage, const char* version, int argc, char** argv, Dispatch dispatch)
{
    int writeErrno = 0;
    const int code = runCommand(tool, usage, version, argc, argv, dispatch, writeErrno);
    return finishStandardOutput(tool, code, writeErrno);
}

} // namespace vramlab
