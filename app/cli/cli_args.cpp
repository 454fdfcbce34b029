// SPDX-License-Identifier: MIT
#include "cli_args.h"

#include "vramlab/errors.h"

#include <charconv>

namespace vramlab::cli {

CliArgs::CliArgs(
    const std::vector<std::string>& words, const std::set<std::string>& valued, const std::set<std::string>& flags)
{
    for (size_t i = 0; i < words.size(); ++i) {
        const std::string& w = words[i];
        if (w.size() > 2 && w.rfind("--", 0) == 0) {
            std::string name = w, val;
            const auto eq = w.find('=');
            const bool inlineValue = eq != std::string::npos;
            if (inlineValue) {
                name = w.substr(0, eq);
                val = w.substr(eq + 1);
            }
            if (valued.count(name)) {
                if (!inlineValue) {
                    if (i + 1 >= words.size())
                        throw InputError(name, "expected a value after it");
                    val = words[++i];
                }
                m_values[name] = val;
            } else if (flags.count(name) && !inlineValue) {
                m_flags.insert(name);
            } else {
                throw InputError(name, "unknown option (see --help)");
            }
        } else if (w == "-o" && valued.count("-o")) {
            if (i + 1 >= words.size())
                throw InputError("-o", "expected an output file after it");
            m_values["-o"] = words[++i];
        } else {
            m_positionals.push_back(w);
        }
    }
}

std::optional<std::string> CliArgs::value(const std::string& name) const
{
    auto it = m_values.find(name);
    if (it == m_values.end())
        return std::nullopt;
    return it->second;
}

std::optional<long long> CliArgs::integer(const std::string& name, long long lo, long long hi) const
{
    auto v = value(name);
    if (!v)
        return std::nullopt;
    long long out = 0;
    const auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
    if (ec != std::errc() || ptr != v->data() + v->size() || out < lo || out > hi)
        throw InputError(name,
            "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got \"" + *v + "\"");
    return out;
}

} // namespace vramlab::cli
