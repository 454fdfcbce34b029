// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/errors.h"
#include "vramlab/text_escape.h"
#include "vramlab/units.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace vramlab::detail {

/// Reads one JSON object with key-path errors and remembers which keys it knew, so
/// the rest can be reported as unknown.
class JsonObjectReader {
public:
    JsonObjectReader(const nlohmann::json& obj, std::string path)
        : m_obj(obj)
        , m_path(std::move(path))
    {
        if (!m_obj.is_object())
            throw InputError(m_path.empty() ? "(document)" : m_path, "expected an object, got " + describe(m_obj));
    }

    std::string keyPath(const std::string& key) const { return m_path.empty() ? key : m_path + "." + key; }
    bool has(const std::string& key)
    {
        m_known.insert(key);
        return m_obj.contains(key) && !m_obj.at(key).is_null();
    }
    const nlohmann::json& at(const std::string& key) const { return m_obj.at(key); }

    /// An integer in [lo, hi]; integral floats (4096.0, 1e15) are accepted, 4096.5 is not.
    std::optional<Count> integer(const std::string& key, Count lo, Count hi)
    {
        if (!has(key))
            return std::nullopt;
        const nlohmann::json& v = m_obj.at(key);
        const std::string range = "an integer from " + formatCount(lo) + " to " + formatCount(hi);
        Count value = 0;
        if (v.is_number_unsigned()) {
            const auto u = v.get<std::uint64_t>();
            if (u > static_cast<std::uint64_t>(hi))
                throw InputError(keyPath(key), "expected " + range + ", got " + v.dump());
            value = static_cast<Count>(u);
        } else if (v.is_number_integer()) {
            value = v.get<std::int64_t>();
        } else if (v.is_number_float()) {
            const double d = v.get<double>();
            if (!std::isfinite(d) || std::floor(d) != d || d < static_cast<double>(lo) || d > static_cast<double>(hi))
                throw InputError(keyPath(key), "expected " + range + ", got " + v.dump());
            value = static_cast<Count>(d);
        } else {
            throw InputError(keyPath(key), "expected " + range + ", got " + describe(v));
        }
        if (value < lo || value > hi)
            throw InputError(keyPath(key), "expected " + range + ", got " + formatCount(value));
        return value;
    }

    /// A finite number in [lo, hi] (hiOpen: strictly below hi).
    std::optional<double> number(const std::string& key, double lo, double hi, bool hiOpen = false)
    {
        if (!has(key))
            return std::nullopt;
        const nlohmann::json& v = m_obj.at(key);
        const std::string range = "a number from " + trim(lo) + (hiOpen ? " to below " : " to ") + trim(hi);
        if (!v.is_number())
            throw InputError(keyPath(key), "expected " + range + ", got " + describe(v));
        const double d = v.get<double>();
        if (!std::isfinite(d) || d < lo || d > hi || (hiOpen && d >= hi))
            throw InputError(keyPath(key), "expected " + range + ", got " + v.dump());
        return d;
    }

    std::optional<bool> boolean(const std::string& key)
    {
        if (!has(key))
            return std::nullopt;
        const nlohmann::json& v = m_obj.at(key);
        if (!v.is_boolean())
            throw InputError(keyPath(key), "expected true or false, got " + describe(v));
        return v.get<bool>();
    }

    std::optional<std::string> string(const std::string& key)
    {
        if (!has(key))
            return std::nullopt;
        const nlohmann::json& v = m_obj.at(key);
        if (!v.is_string())
            throw InputError(keyPath(key), "expected a string, got " + describe(v));
        return v.get<std::string>();
    }

    /// One of `choices` (name -> value).
    template <typename T>
    std::optional<T> choice(const std::string& key, const std::vector<std::pair<std::string, T>>& choices)
    {
        const std::optional<std::string> s = string(key);
        if (!s)
            return std::nullopt;
        std::string names;
        for (const auto& [name, value] : choices) {
            if (name == *s)
                return value;
            names += (names.empty() ? "" : ", ") + name;
        }
        throw InputError(keyPath(key), "expected one of " + names + ", got \"" + *s + "\"");
    }

    /// Keys present but never asked for, as full key paths.
    void collectUnknown(std::vector<std::string>& warnings) const
    {
        for (auto it = m_obj.begin(); it != m_obj.end(); ++it)
            if (!m_known.count(it.key()))
                warnings.push_back(printableText(keyPath(it.key()), 200) + ": unknown key, ignored (kept when saved)");
    }

    static std::string describe(const nlohmann::json& v)
    {
        switch (v.type()) {
        case nlohmann::json::value_t::null:
            return "null";
        case nlohmann::json::value_t::object:
            return "an object";
        case nlohmann::json::value_t::array:
            return "an array";
        case nlohmann::json::value_t::string:
            return "the string " + v.dump();
        case nlohmann::json::value_t::boolean:
            return v.dump();
        default:
            return v.dump();
        }
    }

private:
    static std::string trim(double d)
    {
        std::string s = std::to_string(d);
        s.erase(s.find_last_not_of('0') + 1);
        if (!s.empty() && s.back() == '.')
            s.pop_back();
        return s;
    }

    const nlohmann::json& m_obj;
    std::string m_path;
    std::set<std::string> m_known;
};

} // namespace vramlab::detail
