#pragma once
// JSON's four whitespace bytes (RFC 8259), which the tool-call and reasoning parsers skip between
// a model's tags and the JSON they wrap. (The Jinja lexer's whitespace is Python's, wider.)
namespace ps::chat {

inline bool is_json_whitespace(char c) {
  return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

}  // namespace ps::chat
