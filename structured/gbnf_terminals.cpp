// The terminals of GBNF text (gbnf_parser_internal.h's Parser): string literals, character
// classes, escapes and the UTF-8 they are written in. Split from gbnf_parser.cpp, which reads the
// structure around them (rules, alternatives, groups, repetitions).

#include <string>
#include <vector>

#include "structured/codepoint_class.h"
#include "structured/gbnf_parser_internal.h"
#include "structured/gbnf_text.h"

namespace ps::gbnf_detail {

GrammarElement Parser::class_element(std::vector<CodepointRange> ranges) {
  g_.classes.push_back(std::move(ranges));
  return GrammarElement{GrammarElement::Kind::kClass, static_cast<uint32_t>(g_.classes.size() - 1)};
}

// One code point of the text (UTF-8), or an escape. `in_class` allows the class escapes.
uint32_t Parser::parse_char(bool in_class) {
  size_t at = pos_;
  unsigned char c = static_cast<unsigned char>(peek());
  if (c == '\\') {
    ++pos_;
    char e = peek();
    ++pos_;
    switch (e) {
      case 'n':
        return '\n';
      case 'r':
        return '\r';
      case 't':
        return '\t';
      case '"':
        return '"';
      case '\\':
        return '\\';
      case '\'':
        return '\'';
      case 'x':
        return parse_hex(2, at);
      case 'u':
        return parse_hex(4, at);
      case 'U':
        return parse_hex(8, at);
      case ']':
      case '[':
      case '-':
      case '^':
      case '/':
        if (in_class) return static_cast<unsigned char>(e);
        break;
      default:
        break;
    }
    fail_at(at, std::string("unknown escape '\\") + (e ? std::string(1, e) : "") + "'");
  }
  size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (len == 0 || pos_ + len > text_.size()) fail("invalid UTF-8 in grammar text");
  uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
  for (size_t i = 1; i < len; ++i) {
    unsigned char k = static_cast<unsigned char>(text_[pos_ + i]);
    if ((k & 0xC0) != 0x80) fail("invalid UTF-8 in grammar text");
    cp = (cp << 6) | (k & 0x3F);
  }
  pos_ += len;
  return cp;
}

uint32_t Parser::parse_hex(int digits, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < digits; ++i) {
    char h = peek();
    int d = (h >= '0' && h <= '9')   ? h - '0'
            : (h >= 'a' && h <= 'f') ? h - 'a' + 10
            : (h >= 'A' && h <= 'F') ? h - 'A' + 10
                                     : -1;
    if (d < 0) fail_at(at, "escape needs " + std::to_string(digits) + " hex digits");
    v = v * 16 + static_cast<uint32_t>(d);
    ++pos_;
  }
  if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
    fail_at(at, "escape is not a Unicode scalar value");
  }
  return v;
}

GrammarSequence Parser::parse_literal() {
  size_t at = pos_;
  ++pos_;  // opening quote
  std::string utf8;
  GrammarSequence seq;
  while (!at_end() && peek() != '"') {
    if (peek() == '\n') fail_at(at, "string literal is not closed before the end of the line");
    uint32_t cp = parse_char(/*in_class=*/false);
    utf8 += encode_utf8(cp);
    seq.push_back(class_element({CodepointRange{cp, cp}}));
  }
  if (at_end()) fail_at(at, "string literal is never closed");
  ++pos_;
  count_elements(seq.size(), at);
  g_.literals.push_back(std::move(utf8));
  return seq;
}

std::vector<CodepointRange> Parser::parse_class() {
  size_t at = pos_;
  ++pos_;  // '['
  bool negated = false;
  if (peek() == '^') {
    negated = true;
    ++pos_;
  }
  std::vector<CodepointRange> ranges;
  while (!at_end() && peek() != ']') {
    if (peek() == '\n') fail_at(at, "character class is not closed before the end of the line");
    uint32_t lo = parse_char(/*in_class=*/true);
    uint32_t hi = lo;
    if (peek() == '-' && peek(1) != ']' && pos_ + 1 < text_.size()) {
      ++pos_;
      hi = parse_char(/*in_class=*/true);
      if (hi < lo) fail_at(at, "character class range is reversed");
    }
    ranges.push_back({lo, hi});
  }
  if (at_end()) fail_at(at, "character class is never closed");
  ++pos_;
  count_elements(1, at);
  return negated ? complement_class(normalize_class(ranges)) : normalize_class(ranges);
}

}  // namespace ps::gbnf_detail
