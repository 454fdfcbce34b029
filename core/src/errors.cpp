// SPDX-License-Identifier: MIT
#include "vramlab/errors.h"

namespace vramlab {

InputError::InputError(std::string keyPath, std::string expected, std::string file)
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
