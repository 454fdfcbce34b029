// SPDX-License-Identifier: MIT
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace vramlab {

/// The largest YAML file read (a training config is a few kilobytes).
inline constexpr std::size_t kMaxYamlFileBytes = 1 << 20;

/// Reads the YAML that training configs use (TRL's `trl sft --config`, accelerate's config files) into JSON, as
/// PyYAML's safe_load reads it: block mappings and sequences, flow [..] and {..}, plain, quoted and block (| >)
/// scalars. Plain scalars resolve as PyYAML's YAML 1.1 resolver does: null (~, null, nothing), booleans (true,
/// false, yes, no, on, off), decimal integers, floats only with a '.' and a signed exponent (so 1e-5 stays the
/// string "1e-5", as in PyYAML), the rest strings. What could construct objects or alias data is refused naming
/// the line (tags such as !!python/object, anchors and aliases, merge keys, complex keys, directives, a second
/// document), and so is what such configs never hold (hexadecimal, octal and sexagesimal integers, dates,
/// infinities). A key given twice is refused (PyYAML keeps the last one silently). Limits: 1 MiB, 32 levels of
/// nesting. Throws InputError("line N", what was expected, file).
nlohmann::json parseYamlText(std::string_view text, const std::string& file);

} // namespace vramlab
