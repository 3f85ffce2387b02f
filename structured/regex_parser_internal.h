#pragma once
// The regex parser behind regex_expression() (regex_gbnf.h), shared by its two files:
// regex_to_gbnf.cpp reads the structure (alternatives, concatenation, quantifiers, groups) and
// regex_char_classes.cpp what one character stands for (escapes, shorthand classes, [...]
// classes, and how a set is written for the target). Internal to structured/: include
// regex_gbnf.h instead.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "structured/char_set.h"
#include "structured/constraint_spec.h"
#include "structured/regex_gbnf.h"

namespace ps::regex_detail {

class RegexParser {
 public:
  RegexParser(std::string_view re, RegexTarget target, std::string param, std::string any_chars)
      : re_(re), target_(target), param_(std::move(param)), any_chars_(std::move(any_chars)) {}

  std::string parse();

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

  // The structure (regex_to_gbnf.cpp).
  static std::string join_alternatives(const std::vector<std::string>& alts);
  std::string alternation();
  // Pieces up to '|' or ')' (or, at top level, a final '$').
  std::string concat(bool top_level);
  std::string quantified(std::string piece);
  bool read_number(long& out);
  bool bounded_repeat(std::string& q);
  std::string atom();
  std::string group();
  void group_name();

  // Characters and classes (regex_char_classes.cpp).
  std::string chars(const CharSet& set);
  uint32_t code_point();
  // After '\'. Shorthand classes come back as sets; `negatable` tracks whether Python's wider
  // Unicode meaning would make a complement unsound.
  CharSet escape(bool in_class, bool* unicode_sensitive = nullptr);
  uint32_t hex_digits(int n);
  CharSet char_class();
  CharSet class_member(bool* sensitive, bool* is_set);

  std::string_view re_;
  RegexTarget target_;
  std::string param_;
  std::string any_chars_;
  size_t pos_ = 0;
  // The last atom was one class or one character: it repeats without a group around it (a
  // group becomes a rule of its own, which makes the matcher's token masks slower).
  bool simple_atom_ = false;
};

}  // namespace ps::regex_detail
