#include "structured/gbnf_parser.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "structured/codepoint_class.h"
#include "structured/constraint_spec.h"
#include "structured/gbnf_parser_internal.h"
#include "structured/grammar_checks.h"

// Recursive descent over GBNF text: see gbnf_parser_internal.h for the Parser, whose terminals
// (literals, classes, escapes) are gbnf_terminals.cpp's.
namespace ps::gbnf_detail {
namespace {

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

}  // namespace

Grammar Parser::parse() {
  if (text_.size() > limits_.max_text_bytes) {
    throw StructuredError("grammar is " + std::to_string(text_.size()) +
                              " bytes, over the limit of " + std::to_string(limits_.max_text_bytes),
                          "grammar");
  }
  skip_space();
  while (pos_ < text_.size()) {
    parse_rule();
    skip_space();
  }
  resolve_references();
  return std::move(g_);
}

std::string Parser::location(size_t at) const {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < at && i < text_.size(); ++i) {
    if (text_[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return std::to_string(line) + ":" + std::to_string(col);
}

// Spaces, newlines and comments: a rule ends where the next `name ::=` starts (or at the
// end), so rules may span lines freely.
void Parser::skip_space() {
  while (!at_end()) {
    char c = peek();
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++pos_;
    } else if (c == '#') {
      while (!at_end() && peek() != '\n') ++pos_;
    } else {
      break;
    }
  }
}

std::string Parser::parse_name() {
  size_t start = pos_;
  while (!at_end() && is_name_char(peek())) ++pos_;
  if (pos_ == start) fail("expected a rule name");
  return std::string(text_.substr(start, pos_ - start));
}

// True when the text at pos_ reads `name ::=` (the start of the next rule).
bool Parser::at_rule_start() const {
  size_t p = pos_;
  while (p < text_.size() && is_name_char(text_[p])) ++p;
  if (p == pos_) return false;
  while (p < text_.size() && (text_[p] == ' ' || text_[p] == '\t')) ++p;
  return text_.substr(p, 3) == "::=";
}

uint32_t Parser::rule_named(const std::string& name, size_t at) {
  auto it = by_name_.find(name);
  if (it != by_name_.end()) return it->second;
  uint32_t id = new_rule(name, at);
  by_name_[name] = id;
  return id;
}

uint32_t Parser::new_rule(const std::string& name, size_t at) {
  if (g_.rules.size() >= limits_.max_rules) {
    fail_at(at, "grammar needs more than " + std::to_string(limits_.max_rules) +
                    " rules (the limit, counting the ones groups and repetitions make)");
  }
  g_.rules.push_back(GrammarRule{name, location(at), {}});
  defined_.push_back(false);
  first_use_.push_back(at);
  return static_cast<uint32_t>(g_.rules.size() - 1);
}

uint32_t Parser::fresh_rule(size_t at) {
  std::string name = current_rule_name_ + "_" + std::to_string(++fresh_counter_);
  uint32_t id = new_rule(name, at);
  defined_[id] = true;
  return id;
}

void Parser::count_elements(size_t n, size_t at) {
  elements_ += n;
  if (elements_ > limits_.max_elements) {
    fail_at(at, "grammar expands to more than " + std::to_string(limits_.max_elements) +
                    " elements (the limit; a large {m,n} repetition counts n times)");
  }
}

void Parser::parse_rule() {
  size_t start = pos_;
  std::string name = parse_name();
  while (peek() == ' ' || peek() == '\t') ++pos_;
  if (text_.substr(pos_, 3) != "::=") fail("expected '::=' after rule name '" + name + "'");
  pos_ += 3;
  uint32_t id = rule_named(name, start);
  if (defined_[id]) fail_at(start, "rule '" + name + "' is defined twice");
  defined_[id] = true;
  g_.rules[id].origin = location(start);
  current_rule_name_ = name;
  fresh_counter_ = 0;
  auto alts = parse_alternatives(/*nested=*/false);
  g_.rules[id].alternatives = std::move(alts);
}

std::vector<GrammarSequence> Parser::parse_alternatives(bool nested) {
  std::vector<GrammarSequence> alts;
  alts.push_back(parse_sequence(nested));
  while (peek() == '|') {
    ++pos_;
    alts.push_back(parse_sequence(nested));
  }
  return alts;
}

GrammarSequence Parser::parse_sequence(bool nested) {
  GrammarSequence seq;
  for (;;) {
    skip_space();
    if (at_end()) break;
    char c = peek();
    if (c == '|') break;
    if (c == ')') {
      if (!nested) fail("unmatched ')'");
      break;
    }
    if (!nested && at_rule_start()) break;
    size_t item_start = pos_;
    GrammarSequence item = parse_item();
    skip_space_inline();
    // Postfix repetition applies to the item just parsed (a whole literal, a group, ...).
    while (!at_end() && (peek() == '*' || peek() == '+' || peek() == '?' || peek() == '{')) {
      item = parse_repetition(std::move(item), item_start);
      skip_space_inline();
    }
    seq.insert(seq.end(), item.begin(), item.end());
  }
  return seq;
}

GrammarSequence Parser::parse_item() {
  char c = peek();
  size_t at = pos_;
  if (c == '"') return parse_literal();
  if (c == '[') return {class_element(parse_class())};
  if (c == '.') {
    ++pos_;
    count_elements(1, at);
    return {class_element(any_codepoint())};
  }
  if (c == '(') {
    ++pos_;
    auto alts = parse_alternatives(/*nested=*/true);
    if (peek() != ')') fail_at(at, "'(' is never closed");
    ++pos_;
    uint32_t id = fresh_rule(at);
    g_.rules[id].alternatives = std::move(alts);
    count_elements(1, at);
    return {GrammarElement{GrammarElement::Kind::kRuleRef, id}};
  }
  if (is_name_char(c)) {
    std::string name = parse_name();
    count_elements(1, at);
    return {GrammarElement{GrammarElement::Kind::kRuleRef, rule_named(name, at)}};
  }
  fail(std::string("unexpected character '") + c + "'");
}

// `*`, `+`, `?`, `{m}`, `{m,}`, `{m,n}` applied to `item` (one or more elements).
GrammarSequence Parser::parse_repetition(GrammarSequence item, size_t item_start) {
  size_t at = pos_;
  char op = peek();
  ++pos_;
  size_t min = 0, max = 0;
  bool unbounded = false;
  if (op == '*') {
    unbounded = true;
  } else if (op == '+') {
    min = 1;
    unbounded = true;
  } else if (op == '?') {
    max = 1;
  } else {
    skip_space_inline();
    min = parse_count(at);
    skip_space_inline();
    if (peek() == ',') {
      ++pos_;
      skip_space_inline();
      if (peek() == '}') {
        unbounded = true;
      } else {
        max = parse_count(at);
        if (max < min) fail_at(at, "repetition {m,n} has n < m");
      }
    } else {
      max = min;
    }
    skip_space_inline();
    if (peek() != '}') fail_at(at, "repetition '{' is not closed with '}'");
    ++pos_;
  }
  // Several elements (a literal) repeat as a whole: wrap them in one rule first.
  GrammarElement unit = item.size() == 1 ? item[0] : wrap(std::move(item), item_start);
  size_t copies = min + (unbounded ? 1 : max - min);
  count_elements(copies * 2, at);
  GrammarSequence out(min, unit);
  if (unbounded) {
    // R ::= unit R | ""
    uint32_t r = fresh_rule(at);
    g_.rules[r].alternatives = {{unit, GrammarElement{GrammarElement::Kind::kRuleRef, r}}, {}};
    out.push_back(GrammarElement{GrammarElement::Kind::kRuleRef, r});
  } else if (max > min) {
    // Innermost first: O_1 ::= unit | "", O_k ::= unit O_{k-1} | "".
    uint32_t inner = fresh_rule(at);
    g_.rules[inner].alternatives = {{unit}, {}};
    for (size_t k = 1; k < max - min; ++k) {
      uint32_t r = fresh_rule(at);
      g_.rules[r].alternatives = {{unit, GrammarElement{GrammarElement::Kind::kRuleRef, inner}},
                                  {}};
      inner = r;
    }
    out.push_back(GrammarElement{GrammarElement::Kind::kRuleRef, inner});
  }
  return out;
}

size_t Parser::parse_count(size_t at) {
  size_t start = pos_;
  size_t v = 0;
  while (peek() >= '0' && peek() <= '9') {
    v = v * 10 + static_cast<size_t>(peek() - '0');
    if (v > limits_.max_elements) {
      fail_at(at, "repetition count is over the limit of " + std::to_string(limits_.max_elements) +
                      " elements");
    }
    ++pos_;
  }
  if (pos_ == start) fail_at(at, "repetition '{' needs a number");
  return v;
}

GrammarElement Parser::wrap(GrammarSequence seq, size_t at) {
  uint32_t r = fresh_rule(at);
  g_.rules[r].alternatives = {std::move(seq)};
  return GrammarElement{GrammarElement::Kind::kRuleRef, r};
}

void Parser::resolve_references() {
  for (size_t i = 0; i < g_.rules.size(); ++i) {
    if (!defined_[i]) {
      fail_at(first_use_[i], "rule '" + g_.rules[i].name + "' is used but never defined");
    }
  }
  auto root = by_name_.find("root");
  if (root == by_name_.end()) {
    throw StructuredError("grammar has no rule named 'root' (the start rule)", "grammar");
  }
  g_.root = root->second;
}

}  // namespace ps::gbnf_detail

namespace ps {

Grammar parse_gbnf(std::string_view text, const GbnfLimits& limits) {
  Grammar g = gbnf_detail::Parser(text, limits).parse();
  reject_left_recursion(g);
  return g;
}

}  // namespace ps
