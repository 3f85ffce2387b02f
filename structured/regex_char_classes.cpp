// What one character of the regex subset stands for (regex_parser_internal.h's RegexParser):
// escapes, the shorthand classes (\d \w \s and their complements), [...] classes, and a set
// written as GBNF for the target. Split from regex_to_gbnf.cpp, which reads the structure around
// them. The ASCII-only meanings are the soundness rule of regex_to_gbnf.cpp's opening comment.

#include <cstdint>
#include <stdexcept>
#include <string>

#include "structured/gbnf_text.h"
#include "structured/json_schema_to_gbnf.h"
#include "structured/regex_parser_internal.h"

namespace ps::regex_detail {
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

}  // namespace

std::string RegexParser::chars(const CharSet& set) {
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

uint32_t RegexParser::code_point() {
  try {
    return decode_utf8(re_, pos_);
  } catch (const std::invalid_argument&) {
    fail("invalid UTF-8");
  }
}

CharSet RegexParser::escape(bool in_class, bool* unicode_sensitive) {
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

uint32_t RegexParser::hex_digits(int n) {
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

CharSet RegexParser::char_class() {
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

CharSet RegexParser::class_member(bool* sensitive, bool* is_set) {
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

}  // namespace ps::regex_detail
