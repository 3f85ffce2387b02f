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

namespace ps {
namespace {

CharSet ascii() {
  return CharSet::range(0, 0x7F);
}
CharSet digits() {
  return CharSet::range('0', '9');
}
CharSet word() {
  CharSet s = CharSet::range('a', 'z');
  s.add('A', 'Z');
  s.add('0', '9');
  s.add('_', '_');
  return s;
}
CharSet ascii_space() {
  CharSet s = CharSet::range('\t', '\r');  // \t \n \v \f \r
  s.add(' ', ' ');
  return s;
}
// Python's str.isspace() set, which `\s` matches without re.ASCII: \S must avoid all of it.
CharSet unicode_space() {
  CharSet s = ascii_space();
  s.add(0x1C, 0x1F);
  for (uint32_t c : {0x85u, 0xA0u, 0x1680u, 0x2028u, 0x2029u, 0x202Fu, 0x205Fu, 0x3000u}) {
    s.add(c, c);
  }
  s.add(0x2000, 0x200A);
  return s;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class RegexParser {
 public:
  RegexParser(std::string_view re, RegexTarget target, std::string param, std::string any_chars)
      : re_(re), target_(target), param_(std::move(param)), any_chars_(std::move(any_chars)) {}

  std::string parse() {
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

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw StructuredError(
        "regex " + quoted() + ": " + what + " at position " + std::to_string(pos_), param_);
  }
  std::string quoted() const { return "'" + std::string(re_) + "'"; }

  bool eat(char c) {
    if (pos_ < re_.size() && re_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool at(char c) const { return pos_ < re_.size() && re_[pos_] == c; }

  static std::string join_alternatives(const std::vector<std::string>& alts) {
    if (alts.size() == 1) return alts[0].empty() ? "\"\"" : "(" + alts[0] + ")";
    std::string out = "(";
    for (size_t i = 0; i < alts.size(); ++i) {
      if (i) out += " | ";
      out += alts[i].empty() ? "\"\"" : alts[i];
    }
    return out + ")";
  }

  std::string alternation() {
    std::vector<std::string> alts{concat(false)};
    while (eat('|')) alts.push_back(concat(false));
    return join_alternatives(alts);
  }

  // Pieces up to '|' or ')' (or, at top level, a final '$').
  std::string concat(bool top_level) {
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

  std::string quantified(std::string piece) {
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

  bool read_number(long& out) {
    size_t start = pos_;
    out = 0;
    while (pos_ < re_.size() && re_[pos_] >= '0' && re_[pos_] <= '9') {
      out = out * 10 + (re_[pos_] - '0');
      if (out > 100000) fail("repetition count too large");
      ++pos_;
    }
    return pos_ > start;
  }

  bool bounded_repeat(std::string& q) {
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

  std::string chars(const CharSet& set) {
    if (set.empty()) fail("a class that matches nothing");
    if (target_ == RegexTarget::kRawText) {
      simple_atom_ = true;
      return set.to_gbnf();
    }
    try {
      std::string out = json_string_chars(set);
      simple_atom_ = out[0] != '(';
      return out;
    } catch (const std::invalid_argument&) {
      fail("a class of control characters only (not supported inside JSON strings)");
    }
  }

  std::string atom() {
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

  uint32_t code_point() {
    try {
      return decode_utf8(re_, pos_);
    } catch (const std::invalid_argument&) {
      fail("invalid UTF-8");
    }
  }

  std::string group() {
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

  void group_name() {
    while (pos_ < re_.size() && re_[pos_] != '>') ++pos_;
    if (!eat('>')) fail("unterminated group name");
  }

  // After '\'. Shorthand classes come back as sets; `negatable` tracks whether Python's wider
  // Unicode meaning would make a complement unsound.
  CharSet escape(bool in_class, bool* unicode_sensitive = nullptr) {
    ++pos_;  // '\'
    if (pos_ >= re_.size()) fail("trailing backslash");
    char c = re_[pos_++];
    auto sensitive = [&] {
      if (unicode_sensitive) *unicode_sensitive = true;
    };
    switch (c) {
      case 'd':
        sensitive();
        return digits();
      case 'w':
        sensitive();
        return word();
      case 's':
        return in_class && unicode_sensitive ? unicode_space() : ascii_space();
      case 'D':
        return ascii().minus(digits());
      case 'W':
        return ascii().minus(word());
      case 'S':
        return CharSet::all().minus(unicode_space());
      case 'n':
        return CharSet::single('\n');
      case 'r':
        return CharSet::single('\r');
      case 't':
        return CharSet::single('\t');
      case 'f':
        return CharSet::single('\f');
      case 'v':
        return CharSet::single('\v');
      case 'a':
        return CharSet::single(7);
      case '0':
        return CharSet::single(0);
      case 'x':
        return CharSet::single(hex_digits(2));
      case 'u':
        return CharSet::single(hex_digits(4));
      case 'U':
        return CharSet::single(hex_digits(8));
      case 'b':
        if (in_class) return CharSet::single(8);
        --pos_;
        fail("word boundaries (\\b) are not supported");
      default:
        break;
    }
    --pos_;
    if (c >= '1' && c <= '9') fail("backreferences are not supported");
    if (c == 'k') fail("backreferences are not supported");
    if (c == 'p' || c == 'P') fail("Unicode property classes (\\p) are not supported");
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      fail(std::string("the escape \\") + c + " is not supported");
    }
    return CharSet::single(code_point());
  }

  uint32_t hex_digits(int n) {
    uint32_t v = 0;
    for (int i = 0; i < n; ++i) {
      int h = pos_ < re_.size() ? hex_value(re_[pos_]) : -1;
      if (h < 0) fail("bad hexadecimal escape");
      v = v * 16 + h;
      ++pos_;
    }
    if (v > kMaxCodePoint || (v >= 0xD800 && v <= 0xDFFF)) fail("escape names no character");
    return v;
  }

  CharSet char_class() {
    ++pos_;  // '['
    bool negated = eat('^');
    bool sensitive = false;
    CharSet set;
    bool first = true;
    while (true) {
      if (pos_ >= re_.size()) fail("missing ']'");
      if (at(']') && !first) {
        ++pos_;
        break;
      }
      first = false;
      bool lo_is_set = false;
      CharSet lo_set = class_member(&sensitive, &lo_is_set);
      // A range a-b; '-' before ']' is a literal.
      if (!lo_is_set && at('-') && pos_ + 1 < re_.size() && re_[pos_ + 1] != ']') {
        ++pos_;
        bool hi_is_set = false;
        CharSet hi_set = class_member(&sensitive, &hi_is_set);
        if (hi_is_set) fail("a range ends in a class shorthand");
        uint32_t lo = lo_set.ranges()[0].first, hi = hi_set.ranges()[0].first;
        if (hi < lo) fail("bad character range");
        set.add(lo, hi);
      } else {
        set.add(lo_set);
      }
    }
    if (!negated) return set;
    CharSet out = CharSet::all().minus(set);
    return sensitive ? out.intersect(ascii()) : out;
  }

  CharSet class_member(bool* sensitive, bool* is_set) {
    if (at('\\')) {
      char next = pos_ + 1 < re_.size() ? re_[pos_ + 1] : 0;
      *is_set =
          next == 'd' || next == 'w' || next == 's' || next == 'D' || next == 'W' || next == 'S';
      return escape(/*in_class=*/true, sensitive);
    }
    if (at('[') && pos_ + 1 < re_.size() && (re_[pos_ + 1] == ':' || re_[pos_ + 1] == '=')) {
      fail("POSIX classes are not supported");
    }
    return CharSet::single(code_point());
  }

  std::string_view re_;
  RegexTarget target_;
  std::string param_;
  std::string any_chars_;
  size_t pos_ = 0;
  // The last atom was one class or one character: it repeats without a group around it (a
  // group becomes a rule of its own, which makes the matcher's token masks slower).
  bool simple_atom_ = false;
};

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
  return RegexParser(regex, target, param, any_chars_rule).parse();
}

std::string regex_to_gbnf(std::string_view regex, const std::string& root_rule) {
  GbnfRules rules(root_rule);
  rules.define_root(regex_expression(regex, RegexTarget::kRawText, "regex", ""));
  return rules.text();
}

}  // namespace ps
