#pragma once
// JSON Schema, regex and choice lists compiled to GBNF text (structured_api.md's dialect), which
// the grammar compiler parses and matches. Every function throws StructuredError (a 400: the
// message names the keyword and its JSON pointer, or the regex position) for a constraint it
// does not enforce; nothing is silently ignored but annotations.
//
// Output form, fixed: JSON exactly as Python's json.dumps writes it by default — ", " between
// members and elements, ": " after keys, no other whitespace, no newlines — so a model's output
// stays short and matches the JSON most training data shows. Object members come in the
// schema's `properties` order (use the text overload: nlohmann::json sorts keys).
//
// JSON Schema keywords enforced:
//   type (every type, and lists such as ["string","null"]; OpenAPI `nullable`), enum, const,
//   properties, required, additionalProperties (false / true / a schema; absent means no other
//   members are generated — still valid, and the output stays short), items, prefixItems (and
//   the older items-array + additionalItems), minItems, maxItems, minLength, maxLength,
//   pattern, format (date, time, date-time, uuid, email, ipv4), minimum / maximum /
//   exclusiveMinimum / exclusiveMaximum on integers (any value) and numbers (integer values;
//   bounded numbers are written without exponent), anyOf, oneOf (only where the branches are
//   provably disjoint, else refused), allOf (merged into one schema: objects, and keywords that
//   agree), $ref to "#..." pointers ($defs, definitions, recursion included), uniqueItems:false.
// Ignored as annotations: title, description, examples, default, $schema, $id, $comment,
//   $anchor, readOnly, writeOnly, deprecated, contentEncoding, contentMediaType.
// Anything else (uniqueItems:true, multipleOf, not, if/then/else, patternProperties, bounds
// that are not integers on numbers, pattern together with a length, ...) is refused.
//
// Regex subset (regex_to_gbnf and `pattern`): literals and escapes (\n \t \xHH \uHHHH, \. ...),
// classes [a-z] [^...] with \d \w \s \D \W \S (ASCII meanings), `.` (not newline), groups
// ( ) (?: ) (?P<n> ) (?<n> ), alternation, quantifiers * + ? {m} {m,} {m,n} (lazy forms too),
// ^ / $ at the start / end of the regex or of a top-level alternative. Refused: lookarounds,
// backreferences, \b, \p{..}, inline flags, possessive quantifiers.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ps {

// A complete grammar whose rule `root_rule` matches exactly the JSON texts above that the
// schema accepts; every rule it defines is named `root_rule` or `root_rule-...`.
std::string json_schema_to_gbnf(const nlohmann::ordered_json& schema,
                                const std::string& root_rule = "root");
std::string json_schema_to_gbnf(const nlohmann::json& schema,
                                const std::string& root_rule = "root");
// Parses the schema text itself (keeps its property order). Malformed JSON: StructuredError.
std::string json_schema_to_gbnf_text(std::string_view schema_json,
                                     const std::string& root_rule = "root");

// Any JSON object (response_format {"type":"json_object"}).
std::string json_object_gbnf(const std::string& root_rule = "root");

// The whole output matches the regex (Python re.fullmatch).
std::string regex_to_gbnf(std::string_view regex, const std::string& root_rule = "root");

// The whole output is one of the strings.
std::string choice_gbnf(const std::vector<std::string>& choices,
                        const std::string& root_rule = "root");

}  // namespace ps
