// SPDX-License-Identifier: MIT
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace vramlab {

/// The largest TOML file read (a training config is a few kilobytes).
inline constexpr std::size_t kMaxTomlFileBytes = 1 << 20;

/// Reads the TOML that training configs use (torchtitan's train_configs/*.toml) into JSON: tables and dotted
/// table headers become objects; basic and literal strings, integers, floats, booleans, arrays and inline
/// tables become their JSON values. What such configs never hold is refused rather than half read, naming the
/// line: multi-line strings, dates and times, arrays of tables, hexadecimal/octal/binary integers. A key defined
/// twice is refused, as TOML requires. Throws InputError("line N", what was expected, file).
nlohmann::json parseTomlText(std::string_view text, const std::string& file);

} // namespace vramlab
