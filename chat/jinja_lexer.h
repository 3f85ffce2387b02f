#pragma once
// Splits a template into text and tag tokens, applying Jinja2's whitespace control where
// Jinja2 does it (in the lexer): `{%-`/`-%}` strip all whitespace on that side, trim_blocks
// drops the newline after a block or comment tag, lstrip_blocks drops the indentation before
// one, `+` opts a tag out. Comments vanish here; `{% raw %}` becomes text.
#include <stdexcept>
#include <string>
#include <vector>

namespace ps::jinja {

// Every error a template causes: bad syntax at parse time, a failure at render time, or the
// template's own raise_exception(). what() starts with the position: "line 3, column 7: ...".
class TemplateError : public std::runtime_error {
 public:
  TemplateError(int line, int column, const std::string& message);
  int line() const { return line_; }
  int column() const { return column_; }
  // The message without the position prefix (what raise_exception was given, for example).
  const std::string& message() const { return message_; }

 private:
  int line_;
  int column_;
  std::string message_;
};

struct LexOptions {
  bool trim_blocks = true;
  bool lstrip_blocks = true;
  bool keep_trailing_newline = false;
};

enum class TokenType {
  kData,
  kVariableBegin,
  kVariableEnd,
  kBlockBegin,
  kBlockEnd,
  kName,
  kString,
  kInteger,
  kFloat,
  kOperator,
  kEnd,
};

struct Token {
  TokenType type;
  std::string text;  // data text, name, decoded string literal, number digits, or operator
  int line;
  int column;
};

std::vector<Token> tokenize(const std::string& source, const LexOptions& options);

}  // namespace ps::jinja
