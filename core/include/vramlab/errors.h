// SPDX-License-Identifier: MIT
#pragma once

#include <stdexcept>
#include <string>

namespace vramlab {

/// Bad user input: names the file, the key path and what was expected, so the CLI can
/// print it as one line ("FILE: run.parallelism.zero_stage: expected 0, 1, 2 or 3, got 5").
/// Each part passes through printableText(): a value echoed from a hostile file can
/// neither flood a terminal nor reach it as escape sequences.
class InputError : public std::runtime_error {
public:
    InputError(std::string keyPath, std::string expected, std::string file = {});

    const std::string& keyPath() const noexcept { return m_keyPath; }
    const std::string& expected() const noexcept { return m_expected; }
    const std::string& file() const noexcept { return m_file; }
    /// Same error, attributed to `file` (kept when already set).
    InputError withFile(const std::string& file) const;

private:
    struct Printable { }; ///< the parts already passed through printableText()
    InputError(Printable, std::string keyPath, std::string expected, std::string file);
    static std::string compose(const std::string& file, const std::string& keyPath, const std::string& expected);
    std::string m_keyPath;
    std::string m_expected;
    std::string m_file;
};

/// A size that would not fit in 63 bits (an absurd configuration, not a bug).
class SizeOverflow : public std::overflow_error {
public:
    SizeOverflow()
        : std::overflow_error("size exceeds 2^63 bytes (about 9.2 exabytes)")
    {
    }
};

} // namespace vramlab
