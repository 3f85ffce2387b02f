#pragma once
// JSON Schema `format` values we enforce, as GBNF expressions for the inside of the JSON string
// (none of them can contain a character JSON must escape).

#include <optional>
#include <string>

namespace ps {

// The expression for `format`, or nullopt if we do not enforce that format.
std::optional<std::string> format_gbnf(const std::string& format);

// The formats format_gbnf() knows, for error messages: "date, time, ...".
std::string supported_formats();

}  // namespace ps
