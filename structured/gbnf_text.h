#pragma once
// Writing GBNF text (structured_api.md's dialect): quoted literals, class members, and a rule
// set whose names all start with one prefix, so that the lead can splice several compiled
// schemas into one grammar.

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ps {

// `"..."` for UTF-8 text; everything outside printable ASCII is written as \xHH / \uHHHH /
// \UHHHHHHHH so the grammar text stays ASCII whatever the input.
std::string gbnf_literal(std::string_view utf8);
std::string gbnf_literal_code_point(uint32_t c);
// One member of a `[...]` class, escaped where the class syntax needs it.
std::string gbnf_class_char(uint32_t c);

// "(a | b | c)": the alternatives as one parenthesized group (also for one alternative).
std::string gbnf_group(const std::vector<std::string>& alts);
// As gbnf_group, except that a single alternative is returned as it is.
std::string gbnf_alternatives(const std::vector<std::string>& alts);

// Decodes one UTF-8 code point at `pos` (advancing it); throws std::invalid_argument on bad UTF-8.
uint32_t decode_utf8(std::string_view s, size_t& pos);
std::string encode_utf8(uint32_t c);

class GbnfRules {
 public:
  explicit GbnfRules(std::string prefix) : prefix_(std::move(prefix)) {}
  const std::string& prefix() const { return prefix_; }

  // A fresh name `prefix-hint` (suffixed -2, -3, ... when taken), not yet defined: lets a
  // recursive rule refer to itself before its body exists.
  std::string reserve(std::string_view hint);
  void define(const std::string& name, std::string body);
  // reserve + define, except that a body already defined under some name returns that name.
  std::string add(std::string_view hint, std::string body);
  // The rule `prefix` itself (the grammar's entry).
  void define_root(std::string body) { define(prefix_, std::move(body)); }
  bool has(const std::string& name) const { return bodies_.count(name) != 0; }

  // Every rule, the root first, then in definition order. Throws std::logic_error if a reserved
  // name was never defined (a compiler bug, not bad input).
  std::string text() const;

 private:
  std::string prefix_;
  std::vector<std::string> order_;
  std::map<std::string, std::string> bodies_;
  std::map<std::string, std::string> name_of_body_;
  std::map<std::string, bool> reserved_;
};

}  // namespace ps
