#pragma once
// The GBNF text parser behind parse_gbnf() (gbnf_parser.h), shared by its two files:
// gbnf_parser.cpp reads the structure (rules, alternatives, groups, repetitions) and
// gbnf_terminals.cpp the terminals (string literals, character classes, escapes, UTF-8).
// Internal to structured/: include gbnf_parser.h instead.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "structured/constraint_spec.h"
#include "structured/gbnf_parser.h"
#include "structured/grammar.h"

namespace ps::gbnf_detail {

// Recursive descent over the text. Sugar is rewritten as it is parsed (llama.cpp's scheme):
// a group becomes a fresh rule, `x*` becomes `R ::= x R | ""`, `{m,n}` becomes m copies of x
// followed by n-m nested optionals.
class Parser {
 public:
  Parser(std::string_view text, const GbnfLimits& limits) : text_(text), limits_(limits) {}

  Grammar parse();

 private:
  [[noreturn]] void fail_at(size_t at, const std::string& what) const {
    throw StructuredError("grammar line " + location(at) + ": " + what, "grammar");
  }
  [[noreturn]] void fail(const std::string& what) const { fail_at(pos_, what); }
  std::string location(size_t at) const;

  bool at_end() const { return pos_ >= text_.size(); }
  char peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }

  void skip_space();
  std::string parse_name();
  bool at_rule_start() const;
  uint32_t rule_named(const std::string& name, size_t at);
  uint32_t new_rule(const std::string& name, size_t at);
  uint32_t fresh_rule(size_t at);
  void count_elements(size_t n, size_t at);

  // The structure (gbnf_parser.cpp).
  void parse_rule();
  std::vector<GrammarSequence> parse_alternatives(bool nested);
  GrammarSequence parse_sequence(bool nested);
  // Only spaces and tabs: `x\n*` is not a repetition of x (the `*` would be a syntax error).
  void skip_space_inline() {
    while (peek() == ' ' || peek() == '\t') ++pos_;
  }
  GrammarSequence parse_item();
  GrammarSequence parse_repetition(GrammarSequence item, size_t item_start);
  size_t parse_count(size_t at);
  GrammarElement wrap(GrammarSequence seq, size_t at);
  void resolve_references();

  // The terminals (gbnf_terminals.cpp).
  GrammarElement class_element(std::vector<CodepointRange> ranges);
  uint32_t parse_char(bool in_class);
  uint32_t parse_hex(int digits, size_t at);
  GrammarSequence parse_literal();
  std::vector<CodepointRange> parse_class();

  std::string_view text_;
  GbnfLimits limits_;
  size_t pos_ = 0;
  Grammar g_;
  std::map<std::string, uint32_t> by_name_;
  std::vector<bool> defined_;
  std::vector<size_t> first_use_;
  std::string current_rule_name_;
  int fresh_counter_ = 0;
  size_t elements_ = 0;
};

}  // namespace ps::gbnf_detail
