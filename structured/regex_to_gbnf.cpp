// Recursive descent over the regex text, writing GBNF as it goes. Soundness comes first: every
// string the grammar accepts must match the regex under Python's `re` (what python3-jsonschema
// runs) and ECMA-262 (what JSON Schema names). Where the two differ the grammar takes the
// narrower meaning: \d, \w, \s are ASCII (Python's Unicode classes are larger), and \D, \W and
// negated classes holding \d or \w stay inside ASCII (Python's complements are smaller).

#include <cstdint>
#include <string>
#include <vector>

#include "structured/constraint_spec.h"
#include "structured/gbnf_text.h"
#include "structured/json_schema_to_gbnf.h"
#include "structured/regex_gbnf.h"
#include "structured/regex_parser_internal.h"

// The structure of the regex subset; what one character stands for is
// regex_char_classes.cpp's.
namespace ps::regex_detail {

std::string RegexParser::parse() {
  // Top level: anchors may open / close each alternative.
  std::vector<std::string> alts;
  while (true) {
    bool anchored_start = eat('^');
    std::string body = concat(/*top_level=*/true);
    bool anchored_end = eat('$');
    if (target_ == RegexTarget::kJsonStringContent) {
      std::string any =
          !any_chars_.empty() ? any_chars_ : "(" + json_string_chars(CharSet::all()) + ")*";
      if (!anchored_start) body = any + " " + body;
      if (!anchored_end) body = body + " " + any;
    }
    alts.push_back(body);
    if (pos_ >= re_.size()) break;
    if (!eat('|')) fail("unexpected '" + std::string(1, re_[pos_]) + "'");
  }
  return join_alternatives(alts);
}

std::string RegexParser::join_alternatives(const std::vector<std::string>& alts) {
  if (alts.size() == 1) return alts[0].empty() ? "\"\"" : "(" + alts[0] + ")";
  std::string out = "(";
  for (size_t i = 0; i < alts.size(); ++i) {
    if (i) out += " | ";
    out += alts[i].empty() ? "\"\"" : alts[i];
  }
  return out + ")";
}

std::string RegexParser::alternation() {
  std::vector<std::string> alts{concat(false)};
  while (eat('|')) alts.push_back(concat(false));
  return join_alternatives(alts);
}

std::string RegexParser::concat(bool top_level) {
  std::string out;
  while (pos_ < re_.size() && !at('|') && !at(')')) {
    if (at('$')) {
      if (top_level && (pos_ + 1 == re_.size() || re_[pos_ + 1] == '|')) break;
      fail("'$' is supported only at the end of the regex or of a top-level alternative");
    }
    if (at('^')) fail("'^' is supported only at the start of the regex or of an alternative");
    simple_atom_ = false;
    std::string piece = atom();
    piece = quantified(piece);
    if (!out.empty()) out += " ";
    out += piece;
  }
  if (top_level && at(')')) fail("unbalanced ')'");
  return out;
}

std::string RegexParser::quantified(std::string piece) {
  while (pos_ < re_.size()) {
    char c = re_[pos_];
    std::string q;
    if (c == '*' || c == '+' || c == '?') {
      ++pos_;
      q = std::string(1, c);
    } else if (c == '{') {
      size_t save = pos_;
      if (!bounded_repeat(q)) {
        pos_ = save;  // Python reads a '{' that opens no valid {m,n} as a literal
        break;
      }
    } else {
      break;
    }
    // A lazy quantifier matches the same set of whole strings; a possessive one does not.
    if (eat('+')) fail("possessive quantifiers are not supported");
    eat('?');
    piece = (simple_atom_ ? piece : "(" + piece + ")") + q;
    simple_atom_ = false;
    if (pos_ < re_.size() && (re_[pos_] == '*' || re_[pos_] == '+' || re_[pos_] == '?')) {
      fail("multiple repeat");
    }
  }
  return piece;
}

bool RegexParser::read_number(long& out) {
  size_t start = pos_;
  out = 0;
  while (pos_ < re_.size() && re_[pos_] >= '0' && re_[pos_] <= '9') {
    out = out * 10 + (re_[pos_] - '0');
    if (out > 100000) fail("repetition count too large");
    ++pos_;
  }
  return pos_ > start;
}

bool RegexParser::bounded_repeat(std::string& q) {
  ++pos_;  // '{'
  long lo = 0, hi = -1;
  bool has_lo = read_number(lo);
  if (eat('}')) {
    if (!has_lo) return false;
    q = "{" + std::to_string(lo) + "}";
    return true;
  }
  if (!eat(',')) return false;
  bool has_hi = read_number(hi);
  if (!eat('}')) return false;
  if (!has_lo && !has_hi) return false;
  if (!has_lo) lo = 0;  // Python: {,n} is {0,n}
  if (has_hi && hi < lo) fail("repetition {m,n} with n < m");
  q = "{" + std::to_string(lo) + "," + (has_hi ? std::to_string(hi) : "") + "}";
  return true;
}

std::string RegexParser::atom() {
  char c = re_[pos_];
  if (c == '*' || c == '+' || c == '?') fail("nothing to repeat");
  if (c == '(') {
    std::string inner = group();
    simple_atom_ = false;  // whatever the group's last atom was
    return inner;
  }
  if (c == '[') return chars(char_class());
  if (c == '.') {
    ++pos_;
    CharSet s = CharSet::all().minus(CharSet::single('\n'));
    return chars(s);
  }
  if (c == '\\') {
    CharSet s = escape(/*in_class=*/false);
    return chars(s);
  }
  uint32_t cp = code_point();
  return chars(CharSet::single(cp));
}

std::string RegexParser::group() {
  ++pos_;  // '('
  if (eat('?')) {
    if (eat(':')) {
    } else if (at('P') && pos_ + 1 < re_.size() && re_[pos_ + 1] == '<') {
      pos_ += 2;
      group_name();
    } else if (at('<') && pos_ + 1 < re_.size() && re_[pos_ + 1] != '=' && re_[pos_ + 1] != '!') {
      ++pos_;
      group_name();
    } else if (at('=') || at('!') || at('<')) {
      fail("lookaround assertions are not supported");
    } else if (at('P')) {
      fail("backreferences are not supported");
    } else {
      fail("inline flags and other (?...) groups are not supported");
    }
  }
  std::string inner = alternation();
  if (!eat(')')) fail("missing ')'");
  return inner;
}

void RegexParser::group_name() {
  while (pos_ < re_.size() && re_[pos_] != '>') ++pos_;
  if (!eat('>')) fail("unterminated group name");
}

}  // namespace ps::regex_detail

namespace ps {
namespace {

std::string json_escape_literal(uint32_t c) {
  switch (c) {
    case '"':
      return "\"\\\\\\\"\"";  // GBNF "\\\"" : the two characters \"
    case '\\':
      return "\"\\\\\\\\\"";  // \\ .
    case '\n':
      return "\"\\\\n\"";
    case '\r':
      return "\"\\\\r\"";
    case '\t':
      return "\"\\\\t\"";
    case '\b':
      return "\"\\\\b\"";
    case '\f':
      return "\"\\\\f\"";
    default:
      return "";  // other control characters: left out (the grammar may be narrower, never wider)
  }
}

}  // namespace

std::string json_string_chars(const CharSet& set) {
  if (set.empty()) throw std::invalid_argument("empty character set");
  CharSet special = CharSet::range(0, 0x1F);
  special.add('"', '"');
  special.add('\\', '\\');
  CharSet raw = set.minus(special);
  std::vector<std::string> alts;
  if (!raw.empty()) alts.push_back(raw.to_gbnf());
  CharSet escaped = set.intersect(special);
  for (const auto& [lo, hi] : escaped.ranges()) {
    for (uint32_t c = lo; c <= hi; ++c) {
      std::string lit = json_escape_literal(c);
      if (!lit.empty()) alts.push_back(lit);
    }
  }
  if (alts.empty()) throw std::invalid_argument("only control characters JSON cannot write raw");
  if (alts.size() == 1) return alts[0];
  std::string out = "(";
  for (size_t i = 0; i < alts.size(); ++i) out += (i ? " | " : "") + alts[i];
  return out + ")";
}

std::string regex_expression(std::string_view regex, RegexTarget target, const std::string& param,
                             const std::string& any_chars_rule) {
  return regex_detail::RegexParser(regex, target, param, any_chars_rule).parse();
}

std::string regex_to_gbnf(std::string_view regex, const std::string& root_rule) {
  GbnfRules rules(root_rule);
  rules.define_root(regex_expression(regex, RegexTarget::kRawText, "regex", ""));
  return rules.text();
}

}  // namespace ps
