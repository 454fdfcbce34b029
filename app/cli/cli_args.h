// SPDX-License-Identifier: MIT
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace vramlab::cli {

/// Command-line words split into positionals, flags and --key value options.
class CliArgs {
public:
    /// `valued`: options that take a value; anything else starting with "--" is a flag.
    /// Throws InputError for an unknown option or a missing value.
    CliArgs(
        const std::vector<std::string>& words, const std::set<std::string>& valued, const std::set<std::string>& flags);

    const std::vector<std::string>& positionals() const { return m_positionals; }
    bool flag(const std::string& name) const { return m_flags.count(name) > 0; }
    std::optional<std::string> value(const std::string& name) const;
    /// An integer option; throws InputError naming the option.
    std::optional<long long> integer(const std::string& name, long long lo, long long hi) const;

private:
    std::vector<std::string> m_positionals;
    std::set<std::string> m_flags;
    std::map<std::string, std::string> m_values;
};

} // namespace vramlab::cli
