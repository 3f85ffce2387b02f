#pragma once
// The regex subset of json_schema_to_gbnf.h turned into one GBNF expression; shared by
// regex_to_gbnf() (the whole output must match) and JSON Schema `pattern` (the match may sit
// anywhere inside a JSON string, written with JSON's escapes).

#include <string>
#include <string_view>

#include "structured/char_set.h"

namespace ps {

enum class RegexTarget {
  kRawText,            // the text itself; the regex must match all of it (Python re.fullmatch)
  kJsonStringContent,  // the inside of a JSON string literal; search semantics (re.search) as
                       // JSON Schema's `pattern` has: an end without ^ / $ may have more text
};

// Throws StructuredError naming `param` and the position for a construct outside the subset.
// `any_chars_rule` (kJsonStringContent): a rule matching any string content, for the ends that
// search semantics leave open.
std::string regex_expression(std::string_view regex, RegexTarget target, const std::string& param,
                             const std::string& any_chars_rule = "");

// A set of code points as a GBNF expression for the inside of a JSON string: printable members
// raw, `"` `\` and control characters as JSON escapes. Throws std::invalid_argument if empty.
std::string json_string_chars(const CharSet& set);

}  // namespace ps
