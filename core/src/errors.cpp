// SPDX-License-Identifier: MIT
#include "vramlab/errors.h"

#include "vramlab/text_escape.h"

#include <utility>

namespace vramlab {

namespace {

// Lengths of what an error may echo: enough for any real path, key or expectation.
constexpr std::size_t kMaxFileBytes = 400;
constexpr std::size_t kMaxKeyPathBytes = 200;
constexpr std::size_t kMaxExpectedBytes = 600;

} // namespace

InputError::InputError(std::string keyPath, std::string expected, std::string file)
    : InputError(Printable {}, printableText(keyPath, kMaxKeyPathBytes), printableText(expected, kMaxExpectedBytes),
        printableText(file, kMaxFileBytes))
{
}

// Each part is made printable once (the planner throws and catches one per impossible layout).
InputError::InputError(Printable, std::string keyPath, std::string expected, std::string file)
    : std::runtime_error(compose(file, keyPath, expected))
    , m_keyPath(std::move(keyPath))
    , m_expected(std::move(expected))
    , m_file(std::move(file))
{
}

InputError InputError::withFile(const std::string& file) const
{
    return InputError(m_keyPath, m_expected, m_file.empty() ? file : m_file);
}

std::string InputError::compose(const std::string& file, const std::string& keyPath, const std::string& expected)
{
    std::string msg;
    if (!file.empty())
        msg += file + ": ";
    if (!keyPath.empty())
        msg += keyPath + ": ";
    return msg + expected;
}

} // namespace vramlab
