// The building-block rules that SchemaCompiler (schema_compiler.h) shares between schema nodes:
// JSON string content (raw characters, escapes, bounded lengths), numbers, and the any-value and
// any-object rules. Each is defined once per grammar and reused by name (shared_). Split from
// schema_compiler.cpp, which holds the structural walk.

#include "structured/char_set.h"
#include "structured/schema_compiler.h"

namespace ps {

// JSON string content is written as right-recursive rules that hold the closing quote, never as
// `char*` over a separate char rule or a group: the matcher judges a token's fate from the top
// rule frame, and a frame that ends after one character would leave every multi-character token
// to the slow per-stack check.
std::string SchemaCompiler::raw_chars() {
  CharSet raw = CharSet::all().minus(CharSet::range(0, 0x1F));
  return raw.minus(CharSet::single('"')).minus(CharSet::single('\\')).to_gbnf();
}

std::string SchemaCompiler::escape_rule() {
  auto it = shared_.find("escape");
  if (it != shared_.end()) return it->second;
  // After the backslash. \u escapes stop short of surrogates: a pair would count as two
  // characters here but as one for minLength in Python, and a lone one is not text.
  return shared_["escape"] =
             rules_.add("escape",
                        "[\"\\\\/bfnrt] | \"u\" ([0-9a-cA-Ce-fE-F] [0-9a-fA-F]{3} | [dD] [0-7] "
                        "[0-9a-fA-F]{2})");
}

std::string SchemaCompiler::string_rest_rule() {
  auto it = shared_.find("string-rest");
  if (it != shared_.end()) return it->second;
  std::string name = rules_.reserve("string-rest");
  shared_["string-rest"] = name;
  rules_.define(
      name, raw_chars() + " " + name + " | \"\\\\\" " + escape_rule() + " " + name + " | \"\\\"\"");
  return name;
}

std::string SchemaCompiler::any_chars_rule() {
  auto it = shared_.find("chars");
  if (it != shared_.end()) return it->second;
  std::string name = rules_.reserve("chars");
  shared_["chars"] = name;
  rules_.define(name,
                raw_chars() + " " + name + " | \"\\\\\" " + escape_rule() + " " + name + " | \"\"");
  return name;
}

std::string SchemaCompiler::string_rule() {
  auto it = shared_.find("string");
  if (it != shared_.end()) return it->second;
  return shared_["string"] = rules_.add("string", "\"\\\"\" " + string_rest_rule());
}

// A string of lo..hi characters (hi < 0: unbounded): rule c says c characters are written.
std::string SchemaCompiler::bounded_string(long lo, long hi, const std::string& ptr) {
  long last = hi < 0 ? lo : hi;
  if (last > 2000) {
    schema_error(ptr, "string lengths over 2000 are not supported (minLength/maxLength)");
  }
  std::string base = rule_hint(ptr) + "-len";
  std::vector<std::string> names;
  for (long c = 0; c <= last; ++c) names.push_back(rules_.reserve(base));
  for (long c = 0; c <= last; ++c) {
    if (hi < 0 && c == last) {
      rules_.define(names[c], string_rest_rule());
      continue;
    }
    std::string body;
    if (c < last) {
      body = raw_chars() + " " + names[c + 1] + " | \"\\\\\" " + escape_rule() + " " + names[c + 1];
    }
    if (c >= lo) body += std::string(body.empty() ? "" : " | ") + "\"\\\"\"";
    rules_.define(names[c], body);
  }
  return "(\"\\\"\" " + names[0] + ")";
}

std::string SchemaCompiler::number_rule() {
  auto it = shared_.find("number");
  if (it != shared_.end()) return it->second;
  // Exponents of up to two digits: 1e400 would parse as infinity.
  return shared_["number"] = rules_.add(
             "number", "\"-\"? (\"0\" | [1-9] [0-9]*) (\".\" [0-9]+)? ([eE] [-+]? [0-9]{1,2})?");
}

std::string SchemaCompiler::any_value() {
  auto it = shared_.find("value");
  if (it != shared_.end()) return it->second;
  std::string value = rules_.reserve("value");
  shared_["value"] = value;
  std::string object = any_object();
  std::string array = rules_.add("array", "\"[\" (" + value + " (\", \" " + value + ")*)? \"]\"");
  rules_.define(value, object + " | " + array + " | " + string_rule() + " | " + number_rule() +
                           " | \"true\" | \"false\" | \"null\"");
  return value;
}

std::string SchemaCompiler::any_object() {
  auto it = shared_.find("object");
  if (it != shared_.end()) return it->second;
  std::string object = rules_.reserve("object");
  shared_["object"] = object;
  std::string value = any_value();
  std::string member = string_rule() + " \": \" " + value;
  rules_.define(object, "\"{\" (" + member + " (\", \" " + member + ")*)? \"}\"");
  return object;
}
}  // namespace ps
